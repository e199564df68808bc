package report

import (
	"slices"
	"strconv"

	"tokscope/export"
	"tokscope/sweep"
)

// capacityCharts draw a capacity search (--find-max): per endpoint, the attainment and the
// goodput of every load tried against the load, one curve per endpoint through the loads in
// order (a load measured twice by the noise guard at its pooled attainment), the target as a
// guide line and each endpoint's answer labelled "max N".
func capacityCharts(rep *sweep.CapacityReport, eps []endpointRef) []*chart {
	unit := map[string]string{sweep.ByConcurrency: "concurrency (streams per endpoint)", sweep.ByRate: "arrival rate (requests/s per endpoint)"}[rep.Plan.By]
	att := &chart{id: "capacity-attainment", title: "SLO attainment by load", xLabel: unit, yLabel: "requests meeting every objective (%)",
		note:      "One point per load tried (a load measured twice: both pooled); the dashed line is the target; the label marks each endpoint's answer.",
		yFromZero: true, logX: true, headroom: true, refs: []refLine{{y: 100 * rep.Plan.Target, label: "target"}}}
	good := &chart{id: "capacity-goodput", title: "Goodput by load", xLabel: unit, yLabel: "good requests/s",
		note: "Requests that met every objective per second of each step.", yFromZero: true, logX: true, headroom: true}
	hundred := 100.0
	att.yMax = &hundred
	byName := map[string]*sweep.EndpointCapacity{}
	for i := range rep.Endpoints {
		byName[rep.Endpoints[i].Name] = &rep.Endpoints[i]
	}
	for i := range eps {
		e, ok := byName[eps[i].name]
		if !ok || len(e.Steps) == 0 {
			continue
		}
		a := layer{ep: eps[i].idx, kind: drawLine}
		g := layer{ep: eps[i].idx, kind: drawLine}
		for _, m := range decided(e.Steps) {
			label := ""
			if m.Load == e.Max && e.Max > 0 {
				label = "max " + strconv.FormatFloat(m.Load, 'f', -1, 64)
			}
			a.xs, a.ys, a.labels = append(a.xs, m.Load), append(a.ys, 100*m.Pooled), append(a.labels, label)
			g.xs, g.ys, g.labels = append(g.xs, m.Load), append(g.ys, m.GoodputRPS), append(g.labels, label)
		}
		for _, pair := range []struct {
			c *chart
			l layer
		}{{att, a}, {good, g}} {
			marks := pair.l
			marks.kind = drawMarks
			pair.l.labels = nil
			pair.c.layers = append(pair.c.layers, pair.l, marks)
			pair.c.legend = append(pair.c.legend, legendItem{text: eps[i].name, ep: eps[i].idx})
		}
	}
	return []*chart{att, good}
}

// capacityTable is each endpoint's answer in a sentence.
func capacityTable(rep *sweep.CapacityReport) *SectionTable {
	t := &SectionTable{Header: []string{"endpoint", "answer"}}
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		t.Rows = append(t.Rows, []string{e.Name, export.CapacityAnswer(rep.Plan.By, e)})
	}
	return t
}

// decided are the steps that decided their load (a pending first measurement left out: its
// second pools both), in order of load.
func decided(steps []sweep.Measurement) []sweep.Measurement {
	var out []sweep.Measurement
	for _, m := range steps {
		if m.Verdict != sweep.Pending {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b sweep.Measurement) int {
		switch {
		case a.Load < b.Load:
			return -1
		case a.Load > b.Load:
			return 1
		}
		return 0
	})
	return out
}
