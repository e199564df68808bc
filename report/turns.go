package report

import (
	"strconv"

	"tokscope/metric"
	"tokscope/stats"
)

// The conversations section (--turns): each metric split by turn (metric.SplitMetrics) by
// turn index, one curve per endpoint, from the summary's figures by turn (the same
// aggregation as the JSON's "turns"), and a table with the cache-hit rate.

// hasTurns reports whether an endpoint of the report ran conversations.
func hasTurns(eps []endpointRef) bool {
	for i := range eps {
		if eps[i].stats != nil && eps[i].stats.Turns != nil {
			return true
		}
	}
	return false
}

// turnCharts are, for each split metric, its p50 by turn index (turn 1 is the first).
func turnCharts(eps []endpointRef) []*chart {
	var charts []*chart
	for j, id := range metric.SplitMetrics {
		m := metric.Get(id)
		c := &chart{id: "turns-" + m.Key, title: m.Label + " by turn", xLabel: "turn of the conversation",
			yLabel: m.Label + " p50" + unitSuffix(m), yFromZero: true, xFromZero: false,
			note: "Median over the ok requests of each turn; a prefix cache that serves the earlier turns keeps the later ones' prefill short."}
		c.yInteger = m.Kind == metric.Count
		var ticks []float64
		for i := range eps {
			st := eps[i].stats
			if st == nil || st.Turns == nil {
				continue
			}
			l := layer{ep: eps[i].idx, kind: drawLine}
			for k, byMetric := range st.Turns.ByTurn {
				if d := byMetric[j]; d.Count > 0 {
					l.xs, l.ys = append(l.xs, float64(k+1)), append(l.ys, d.P50)
					if len(ticks) <= k {
						ticks = append(ticks, float64(k+1))
					}
				}
			}
			if len(l.xs) > 0 {
				c.layers = append(c.layers, l, layer{ep: eps[i].idx, kind: drawMarks, xs: l.xs, ys: l.ys})
				c.legend = append(c.legend, legendItem{text: eps[i].name, ep: eps[i].idx})
			}
		}
		c.xTicks = ticks
		charts = append(charts, c)
	}
	return charts
}

func unitSuffix(m *metric.Metric) string {
	if m.Unit == "" {
		return ""
	}
	return " (" + m.Unit + ")"
}

// turnsTable: per endpoint, the cache-hit rate and each split's figures.
func turnsTable(eps []endpointRef) *SectionTable {
	t := &SectionTable{Header: []string{"endpoint", "cache hit"}}
	for _, sp := range metric.Splits {
		for _, id := range metric.SplitMetrics {
			t.Header = append(t.Header, metric.Get(id).Label+" p50, "+sp.Label)
		}
	}
	for i := range eps {
		st := eps[i].stats
		if st == nil {
			continue
		}
		row := []string{eps[i].name, hitText(st)}
		for s := range metric.Splits {
			for _, id := range metric.SplitMetrics {
				row = append(row, splitText(st, s, id))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func hitText(st *stats.EndpointStats) string {
	if st.CacheHitRate == nil {
		return "—"
	}
	return strconv.FormatFloat(100**st.CacheHitRate, 'f', 1, 64) + " %"
}

func splitText(st *stats.EndpointStats, split int, id metric.ID) string {
	if st.Turns == nil {
		return "—"
	}
	d := st.Turns.Of(split, id)
	if d.Count == 0 {
		return "—"
	}
	return strconv.FormatFloat(d.P50, 'f', 1, 64)
}

// addTurnsSection adds the conversations section when an endpoint ran conversations.
func addTurnsSection(p *page, _ *Input, eps []endpointRef) error {
	if !hasTurns(eps) {
		return nil
	}
	s, err := p.add("turns", "Conversations", "Each turn re-sends the conversation so far: TTFT and prompt size by turn, and how much of the prompts a prefix cache served.",
		turnCharts(eps))
	if err != nil {
		return err
	}
	s.Table = turnsTable(eps)
	return nil
}
