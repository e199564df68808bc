package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"tokscope/feature"

	"tokscope/stats"
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

	var ax timeAxis
	if in.Requests != nil && in.Requests.first != 0 {
		ax = newTimeAxis(in.Requests.first, in.Requests.last)
	}
	att := &chart{id: "slo-attainment", title: "SLO attainment over time", xLabel: ax.label(), yLabel: "requests meeting every objective (%)",
		note:  "Of the requests that ended in each bin (" + ax.per() + "), the share that succeeded and met every objective; errors and truncated streams count as misses.",
		empty: "no requests judged against objectives", yFromZero: true, xFromZero: true}
	ymax := 100.0
	att.yMax = &ymax
	for i := range eps {
		e := &eps[i]
		if e.series == nil || !e.series.slo.Set() || ax.bins == 0 {
			continue
		}
		counted, good := make([]int, ax.bins), make([]int, ax.bins)
		for _, r := range e.series.requests {
			if !r.sloCounted {
				continue
			}
			if b := ax.bin(floorDiv(r.end, int64(time.Second))); b >= 0 {
				counted[b]++
				if r.sloGood {
					good[b]++
				}
			}
		}
		l := layer{ep: e.idx, kind: drawLine}
		for b := range counted {
			if counted[b] > 0 {
				l.xs, l.ys = append(l.xs, ax.binX(b)), append(l.ys, 100*float64(good[b])/float64(counted[b]))
			}
		}
		if len(l.xs) > 0 {
			att.layers = append(att.layers, l)
			att.legend = append(att.legend, legendItem{text: e.name, ep: e.idx})
		}
	}
	if att.hasData() {
		att.xMin, att.xMax = new(float64), new(float64)
		*att.xMax = ax.x(ax.last)
	}
	return att, table
}

// ServerSection is the report's section on the servers' own metrics (--server-metrics): their
// requests running and waiting, KV-cache usage and generation tok/s over the run (the last
// ten minutes of scrapes each Snapshot keeps), and a table of the run-level figures; a built-in
// section (builtinSections), left out when nothing was scraped.
func ServerSection(snap *stats.Snapshot) Section {
	sec := Section{
		ID: "server", Title: "The servers' own metrics",
		Intro: "What each server reported on its Prometheus /metrics, scraped once a second beside the client's measurement: " +
			"a queue building up and the KV cache filling explain a rising TTFT.",
	}
	series := []TimeSeries{
		{ID: "server-running", Title: "Requests running on the server", YLabel: "requests"},
		{ID: "server-waiting", Title: "Requests waiting in the server's queue", YLabel: "requests"},
		{ID: "server-kv", Title: "KV-cache usage", YLabel: "KV cache in use (%)"},
		{ID: "server-gen", Title: "Server generation tokens per second", YLabel: "tok/s",
			Note: "From the server's token counters over the last 10 s; servers that count tokens only when a request ends (TGI, llama.cpp without /slots) give bursts."},
	}
	for i := range series {
		series[i].Points = map[string][]TimePoint{}
	}
	table := &SectionTable{Header: []string{"endpoint", "server", "scrapes", "running p50 / max", "waiting p50 / max", "KV p50 / max", "prefix cache hit", "gen tok/s"}}
	// By name, like every other part of the report: a replay's endpoints come in the order of
	// their first record, not the configuration's.
	eps := byName(snap)
	for _, e := range eps {
		s := e.Server
		if s == nil || s.Scrapes == 0 {
			continue
		}
		for _, p := range s.History {
			for k, v := range []struct {
				ok bool
				v  float64
			}{{p.Running.OK, p.Running.V}, {p.Waiting.OK, p.Waiting.V}, {p.KVCacheUsage.OK, 100 * p.KVCacheUsage.V}, {p.GenTPS.OK, p.GenTPS.V}} {
				if v.ok {
					series[k].Points[e.Name] = append(series[k].Points[e.Name], TimePoint{At: p.At, Value: v.v})
				}
			}
		}
		pair := func(d stats.Dist, scale float64) string {
			if d.Count == 0 {
				return "—"
			}
			return strconv.FormatFloat(d.P50*scale, 'f', 1, 64) + " / " + strconv.FormatFloat(d.Max*scale, 'f', 1, 64)
		}
		hit, gen := "—", "—"
		if s.PrefixCacheHitRate.OK {
			hit = feature.Percent(s.PrefixCacheHitRate.V)
		}
		if s.GenTPS.OK {
			gen = strconv.FormatFloat(s.GenTPS.V, 'f', 1, 64)
		}
		table.Rows = append(table.Rows, []string{e.Name, string(s.Kind), strconv.Itoa(s.Scrapes),
			pair(s.Running, 1), pair(s.Waiting, 1), pair(s.KVCacheUsage, 100), hit, gen})
	}
	return sec.with(series, table)
}

// byName is snap's endpoints ordered by name, as every part of the report lists them: a
// replay's endpoints come in the order of their first record, not the configuration's.
func byName(snap *stats.Snapshot) []*stats.EndpointStats {
	eps := make([]*stats.EndpointStats, len(snap.Endpoints))
	for i := range snap.Endpoints {
		eps[i] = &snap.Endpoints[i]
	}
	slices.SortStableFunc(eps, func(a, b *stats.EndpointStats) int { return strings.Compare(a.Name, b.Name) })
	return eps
}

// with is sec with those of series that have points and the table when it has rows.
func (sec Section) with(series []TimeSeries, table *SectionTable) Section {
	for _, ts := range series {
		if len(ts.Points) > 0 {
			sec.Series = append(sec.Series, ts)
		}
	}
	if len(table.Rows) > 0 {
		sec.Table = table
	}
	return sec
}
