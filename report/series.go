package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Aggregation rules that keep a report small however long the run (DESIGN: 10,000 requests
// under 5 MB): a time series has at most maxBins points per endpoint (seconds grouped into
// wider bins when the run is long); a per-request scatter keeps every point up to
// maxScatter per endpoint, else becomes the median and p10–p90 band of each bin; a CDF is
// drawn through at most cdfPoints quantiles.
const (
	maxBins    = 300
	maxScatter = 1500
	cdfPoints  = 200
)

// binWidths are the widths a time series' bins may take, in seconds.
var binWidths = []int64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400}

// timeAxis maps the run's wall-clock span onto the X axis of the time series: seconds (or
// minutes, for runs over 20 minutes) since the first request's t0, in bins of width seconds
// aligned on whole Unix seconds.
type timeAxis struct {
	first, last int64 // Unix ns
	firstSec    int64 // Unix second of first
	width       int64 // bin width, s
	bins        int
	perMinute   bool
}

func newTimeAxis(first, last int64) timeAxis {
	a := timeAxis{first: first, last: last, firstSec: floorDiv(first, int64(time.Second))}
	lastSec := floorDiv(last, int64(time.Second))
	span := lastSec - a.firstSec + 1
	a.width = binWidths[len(binWidths)-1]
	for _, w := range binWidths {
		if (span+w-1)/w <= maxBins {
			a.width = w
			break
		}
	}
	a.bins = int((span + a.width - 1) / a.width)
	a.perMinute = time.Duration(last-first) > 20*time.Minute
	return a
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// bin is the bin holding the Unix second sec, or -1 outside the run.
func (a *timeAxis) bin(sec int64) int {
	i := (sec - a.firstSec) / a.width
	if sec < a.firstSec || i >= int64(a.bins) {
		return -1
	}
	return int(i)
}

// binSpan is the part of bin i the run covers, Unix ns.
func (a *timeAxis) binSpan(i int) (lo, hi int64) {
	lo = (a.firstSec + int64(i)*a.width) * int64(time.Second)
	hi = lo + a.width*int64(time.Second)
	return max(lo, a.first), min(hi, a.last)
}

// x is the X coordinate of Unix ns t.
func (a *timeAxis) x(t int64) float64 {
	s := float64(t-a.first) / float64(time.Second)
	if a.perMinute {
		return s / 60
	}
	return s
}

// binX is the X coordinate of bin i's middle (of its covered part).
func (a *timeAxis) binX(i int) float64 {
	lo, hi := a.binSpan(i)
	return a.x(lo + (hi-lo)/2)
}

// usable reports whether bin i covers enough of its width for a rate over it to mean
// something: the first and last bins of a run are partial, and a rate over a sliver of a
// second is noise.
func (a *timeAxis) usable(i int) bool {
	lo, hi := a.binSpan(i)
	return hi-lo >= a.width*int64(time.Second)/2 || a.bins == 1 && hi > lo
}

func (a *timeAxis) label() string {
	if a.perMinute {
		return "time since start (min)"
	}
	return "time since start (s)"
}

// per is "per second" or "per N s bin", for captions.
func (a *timeAxis) per() string {
	if a.width == 1 {
		return "per second"
	}
	return fmt.Sprintf("per %s", time.Duration(a.width)*time.Second)
}

// quantile is the q-quantile (0–1) of sorted values, by the nearest-rank rule.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// cdf returns at most cdfPoints points (value, fraction ≤ value) of values' empirical CDF.
func cdf(values []float64) (xs, ys []float64) {
	v := slices.Clone(values)
	slices.Sort(v)
	n := len(v)
	if n == 0 {
		return nil, nil
	}
	if n <= cdfPoints {
		for i, x := range v {
			xs, ys = append(xs, x), append(ys, float64(i+1)/float64(n))
		}
		return xs, ys
	}
	for k := 0; k <= cdfPoints; k++ {
		q := float64(k) / cdfPoints
		i := min(int(math.Round(q*float64(n-1))), n-1)
		xs, ys = append(xs, v[i]), append(ys, float64(i+1)/float64(n))
	}
	return xs, ys
}

// histogramCDF is a logHistogram's CDF at each populated bin's upper edge.
func histogramCDF(h *logHistogram) (xs, ys []float64) {
	total := h.total()
	if total == 0 {
		return nil, nil
	}
	var run int64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		run += c
		xs, ys = append(xs, h.upper(i)), append(ys, float64(run)/float64(total))
	}
	return xs, ys
}

// point is one per-request value at an X position (t0 for time, prompt tokens, …).
type point struct{ x, y float64 }

// scatterOrBand draws points as they are when there are few, else as the median and the
// p10–p90 band of the points in each of at most maxBins equal slices of the X range. It
// reports whether it aggregated.
func scatterOrBand(ep int, pts []point) ([]layer, bool) {
	if len(pts) == 0 {
		return nil, false
	}
	slices.SortFunc(pts, func(a, b point) int {
		if c := cmp.Compare(a.x, b.x); c != 0 {
			return c
		}
		return cmp.Compare(a.y, b.y)
	})
	if len(pts) <= maxScatter {
		l := layer{ep: ep, kind: drawPoints}
		for _, p := range pts {
			l.xs, l.ys = append(l.xs, p.x), append(l.ys, p.y)
		}
		return []layer{l}, false
	}
	lo, hi := pts[0].x, pts[len(pts)-1].x
	bins := min(maxBins, 100)
	width := (hi - lo) / float64(bins)
	if width <= 0 {
		width, bins = 1, 1
	}
	groups := make([][]float64, bins)
	for _, p := range pts {
		i := min(int((p.x-lo)/width), bins-1)
		groups[i] = append(groups[i], p.y)
	}
	med := layer{ep: ep, kind: drawLine}
	band := layer{ep: ep, kind: drawBand}
	for i, g := range groups {
		if len(g) == 0 {
			continue
		}
		slices.Sort(g)
		x := lo + (float64(i)+0.5)*width
		med.xs, med.ys = append(med.xs, x), append(med.ys, quantile(g, 0.5))
		band.xs = append(band.xs, x)
		band.lo, band.hi = append(band.lo, quantile(g, 0.1)), append(band.hi, quantile(g, 0.9))
	}
	band.ys = band.lo
	return []layer{band, med}, true
}
