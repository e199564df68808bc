package ui

import (
	"tokscope/metric"
	"tokscope/stats"
)

// turnColumns join the compare table when an endpoint runs conversations (--turns > 1) or
// shares a prefix (--shared-prefix): the cache-hit rate, then each split metric's p50 by turn
// (metric.Splits × metric.SplitMetrics: "ttft first", "ttft later", …).
func turnColumns() []column {
	cols := []column{{title: "cached %", format: pct, better: +1, rank: 18, value: func(es *stats.EndpointStats) (float64, bool) {
		if es.CacheHitRate == nil {
			return 0, false
		}
		return 100 * *es.CacheHitRate, true
	}}}
	rank := 19
	for i, sp := range metric.Splits {
		for _, id := range metric.SplitMetrics {
			m := metric.Get(id)
			title := m.Key
			if len(m.Compare) > 0 {
				title = m.Compare[0].Title
			}
			cols = append(cols, column{title: shortTitle(title) + " " + sp.Key, format: kindFormat(m.Kind), better: int(m.Better), rank: rank,
				value: func(es *stats.EndpointStats) (float64, bool) {
					if es.Turns == nil {
						return 0, false
					}
					d := es.Turns.Of(i, id)
					return d.P50, d.Count > 0
				}})
			rank++
		}
	}
	return cols
}

// shortTitle drops a compare title's quantile: "ttft p50" is "ttft".
func shortTitle(t string) string {
	if i := len(t) - 4; i > 0 && t[i:i+2] == " p" {
		return t[:i]
	}
	return t
}
