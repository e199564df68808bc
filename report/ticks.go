package report

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// niceTicks labels about five round values (steps of 1, 2 or 5 × 10ⁿ) with as few decimals
// as the step needs, where gonum's default labels only some of its ticks and may switch to
// exponents.
type niceTicks struct{ integer bool } // integer: counts, never a fractional tick

func (n niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: formatTick(lo, 0)}}
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if n.integer {
		step = math.Max(1, math.Round(step))
	}
	decimals := 0
	for decimals < 9 && math.Abs(step*math.Pow(10, float64(decimals))-math.Round(step*math.Pow(10, float64(decimals)))) > 1e-6 {
		decimals++
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: formatTick(v, decimals)})
		if minor := v + step/2; minor < hi && !(n.integer && step == 1) {
			ticks = append(ticks, plot.Tick{Value: minor})
		}
	}
	return ticks
}

func formatTick(v float64, decimals int) string {
	if math.Abs(v) < 1e-12 {
		v = 0
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// logTicks labels 1, 2 and 5 × 10ⁿ on a log axis (only 1 × 10ⁿ over wide ranges).
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 {
		lo = histLowMS
	}
	mults := []float64{1, 2, 5}
	if hi/lo > 1e4 {
		mults = []float64{1}
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for _, m := range mults {
			v := m * p
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		}
	}
	return ticks
}
