package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// BootstrapMedianDiff compares two sets of per-request values (e.g. EndpointStats.LastTTFT of
// two endpoints): diff is median(a) − median(b), and [lo, hi] its 95 % percentile-bootstrap
// confidence interval from iters resamples of each set drawn with rng. An interval that
// excludes 0 means the difference is unlikely to be noise. ok is false, with zeros, when a
// set is empty or iters < 1. a and b are not modified. rng nil uses a fixed seed, so that
// the same inputs always give the same interval.
func BootstrapMedianDiff(a, b []float64, iters int, rng *rand.Rand) (diff, lo, hi float64, ok bool) {
	if len(a) == 0 || len(b) == 0 || iters < 1 {
		return 0, 0, 0, false
	}
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 2))
	}
	ra, rb := newResampler(a), newResampler(b)
	diff = ra.median() - rb.median()

	diffs := make([]float64, iters)
	for i := range diffs {
		ma := ra.resampleMedian(rng)
		diffs[i] = ma - rb.resampleMedian(rng)
	}
	slices.Sort(diffs)
	return diff, quantile(diffs, 0.025), quantile(diffs, 0.975), true
}

// resampler draws bootstrap resamples of one set and returns their medians in O(n) each,
// without sorting: a draw of index j counts one more copy of v's rank[j]-th smallest value, and
// the median is found by walking the counts. The draws (one rng.IntN(n) per element, in
// order) are those of the plain resample-and-sort method, so the result is the same.
type resampler struct {
	sorted []float64 // the values, ascending
	rank   []int     // rank[j]: position of v[j] in sorted
	counts []int
}

func newResampler(v []float64) *resampler {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int {
		switch {
		case v[x] < v[y]:
			return -1
		case v[x] > v[y]:
			return 1
		}
		return 0
	})
	r := &resampler{sorted: make([]float64, len(v)), rank: make([]int, len(v)), counts: make([]int, len(v))}
	for pos, j := range idx {
		r.sorted[pos] = v[j]
		r.rank[j] = pos
	}
	return r
}

// median of the whole set.
func (r *resampler) median() float64 {
	n := len(r.sorted)
	if n%2 == 1 {
		return r.sorted[n/2]
	}
	return (r.sorted[n/2-1] + r.sorted[n/2]) / 2
}

// resampleMedian draws len(v) values with replacement and returns their median.
func (r *resampler) resampleMedian(rng *rand.Rand) float64 {
	n := len(r.sorted)
	clear(r.counts)
	for range n {
		r.counts[r.rank[rng.IntN(n)]]++
	}
	// k-th smallest (0-based) of the resample, for k = (n-1)/2 and n/2.
	lowK, highK := (n-1)/2, n/2
	var low, high float64
	seen := 0
	for pos, c := range r.counts {
		if c == 0 {
			continue
		}
		if seen <= lowK && lowK < seen+c {
			low = r.sorted[pos]
		}
		if seen <= highK && highK < seen+c {
			high = r.sorted[pos]
			break
		}
		seen += c
	}
	return (low + high) / 2
}

// median sorts v in place and returns its median (the mean of the two middle values for an
// even count).
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// quantile of sorted v with linear interpolation between closest ranks.
func quantile(v []float64, q float64) float64 {
	pos := q * float64(len(v)-1)
	i := int(math.Floor(pos))
	if i >= len(v)-1 {
		return v[len(v)-1]
	}
	f := pos - float64(i)
	return v[i] + f*(v[i+1]-v[i])
}
