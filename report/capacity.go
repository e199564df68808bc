package report

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"tokscope/export"
	"tokscope/sweep"
)

// capacityCharts draw a capacity search (--find-max): per endpoint, the attainment and the
// goodput of every load tried against the load, one curve per endpoint through the loads in
// order (a load measured twice by the noise guard at its pooled attainment), the target as a
// guide line and each endpoint's answer labelled "max N".
func capacityCharts(rep *sweep.CapacityReport, eps []endpointRef) []*chart {
	if len(rep.Plan.Tiers) > 0 {
		return tierCharts(rep, eps)
	}
	unit := loadUnit(rep.Plan.By)
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

// loadUnit is the x axis of a search's charts.
func loadUnit(by string) string {
	return map[string]string{sweep.ByConcurrency: "concurrency (streams per endpoint)", sweep.ByRate: "arrival rate (requests/s per endpoint)",
		sweep.ByUsers: "users in flight (conversations per endpoint)"}[by]
}

// tierCharts draw a tier search: one chart per tier, its attainment against the load, one
// curve per endpoint through the loads that judged the tier, the boundary labelled. A tier's
// attainment at a step is the lowest, over its objectives, of the share of requests that met
// the bound over the share needed (export.TierAttainment): 100 % and above, every objective
// held.
func tierCharts(rep *sweep.CapacityReport, eps []endpointRef) []*chart {
	byName := map[string]*sweep.EndpointCapacity{}
	for i := range rep.Endpoints {
		byName[rep.Endpoints[i].Name] = &rep.Endpoints[i]
	}
	var out []*chart
	for k := range rep.Plan.Tiers {
		spec := &rep.Plan.Tiers[k]
		c := &chart{id: "tier-" + strconv.Itoa(k+1), title: "Tier " + spec.Name + " (" + tierObjectives(spec) + ") by load",
			xLabel: loadUnit(rep.Plan.By), yLabel: "share meeting each bound ÷ share needed (%, the lowest objective)",
			note:      "One point per step that judged the tier; at or above the dashed line every objective held. The label marks each endpoint's confirmed boundary.",
			yFromZero: true, logX: true, headroom: true, refs: []refLine{{y: 100, label: "holds"}}}
		for i := range eps {
			e, ok := byName[eps[i].name]
			if !ok || k >= len(e.Tiers) {
				continue
			}
			l := layer{ep: eps[i].idx, kind: drawLine}
			for _, m := range byLoad(e.Steps) {
				if k >= len(m.Tiers) || !m.Tiers[k].Judged {
					continue
				}
				a, ok := export.TierAttainment(spec, &m.Tiers[k])
				if !ok {
					continue
				}
				label := ""
				if t := e.Tiers[k]; t.Confirmed && m.Load == t.Boundary && m.Tiers[k].Confirming {
					label = "boundary " + strconv.FormatFloat(m.Load, 'f', -1, 64)
				}
				l.xs, l.ys, l.labels = append(l.xs, m.Load), append(l.ys, 100*a), append(l.labels, label)
			}
			if len(l.xs) == 0 {
				continue
			}
			marks := l
			marks.kind = drawMarks
			l.labels = nil
			c.layers = append(c.layers, l, marks)
			c.legend = append(c.legend, legendItem{text: eps[i].name, ep: eps[i].idx})
		}
		out = append(out, c)
	}
	return out
}

func tierObjectives(t *sweep.TierSpec) string {
	parts := make([]string, len(t.Objectives))
	for i, o := range t.Objectives {
		parts[i] = o.Text
	}
	return strings.Join(parts, ", ")
}

// byLoad are steps in order of load (stable: a load's measurements in the order run).
func byLoad(steps []sweep.Measurement) []sweep.Measurement {
	out := slices.Clone(steps)
	slices.SortStableFunc(out, func(a, b sweep.Measurement) int { return cmp.Compare(a.Load, b.Load) })
	return out
}

// capacityTable is each endpoint's answer in a sentence (with tiers, one per tier).
func capacityTable(rep *sweep.CapacityReport) *SectionTable {
	t := &SectionTable{Header: []string{"endpoint", "answer"}}
	if len(rep.Plan.Tiers) > 0 {
		for i := range rep.Endpoints {
			e := &rep.Endpoints[i]
			for k := range e.Tiers {
				t.Rows = append(t.Rows, []string{e.Name, export.TierAnswer(rep, k, &e.Tiers[k])})
			}
		}
		return t
	}
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

// addCapacitySection is the capacity search's section, after a search.
func addCapacitySection(p *page, in *Input, eps []endpointRef) error {
	if in.Capacity == nil {
		return nil
	}
	s, err := p.add("capacity", "Capacity search", "Per endpoint, the highest load at which the target share of requests met every objective.",
		capacityCharts(in.Capacity, eps))
	if err != nil {
		return err
	}
	s.Table = capacityTable(in.Capacity)
	return nil
}
