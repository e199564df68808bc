package stats

import (
	"slices"
	"time"

	"tokscope/metric"
)

// RecentITL counts endpoint ep's inter-chunk gaps of the recent window ending at now, the
// very gaps Recent.ITL summarises, into bars whose upper bounds (ms, ascending) are bounds:
// counts[i] holds the gaps in (bounds[i-1], bounds[i]], and a gap above the last bound
// counts in the last bar. A view's ITL bars and its ITL figures then come from one source.
// Gaps are resolved to HdrHistogram's bucket (0.1 %). Out of range, every count is 0.
func (a *Aggregator) RecentITL(ep int, now time.Time, bounds []float64) []int {
	counts := make([]int, len(bounds))
	if ep < 0 || ep >= len(a.eps) || len(bounds) == 0 {
		return counts
	}
	e := a.eps[ep]
	hi := now.Unix()
	lo := hi - int64(recentSlots) // exclusive, as recentWindow
	for i := range e.slots {
		sl := &e.slots[i]
		if !sl.used || sl.sec <= lo || sl.sec > hi {
			continue
		}
		sl.m[metric.ITL].h.ForEachBucket(func(v, n int64) bool {
			j, _ := slices.BinarySearch(bounds, float64(v)/unitScale)
			counts[min(j, len(counts)-1)] += int(n)
			return true
		})
	}
	return counts
}
