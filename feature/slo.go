package feature

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/servermetrics"
	"tokscope/stats"
)

// SLOs, cost and the server's own figures (docs/outputs.md, "Contract additions"): per endpoint,
// "slo" when it has objectives, "cost" when it has a price, and "server" always — null when
// nothing was scraped.

// sloFeature: "slo" and its columns with objectives, the table's SLO line.
func sloFeature() Feature {
	return Feature{
		Name:   "slo",
		JSONAt: JSONMiddle,
		JSON: func(e *stats.EndpointStats) []Member {
			if j := sloJSON(e); j != nil {
				return []Member{{"slo", j}}
			}
			return nil
		},
		CSVHeader: func(snap *stats.Snapshot) []string {
			if !AnyEndpoint(snap, hasSLO) {
				return nil
			}
			return sloCSVHeader()
		},
		CSV: func(snap *stats.Snapshot, e *stats.EndpointStats) []string {
			if !AnyEndpoint(snap, hasSLO) {
				return nil
			}
			return sloCSV(e)
		},
		LinesAt: LinesMid,
		Lines:   func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return Line(SLOLine(e)) },
		Card: &Card{Has: func(e *stats.EndpointStats) bool { return e.SLO != nil }, Forms: func(e *stats.EndpointStats) []Form { return sloForms(e.SLO) },
			Breach: func(e *stats.EndpointStats) bool { return e.SLO != nil && e.SLO.Breach }},
		Detail:  sloDetail,
		Compare: &Compare{Has: func(e *config.Endpoint) bool { return e.SLO.Set() }, First: true, Columns: sloColumns, Legend: "slo %: met every objective"},
		Section: sloSection, Keep: sloKeep,
	}
}

// costFeature: "cost" and its columns with a price, the table's cost line.
func costFeature() Feature {
	return Feature{
		Name:   "cost",
		JSONAt: JSONMiddle,
		JSON: func(e *stats.EndpointStats) []Member {
			if j := costJSON(e); j != nil {
				return []Member{{"cost", j}}
			}
			return nil
		},
		CSVHeader: func(snap *stats.Snapshot) []string {
			if !AnyEndpoint(snap, hasCost) {
				return nil
			}
			return costCSVHeader
		},
		CSV: func(snap *stats.Snapshot, e *stats.EndpointStats) []string {
			if !AnyEndpoint(snap, hasCost) {
				return nil
			}
			return costCSV(e)
		},
		LinesAt: LinesMid,
		Lines:   func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return Line(CostLine(e)) },
		Detail:  costDetail,
		Compare: &Compare{Has: func(e *config.Endpoint) bool { return e.Price != nil }, First: true, Columns: costColumns, Legend: "$ in USD"},
	}
}

// serverFeature: the server's scrapes, "server" always (null when nothing was scraped), its
// columns always, the table's server line, and its rows in a run where a server was scraped.
func serverFeature() Feature {
	return Feature{
		Name:      "server",
		JSONAt:    JSONMiddle,
		JSON:      func(e *stats.EndpointStats) []Member { return []Member{{"server", serverJSON(e)}} },
		CSVHeader: func(*stats.Snapshot) []string { return serverCSVHeader() },
		CSV:       func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return serverCSV(e) },
		LinesAt:   LinesMid,
		Lines:     func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return Line(ServerLine(e)) },
		RowsAt:    RowsEnd,
		Rows: func(snap *stats.Snapshot, e *stats.EndpointStats) []TableRow {
			if !AnyEndpoint(snap, scraped) {
				return nil
			}
			return serverRows(e)
		},
		Section: serverSection,
		Card:    &Card{Has: func(e *stats.EndpointStats) bool { return e.Server != nil }, Forms: func(e *stats.EndpointStats) []Form { return serverForms(e.Server) }},
	}
}

func hasSLO(e *stats.EndpointStats) bool  { return e.SLO != nil }
func hasCost(e *stats.EndpointStats) bool { return e.Cost != nil }
func scraped(e *stats.EndpointStats) bool { return e.Server != nil && e.Server.Scrapes > 0 }

type jsonSLO struct {
	Attainment *Number        `json:"attainment"` // null without counted requests
	GoodputRPS Number         `json:"goodput_rps"`
	Violations map[string]int `json:"violations"`
}

type jsonCost struct {
	USD              dollars  `json:"usd"`
	USDPerMTokOutput *dollars `json:"usd_per_mtok_output"` // null without output tokens
}

// dollars keep 6 significant digits: a run's cost is often a fraction of a cent, which the
// summary's 3 decimals would round to 0.
type dollars float64

func formatDollars(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	scale := math.Pow(10, float64(5-int(math.Floor(math.Log10(math.Abs(v))))))
	return strconv.FormatFloat(math.Round(v*scale)/scale, 'f', -1, 64)
}

func (d dollars) MarshalJSON() ([]byte, error) { return []byte(formatDollars(float64(d))), nil }

type jsonServer struct {
	Kind               string  `json:"kind"`
	RequestsRunning    *Dist   `json:"requests_running"`
	RequestsWaiting    *Dist   `json:"requests_waiting"`
	KVCacheUsage       *Dist   `json:"kv_cache_usage"`
	PrefixCacheHitRate *Number `json:"prefix_cache_hit_rate"`
	GenTPS             *Number `json:"gen_tps"`
}

func sloJSON(e *stats.EndpointStats) *jsonSLO {
	s := e.SLO
	if s == nil {
		return nil
	}
	return &jsonSLO{
		Attainment: NumberPtr(s.Attainment, s.Counted > 0),
		GoodputRPS: Number(s.GoodputRPS),
		Violations: s.Violations,
	}
}

func costJSON(e *stats.EndpointStats) *jsonCost {
	c := e.Cost
	if c == nil {
		return nil
	}
	jc := &jsonCost{USD: dollars(c.USD)}
	if c.OutputTokens > 0 {
		per := dollars(c.USDPerMTokOut)
		jc.USDPerMTokOutput = &per
	}
	return jc
}

func serverJSON(e *stats.EndpointStats) *jsonServer {
	s := e.Server
	if s == nil || s.Scrapes == 0 {
		return nil
	}
	return &jsonServer{
		Kind:               string(s.Kind),
		RequestsRunning:    ToDist(s.Running),
		RequestsWaiting:    ToDist(s.Waiting),
		KVCacheUsage:       ToDist(s.KVCacheUsage),
		PrefixCacheHitRate: NumberPtr(s.PrefixCacheHitRate.V, s.PrefixCacheHitRate.OK),
		GenTPS:             NumberPtr(s.GenTPS.V, s.GenTPS.OK),
	}
}

// The CSV columns: the SLO's when an endpoint has objectives, the cost's when one has a
// price (as the JSON keys), the server's always (empty cells when nothing was scraped).
func sloCSVHeader() []string {
	h := []string{"slo_attainment", "slo_goodput_rps"}
	for _, k := range config.SLOKeys {
		h = append(h, "slo_violations_"+k)
	}
	return h
}

var costCSVHeader = []string{"cost_usd", "cost_usd_per_mtok_output"}

func serverCSVHeader() []string {
	h := []string{"server_kind"}
	for _, k := range []string{"server_requests_running", "server_requests_waiting", "server_kv_cache_usage"} {
		for _, s := range TableColumns {
			h = append(h, k+"_"+s)
		}
	}
	return append(h, "server_prefix_cache_hit_rate", "server_gen_tps")
}

func sloCSV(e *stats.EndpointStats) []string {
	s := e.SLO
	if s == nil {
		return make([]string, 2+len(config.SLOKeys))
	}
	row := []string{Cell(s.Attainment, s.Counted > 0), FormatNumber(s.GoodputRPS)}
	for _, k := range config.SLOKeys {
		if n, ok := s.Violations[k]; ok {
			row = append(row, strconv.Itoa(n))
		} else {
			row = append(row, "")
		}
	}
	return row
}

func costCSV(e *stats.EndpointStats) []string {
	c := e.Cost
	if c == nil {
		return []string{"", ""}
	}
	per := ""
	if c.OutputTokens > 0 {
		per = formatDollars(c.USDPerMTokOut)
	}
	return []string{formatDollars(c.USD), per}
}

func serverCSV(e *stats.EndpointStats) []string {
	s := e.Server
	if s == nil || s.Scrapes == 0 {
		return make([]string, len(serverCSVHeader()))
	}
	row := []string{string(s.Kind)}
	for _, d := range []stats.Dist{s.Running, s.Waiting, s.KVCacheUsage} {
		for _, v := range []float64{d.P50, d.P90, d.P99, d.Mean, d.Min, d.Max} {
			row = append(row, Cell(v, d.Count > 0))
		}
	}
	return append(row, Cell(s.PrefixCacheHitRate.V, s.PrefixCacheHitRate.OK), Cell(s.GenTPS.V, s.GenTPS.OK))
}

// SLOLine is the table's SLO line: the objectives, attainment, goodput and what was missed;
// "" without objectives.
func SLOLine(e *stats.EndpointStats) string {
	s := e.SLO
	if s == nil {
		return ""
	}
	objs := make([]string, len(s.Objectives))
	for i, o := range s.Objectives {
		objs[i] = o.Key + "≤" + o.Limit.String()
	}
	line := "slo " + strings.Join(objs, " ") + ": "
	if s.Counted == 0 {
		return line + "no request yet"
	}
	line += fmt.Sprintf("%s met (%d of %d)  goodput %s req/s", Percent(s.Attainment), s.Good, s.Counted, TableNumber(s.GoodputRPS))
	var missed []string
	for _, o := range s.Objectives {
		if n := s.Violations[o.Key]; n > 0 {
			missed = append(missed, fmt.Sprintf("%s %d", o.Key, n))
		}
	}
	if len(missed) > 0 {
		line += "  missed " + strings.Join(missed, ", ")
	}
	if s.Failed > 0 {
		line += fmt.Sprintf("  failed %d", s.Failed)
	}
	return line
}

// CostLine is the table's cost line; "" without a price.
func CostLine(e *stats.EndpointStats) string {
	c := e.Cost
	if c == nil {
		return ""
	}
	line := "cost " + USD(c.USD)
	if c.OutputTokens > 0 {
		line += "  " + USD(c.USDPerMTokOut) + " per 1M output tokens"
	}
	if c.Price.PerGPUHour() {
		return line + fmt.Sprintf("  (%s per GPU hour over %s)", USD(c.Price.GPUHour), e.RunSpan.Round(1e9))
	}
	return line + fmt.Sprintf("  (%s in, %s out per 1M tokens)", USD(c.Price.Input), USD(c.Price.Output))
}

// ServerLine is the table's line on the server's own figures, or its note; "" when the
// server was not scraped (--server-metrics off).
func ServerLine(e *stats.EndpointStats) string {
	s := e.Server
	switch {
	case s == nil:
		return ""
	case s.Scrapes == 0:
		return "server metrics: " + s.Note
	}
	line := fmt.Sprintf("server %s  %d scrapes", s.Kind, s.Scrapes)
	if s.PrefixCacheHitRate.OK {
		line += "  prefix cache hit " + Percent(s.PrefixCacheHitRate.V)
	}
	if s.GenTPS.OK {
		line += "  gen " + TableNumber(s.GenTPS.V) + " tok/s"
	}
	return line
}

// serverRows are the table's rows of server distributions over scrapes; — when the
// endpoint's server was not scraped.
func serverRows(e *stats.EndpointStats) []TableRow {
	s := e.Server
	if s == nil || s.Scrapes == 0 {
		s = &stats.ServerStats{}
	}
	kv := s.KVCacheUsage
	for _, p := range []*float64{&kv.P50, &kv.P90, &kv.P99, &kv.Mean, &kv.Min, &kv.Max} {
		*p *= 100
	}
	return []TableRow{
		Row("server running", s.Running),
		Row("server waiting", s.Waiting),
		Row("server KV %", kv),
	}
}

// serverSection is the report's section on the servers' own metrics (--server-metrics): their
// requests running and waiting, KV-cache usage and generation tok/s over the run (the last
// ten minutes of scrapes each Snapshot keeps), and a table of the run-level figures; a built-in
// section (builtinSections), left out when nothing was scraped.
func serverSection(r *Report) Section {
	snap := r.Snap
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
			hit = Percent(s.PrefixCacheHitRate.V)
		}
		if s.GenTPS.OK {
			gen = strconv.FormatFloat(s.GenTPS.V, 'f', 1, 64)
		}
		table.Rows = append(table.Rows, []string{e.Name, string(s.Kind), strconv.Itoa(s.Scrapes),
			pair(s.Running, 1), pair(s.Waiting, 1), pair(s.KVCacheUsage, 100), hit, gen})
	}
	return sec.With(series, table)
}

// sloForms are the card's SLO line: "slo 97.3% met · goodput 2.41/s", or, when the recent
// window breaches the target, which objective most requests missed and the window's
// attainment: "⚠ slo breach: ttft · 82.0% (60s)".
func sloForms(st *stats.SLOStats) []Form {
	L, V, U, F := In(Label), In(Value), In(Unit), In(Faint)
	if st.Counted == 0 {
		return []Form{{L("slo "), {Role: Muted, Text: Dash + " no request yet"}}}
	}
	if st.Breach {
		recent := Share(st.RecentAttainment)
		return []Form{
			{{Role: Warn, Text: "⚠ slo breach: " + st.Worst + " · " + recent + " (60s)"}},
			{{Role: Warn, Text: "⚠ slo " + st.Worst + " " + recent}},
		}
	}
	att, good := Share(st.Attainment), Num(st.GoodputRPS)
	return []Form{
		{L("slo "), V(att), L(" met"), F(" · "), L("goodput "), V(good), U("/s")},
		{L("slo "), V(att), F(" · "), V(good), U("/s")},
	}
}

// serverForms are the card's line of the server's own figures, "srv run 4 wait 2 · kv 41% ·
// gen 1234 tok/s · prefix hit 12%" shortened until it fits, or its quiet note when it has
// none. "prefix hit" is the server's prefix-cache hit rate from its /metrics; the client's
// figure (turns.go) is "prompt cached".
func serverForms(st *stats.ServerStats) []Form {
	if st.Scrapes == 0 || st.State != servermetrics.StateOK && st.Note != "" {
		return serverNote(st.Note)
	}
	r := &st.Latest
	L, V, U, F := In(Label), In(Value), In(Unit), In(Faint)
	val := func(v servermetrics.Value, f func(float64) string) string {
		if !v.OK {
			return Dash
		}
		return f(v.V)
	}
	count := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	run, wait := val(r.Running, count), val(r.Waiting, count)
	kv, gen, hit := val(r.KVCacheUsage, Share), val(r.GenTPS, Num), val(r.PrefixCacheHitRate, Share)
	W := V
	if r.Waiting.OK && r.Waiting.V > 0 {
		W = In(Warn)
	}
	sep, sp := F(" · "), Span{Role: Plain, Text: " "}
	return []Form{
		Join(L("srv run "), V(run), L(" wait "), W(wait), sep, L("kv "), V(kv), sep, L("gen "), V(gen), U(" tok/s"), sep, L("prefix hit "), V(hit)),
		Join(L("srv run "), V(run), L(" wait "), W(wait), L(" kv "), V(kv), sp, V(gen), U(" tok/s"), sep, L("prefix hit "), V(hit)),
		Join(L("srv run "), V(run), L(" wait "), W(wait), sep, L("kv "), V(kv), sep, L("gen "), V(gen), U(" tok/s")),
		Join(L("srv run "), V(run), L(" wait "), W(wait), L(" kv "), V(kv), sp, V(gen), U(" tok/s")),
		Join(L("srv "), V(run), L("/"), W(wait), L(" kv "), V(kv), sp, V(gen), U(" tok/s")), // tok/s stays at 80 columns
		Join(L("srv "), V(run), L("/"), W(wait), L(" kv "), V(kv)),
	}
}

// serverNote is the card's quiet server-metrics note, shortened rather than cut: the whole
// note, then without its parenthesis ("no series for model "x" (the server lists a, b)"),
// then "srv metrics:" before it, then "srv:" and a shorter wording of the two long notes; only
// another note too long for all of them is cut.
func serverNote(note string) []Form {
	if note == "" {
		note = "waiting for the first scrape"
	}
	note = OneLine(note)
	head, _, _ := strings.Cut(note, " (")
	short := head
	switch {
	case strings.HasPrefix(head, "no series for model"):
		short = "no series for this model"
	case head == "waiting for the first scrape":
		short = "waiting"
	}
	var forms []Form
	for _, t := range []string{"server metrics: " + note, "server metrics: " + head, "srv metrics: " + head, "srv: " + short} {
		forms = append(forms, Form{{Role: Faint, Text: t}})
	}
	return forms
}

// sloDetail are the detail view's SLO lines: attainment and goodput, then what was missed
// (wrapped at its separators where the column is narrow, never cut) with the recent window's
// attainment, or its breach.
func sloDetail(e *stats.EndpointStats) []DetailLine {
	st := e.SLO
	if st == nil || st.Counted == 0 {
		return nil
	}
	L, V, U, M := In(Label), In(Value), In(Unit), In(Muted)
	head := DetailLine{Forms: []Form{
		{L("slo "), V(Share(st.Attainment)), L(" met "), M("(" + strconv.Itoa(st.Good) + "/" + strconv.Itoa(st.Counted) + ")"),
			L("  goodput "), V(Num(st.GoodputRPS)), U("/s")},
		{L("slo "), V(Share(st.Attainment)), L(" · "), V(Num(st.GoodputRPS)), U("/s")},
	}}
	var missed []string
	for _, o := range st.Objectives {
		missed = append(missed, o.Key+" "+strconv.Itoa(st.Violations[o.Key]))
	}
	plain := "missed " + strings.Join(missed, " · ") + " · failed " + strconv.Itoa(st.Failed)
	var then *Span
	if st.RecentCounted > 0 {
		recent := "60s " + Share(st.RecentAttainment)
		if st.Breach {
			then = &Span{Role: Warn, Text: recent + " ⚠ " + st.Worst}
		} else {
			plain += " · " + recent
		}
	}
	return []DetailLine{head, {Wrap: &Span{Role: Muted, Text: plain}, Then: then}}
}

// costDetail is the detail view's cost line: the run's cost and its USD per 1M output tokens.
func costDetail(e *stats.EndpointStats) []DetailLine {
	c := e.Cost
	if c == nil {
		return nil
	}
	L, V, U := In(Label), In(Value), In(Unit)
	line := Form{L("cost "), V("$" + Dollars(c.USD))}
	short := line
	if c.OutputTokens > 0 {
		short = Join(line, L(" · "), V("$"+Dollars(c.USDPerMTokOut)), U("/1M out"))
		line = Join(line, L(" · "), V("$"+Dollars(c.USDPerMTokOut)), U(" per 1M out"))
	}
	return []DetailLine{{Forms: []Form{line, short}}}
}

// sloColumns join the compare table when some endpoint has objectives: the share of counted
// requests meeting every objective, and goodput. Asked for, attainment ranks first.
func sloColumns() []Column {
	return []Column{
		{Title: "slo %", Format: Pct, Better: +1, Rank: 1, Value: func(e *stats.EndpointStats) (float64, bool) {
			if e.SLO == nil || e.SLO.Counted == 0 {
				return 0, false
			}
			return 100 * e.SLO.Attainment, true
		}},
		{Title: "good/s", Format: Num, Better: +1, Rank: 12, Value: func(e *stats.EndpointStats) (float64, bool) {
			if e.SLO == nil || e.SLO.Counted == 0 {
				return 0, false
			}
			return e.SLO.GoodputRPS, true
		}},
	}
}

// costColumns join the compare table when some endpoint has a price: the run's cost and its
// USD per 1M output tokens. Asked for, the price per token ranks first.
func costColumns() []Column {
	return []Column{
		{Title: "$ run", Format: Dollars, Better: -1, Rank: 12, Value: func(e *stats.EndpointStats) (float64, bool) {
			if e.Cost == nil {
				return 0, false
			}
			return e.Cost.USD, true
		}},
		{Title: "$/1M out", Format: Dollars, Better: -1, Tokens: true, Rank: 1, Value: func(e *stats.EndpointStats) (float64, bool) {
			if e.Cost == nil || e.Cost.OutputTokens == 0 {
				return 0, false
			}
			return e.Cost.USDPerMTokOut, true
		}},
	}
}

// SLOVerdict is what the report keeps of a request for the SLO: whether it was judged
// against its endpoint's objectives (stats.MeetsSLO, under --ttft-from), and met them.
type SLOVerdict struct{ Counted, Good bool }

func sloKeep(s *sample.Sample, ep *config.Endpoint, from sample.TTFTFrom) any {
	counted, good := stats.MeetsSLO(ep.SLO, s, from)
	return SLOVerdict{counted, good}
}

// sloSection is the report's SLOs and cost section, when an endpoint has objectives or a
// price: attainment over the run's time and the summary's SLO and cost figures.
func sloSection(r *Report) Section {
	table := sloCostTable(r)
	if table == nil {
		return Section{}
	}
	ax := r.Axis
	att := Chart{ID: "slo-attainment", Title: "SLO attainment over time", XLabel: ax.Label(), YLabel: "requests meeting every objective (%)",
		Note:  "Of the requests that ended in each bin (" + ax.Per() + "), the share that succeeded and met every objective; errors and truncated streams count as misses.",
		Empty: "no requests judged against objectives", YFromZero: true, XFromZero: true}
	ymax := 100.0
	att.YMax = &ymax
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		if !e.Kept || ax.Bins == 0 {
			continue
		}
		counted, good := make([]int, ax.Bins), make([]int, ax.Bins)
		for _, q := range e.Requests {
			v, _ := q.Kept.(SLOVerdict)
			if !v.Counted {
				continue
			}
			if b := ax.Bin(FloorDiv(q.End, int64(time.Second))); b >= 0 {
				counted[b]++
				if v.Good {
					good[b]++
				}
			}
		}
		l := Layer{Ep: e.Index, Kind: DrawLine}
		for b := range counted {
			if counted[b] > 0 {
				l.Xs, l.Ys = append(l.Xs, ax.BinX(b)), append(l.Ys, 100*float64(good[b])/float64(counted[b]))
			}
		}
		if len(l.Xs) > 0 {
			att.Layers = append(att.Layers, l)
			att.Legend = append(att.Legend, LegendItem{Text: e.Name, Ep: e.Index})
		}
	}
	if len(att.Layers) > 0 {
		att.XMin, att.XMax = new(float64), new(float64)
		*att.XMax = ax.X(ax.Last)
	}
	return Section{ID: "slo", Title: "SLOs and cost", Intro: "Per endpoint, the share of requests that met every objective (errors and truncated streams never do), " +
		"goodput (good requests per second of the run) and what the run cost.", Charts: []Chart{att}, Table: table}
}

// sloCostTable is the summary's SLO and cost figures per endpoint; nil when no endpoint has
// objectives or a price.
func sloCostTable(r *Report) *SectionTable {
	table := &SectionTable{Header: []string{"endpoint", "objectives", "attainment", "goodput req/s", "missed", "failed", "cost", "per 1M output"}}
	for i := range r.Endpoints {
		st := r.Endpoints[i].Stats
		if st == nil || st.SLO == nil && st.Cost == nil {
			continue
		}
		row := []string{r.Endpoints[i].Name, "—", "—", "—", "—", "—", "—", "—"}
		if s := st.SLO; s != nil {
			var objs, missed []string
			for _, o := range s.Objectives {
				objs = append(objs, o.Key+" ≤ "+o.Limit.String())
				missed = append(missed, fmt.Sprintf("%s %d", o.Key, s.Violations[o.Key]))
			}
			row[1], row[4], row[5] = strings.Join(objs, ", "), strings.Join(missed, ", "), strconv.Itoa(s.Failed)
			if s.Counted > 0 {
				row[2] = fmt.Sprintf("%s (%d of %d)", Percent(s.Attainment), s.Good, s.Counted)
				row[3] = strconv.FormatFloat(s.GoodputRPS, 'f', 3, 64)
			}
		}
		if c := st.Cost; c != nil {
			row[6] = USD(c.USD)
			if c.OutputTokens > 0 {
				row[7] = USD(c.USDPerMTokOut)
			}
		}
		table.Rows = append(table.Rows, row)
	}
	if len(table.Rows) == 0 {
		return nil
	}
	return table
}
