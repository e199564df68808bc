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
	bufA := slices.Clone(a)
	bufB := slices.Clone(b)
	diff = median(bufA) - median(bufB)

	diffs := make([]float64, iters)
	for i := range diffs {
		for j := range bufA {
			bufA[j] = a[rng.IntN(len(a))]
		}
		for j := range bufB {
			bufB[j] = b[rng.IntN(len(b))]
		}
		diffs[i] = median(bufA) - median(bufB)
	}
	slices.Sort(diffs)
	return diff, quantile(diffs, 0.025), quantile(diffs, 0.975), true
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
