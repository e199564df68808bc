package stats

import (
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram units. Every metric is recorded as an integer in thousandths of its display unit:
// microseconds for millisecond figures, milli-tokens/s for rates, thousandths for ratios
// (tokens/chunk). With 3 significant digits HdrHistogram then resolves 0.001 ms (1 µs) and
// 0.001 tok/s exactly below 2.048 (ms or tok/s) and to 0.1 % of the value above, which is
// finer than 0.01 ms and 0.01 tok/s wherever those matter. The largest trackable value,
// 3.6e9, is one hour in µs or 3.6 M tok/s; larger values are clamped into the top bucket,
// and Min, Max and Mean are kept exactly beside the histogram, so they never are.
const (
	unitScale  = 1000
	histLowest = 1
	histMax    = 3_600_000_000
	histDigits = 3
)

// series is one metric's distribution: an HdrHistogram for the quantiles plus the exact
// count, sum, min and max. PackedHistogram keeps memory proportional to the populated
// buckets, which matters with 60 one-second slots per metric per endpoint.
type series struct {
	h        *hdr.PackedHistogram
	n        int64
	sum      float64
	min, max float64
}

func newSeries() series { return series{h: hdr.NewPacked(histLowest, histMax, histDigits)} }

// record adds v in display units (ms, tok/s, ratio). Negative or NaN values, which only a
// malformed Sample can produce, are recorded as 0 rather than dropped, so counts stay honest.
func (s *series) record(v float64) {
	if !(v >= 0) {
		v = 0
	}
	iv := int64(math.Min(math.Round(v*unitScale), histMax))
	_ = s.h.RecordValue(iv) // cannot fail: 0 ≤ iv ≤ histMax
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	s.sum += v
}

func (s *series) recordDur(d time.Duration) { s.record(ms(d)) }

// Add is record, for the registered metrics' readers (metric.Adder).
func (s *series) Add(v float64) { s.record(v) }

func (s *series) reset() {
	s.h.Reset()
	s.n, s.sum, s.min, s.max = 0, 0, 0, 0
}

// merge adds o into s (used to combine the one-second slots of the recent window).
func (s *series) merge(o *series) {
	if o.n == 0 {
		return
	}
	s.h.Merge(o.h)
	if s.n == 0 || o.min < s.min {
		s.min = o.min
	}
	if s.n == 0 || o.max > s.max {
		s.max = o.max
	}
	s.n += o.n
	s.sum += o.sum
}

// dist summarises s. Quantiles are HdrHistogram's (the highest value equivalent to the
// bucket holding the rank), clamped into the exact [Min, Max] so that a single value reads
// back exactly.
func (s *series) dist() Dist {
	if s.n == 0 {
		return Dist{}
	}
	q := func(p float64) float64 {
		v := float64(s.h.ValueAtPercentile(p)) / unitScale
		return math.Min(math.Max(v, s.min), s.max)
	}
	return Dist{
		Count: int(s.n),
		P10:   q(10), P50: q(50), P90: q(90), P95: q(95), P99: q(99),
		Mean: s.sum / float64(s.n),
		Min:  s.min,
		Max:  s.max,
	}
}

// whole rounds the quantiles of a distribution of whole numbers (token counts) to the nearest
// whole number; HdrHistogram's bucket is at most 0.1 % wide, so that is the value itself
// below 500 and within one above. Mean, Min and Max are exact already.
func (d Dist) whole() Dist {
	for _, q := range []*float64{&d.P10, &d.P50, &d.P90, &d.P95, &d.P99} {
		*q = math.Round(*q)
	}
	return d
}

// ms converts a duration to (fractional) milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
