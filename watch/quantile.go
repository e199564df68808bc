package watch

import (
	"math"
	"sort"
)

// Hist is one histogram of a server at one scrape, summed over the series that belong to one
// row (a model's engines, say), as PromQL's sum by (le) does. Bounds are the finite upper
// bounds, ascending; Cum[i] the cumulative count of observations ≤ Bounds[i]; Count the
// total (the +Inf bucket) and Sum the sum of the observed values.
type Hist struct {
	Bounds []float64 `json:"le"`
	Cum    []float64 `json:"cum"`
	Count  float64   `json:"count"`
	Sum    float64   `json:"sum"`
}

// Minus is what was observed between an earlier scrape of the same histogram and this one:
// each cumulative count minus the earlier one. ok is false when the two have different
// buckets or any count went back (the server restarted): there is then no difference to take.
func (h Hist) Minus(earlier Hist) (d Hist, ok bool) {
	if len(h.Bounds) != len(earlier.Bounds) || h.Count < earlier.Count {
		return Hist{}, false
	}
	d = Hist{Bounds: h.Bounds, Cum: make([]float64, len(h.Cum)), Count: h.Count - earlier.Count, Sum: h.Sum - earlier.Sum}
	for i := range h.Bounds {
		if h.Bounds[i] != earlier.Bounds[i] || h.Cum[i] < earlier.Cum[i] {
			return Hist{}, false
		}
		d.Cum[i] = h.Cum[i] - earlier.Cum[i]
	}
	return d, true
}

// add sums two histograms with the same buckets (two series of one family); ok is false
// when their buckets differ.
func (h Hist) add(o Hist) (Hist, bool) {
	if h.Bounds == nil {
		return o, true
	}
	if len(h.Bounds) != len(o.Bounds) {
		return h, false
	}
	s := Hist{Bounds: h.Bounds, Cum: make([]float64, len(h.Cum)), Count: h.Count + o.Count, Sum: h.Sum + o.Sum}
	for i := range h.Bounds {
		if h.Bounds[i] != o.Bounds[i] {
			return h, false
		}
		s.Cum[i] = h.Cum[i] + o.Cum[i]
	}
	return s, true
}

// Quantile estimates the q-quantile (0–1) of the observations in h as Prometheus'
// histogram_quantile does (promql/quantile.go, bucketQuantile): the rank q·count falls in
// some bucket, and the estimate is interpolated linearly between that bucket's lower and
// upper bound, as if its observations were spread evenly. The lowest bucket starts at 0
// (when its upper bound is positive); a rank in the +Inf bucket gives the highest finite
// bound. ok is false with no observations or no finite bucket: no estimate, never 0.
func (h Hist) Quantile(q float64) (float64, bool) {
	if h.Count <= 0 || len(h.Bounds) == 0 || math.IsNaN(q) {
		return 0, false
	}
	if q < 0 || q > 1 {
		return 0, false
	}
	// The buckets as Prometheus sees them: the finite ones, then +Inf holding Count.
	upper := append(append([]float64(nil), h.Bounds...), math.Inf(1))
	cum := append(append([]float64(nil), h.Cum...), h.Count)
	monotonic(cum)
	rank := q * h.Count
	b := sort.Search(len(cum)-1, func(i int) bool { return cum[i] >= rank })
	if b == len(upper)-1 {
		return upper[len(upper)-2], true
	}
	if b == 0 && upper[0] <= 0 {
		return upper[0], true
	}
	start, below := 0.0, 0.0
	if b > 0 {
		start, below = upper[b-1], cum[b-1]
	}
	inBucket := cum[b] - below
	if inBucket == 0 { // only reachable when rank is 0 and the bucket is empty
		return start, true
	}
	return start + (upper[b]-start)*((rank-below)/inBucket), true
}

// monotonic makes cumulative counts non-decreasing, as Prometheus' ensureMonotonic does: a
// scrape that caught the buckets mid-update can have a count lower than the one below it.
func monotonic(cum []float64) {
	top := math.Inf(-1)
	for i := range cum {
		if cum[i] > top {
			top = cum[i]
		} else {
			cum[i] = top
		}
	}
}
