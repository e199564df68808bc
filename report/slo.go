package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"tokscope/feature"
)

// SLOs and cost (built in: each request's verdict is per-request data the Collector keeps),
// and the server's own metrics (ServerSection: an extension Section built from the
// Snapshot's scrapes, which a record does not keep).

// addSLOSection is the SLOs and cost section, when an endpoint has objectives or a price.
func addSLOSection(p *page, in *Input, eps []endpointRef) error {
	att, table := sloSection(in, eps)
	if table == nil {
		return nil
	}
	s, err := p.add("slo", "SLOs and cost", "Per endpoint, the share of requests that met every objective (errors and truncated streams never do), "+
		"goodput (good requests per second of the run) and what the run cost.", []*chart{att})
	if err != nil {
		return err
	}
	s.Table = table
	return nil
}

// sloSection is attainment over the run's time and the summary's SLO and cost figures; nil
// when no endpoint has objectives or a price.
func sloSection(in *Input, eps []endpointRef) (*chart, *SectionTable) {
	table := &SectionTable{Header: []string{"endpoint", "objectives", "attainment", "goodput req/s", "missed", "failed", "cost", "per 1M output"}}
	for i := range eps {
		st := eps[i].stats
		if st == nil || st.SLO == nil && st.Cost == nil {
			continue
		}
		row := []string{eps[i].name, "—", "—", "—", "—", "—", "—", "—"}
		if s := st.SLO; s != nil {
			var objs, missed []string
			for _, o := range s.Objectives {
				objs = append(objs, o.Key+" ≤ "+o.Limit.String())
				missed = append(missed, fmt.Sprintf("%s %d", o.Key, s.Violations[o.Key]))
			}
			row[1], row[4], row[5] = strings.Join(objs, ", "), strings.Join(missed, ", "), strconv.Itoa(s.Failed)
			if s.Counted > 0 {
				row[2] = fmt.Sprintf("%s (%d of %d)", feature.Percent(s.Attainment), s.Good, s.Counted)
				row[3] = strconv.FormatFloat(s.GoodputRPS, 'f', 3, 64)
			}
		}
		if c := st.Cost; c != nil {
			row[6] = feature.USD(c.USD)
			if c.OutputTokens > 0 {
				row[7] = feature.USD(c.USDPerMTokOut)
			}
		}
		table.Rows = append(table.Rows, row)
	}
	if len(table.Rows) == 0 {
		return nil, nil
	}

	var ax feature.TimeAxis
	if in.Requests != nil && in.Requests.first != 0 {
		ax = feature.NewTimeAxis(in.Requests.first, in.Requests.last)
	}
	att := &chart{id: "slo-attainment", title: "SLO attainment over time", xLabel: ax.Label(), yLabel: "requests meeting every objective (%)",
		note:  "Of the requests that ended in each bin (" + ax.Per() + "), the share that succeeded and met every objective; errors and truncated streams count as misses.",
		empty: "no requests judged against objectives", yFromZero: true, xFromZero: true}
	ymax := 100.0
	att.yMax = &ymax
	for i := range eps {
		e := &eps[i]
		if e.series == nil || !e.series.slo.Set() || ax.Bins == 0 {
			continue
		}
		counted, good := make([]int, ax.Bins), make([]int, ax.Bins)
		for _, r := range e.series.requests {
			if !r.sloCounted {
				continue
			}
			if b := ax.Bin(feature.FloorDiv(r.end, int64(time.Second))); b >= 0 {
				counted[b]++
				if r.sloGood {
					good[b]++
				}
			}
		}
		l := layer{ep: e.idx, kind: drawLine}
		for b := range counted {
			if counted[b] > 0 {
				l.xs, l.ys = append(l.xs, ax.BinX(b)), append(l.ys, 100*float64(good[b])/float64(counted[b]))
			}
		}
		if len(l.xs) > 0 {
			att.layers = append(att.layers, l)
			att.legend = append(att.legend, legendItem{text: e.name, ep: e.idx})
		}
	}
	if att.hasData() {
		att.xMin, att.xMax = new(float64), new(float64)
		*att.xMax = ax.X(ax.Last)
	}
	return att, table
}
