package feature

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"tokscope/config"
	"tokscope/metric"
	"tokscope/sample"
	"tokscope/stats"
)

// Conversations (--turns, docs/workloads.md "Conversations, shared prefixes, traces"): per endpoint
// "turns": {"first": {"ttft_ms": dist, "prompt_tokens": dist}, "later": {…}} when a later
// turn was seen, and "cache_hit_rate" always (null without data). Both walk stats.Splits and
// stats.SplitMetrics.

// turnsFeature: "cache_hit_rate" always and "turns" with a later turn; the cache_hit_rate
// column always and the turns_ columns in a run with a later turn; the table's cache-hit line
// in a run where a server reported both counts, and its rows by turn in a run with a later turn.
func turnsFeature() Feature {
	return Feature{
		Name:   "turns",
		JSONAt: JSONTail,
		JSON: func(e *stats.EndpointStats) []Member {
			turns, rate := turnsJSON(e)
			out := []Member{{"cache_hit_rate", rate}}
			if turns != nil {
				out = append(out, Member{"turns", turns})
			}
			return out
		},
		CSVHeader: func(snap *stats.Snapshot) []string {
			h := []string{"cache_hit_rate"}
			if AnyEndpoint(snap, hasTurns) {
				h = append(h, turnsCSVHeader()...)
			}
			return h
		},
		CSV: func(snap *stats.Snapshot, e *stats.EndpointStats) []string {
			row := []string{cacheHitCSV(e)}
			if AnyEndpoint(snap, hasTurns) {
				row = append(row, turnsCSV(e)...)
			}
			return row
		},
		LinesAt: LinesTail,
		Lines: func(snap *stats.Snapshot, e *stats.EndpointStats) []string {
			if !AnyEndpoint(snap, func(e *stats.EndpointStats) bool { return e.CacheHitRate != nil }) {
				return nil
			}
			return []string{cacheHitLine(e)}
		},
		RowsAt: RowsMid,
		Rows: func(snap *stats.Snapshot, e *stats.EndpointStats) []TableRow {
			if !AnyEndpoint(snap, hasTurns) {
				return nil
			}
			return turnRows(e)
		},
		Card:    &Card{Has: hasTurnsLine, Forms: turnsForms},
		Compare: &Compare{Has: func(e *config.Endpoint) bool { return e.Turns > 1 || e.SharedPrefix > 0 }, Columns: turnColumns},
		Section: turnsSection,
		Prom:    turnsProm(),
	}
}

func hasTurns(e *stats.EndpointStats) bool { return e.Turns != nil }

// jsonTurns is "turns": one object per split, its metrics in SplitMetrics order.
type jsonTurns struct{ t *stats.TurnStats }

func (j jsonTurns) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, sp := range stats.Splits {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + sp.Key + `":{`)
		for k, id := range stats.SplitMetrics {
			if k > 0 {
				b.WriteByte(',')
			}
			v, err := json.Marshal(ToDist(j.t.Splits[i][k]))
			if err != nil {
				return nil, err
			}
			b.WriteString(`"` + metric.Get(id).Key + `":`)
			b.Write(v)
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func turnsJSON(e *stats.EndpointStats) (*jsonTurns, *Number) {
	var rate *Number
	if e.CacheHitRate != nil {
		r := Number(*e.CacheHitRate)
		rate = &r
	}
	if e.Turns == nil {
		return nil, rate
	}
	return &jsonTurns{e.Turns}, rate
}

// turnsCSVHeader: turns_first_ttft_ms_p50 … turns_later_prompt_tokens_max.
func turnsCSVHeader() []string {
	var h []string
	for _, sp := range stats.Splits {
		for _, id := range stats.SplitMetrics {
			for _, s := range TableColumns {
				h = append(h, "turns_"+sp.Key+"_"+metric.Get(id).Key+"_"+s)
			}
		}
	}
	return h
}

func turnsCSV(e *stats.EndpointStats) []string {
	var row []string
	for i := range stats.Splits {
		for k := range stats.SplitMetrics {
			d := stats.Dist{}
			if e.Turns != nil {
				d = e.Turns.Splits[i][k]
			}
			row = append(row, DistCells(d)...)
		}
	}
	return row
}

// cacheHitCSV is the cache_hit_rate cell: empty without data.
func cacheHitCSV(e *stats.EndpointStats) string {
	if e.CacheHitRate == nil {
		return ""
	}
	return FormatNumber(*e.CacheHitRate)
}

// turnRows are the table's rows by turn: each metric of SplitMetrics for each split ("first
// turn TTFT ms", "later turns prompt tokens"); — where the endpoint had no such turn.
func turnRows(e *stats.EndpointStats) []TableRow {
	var rows []TableRow
	for k, id := range stats.SplitMetrics {
		m := metric.Get(id)
		for i, sp := range stats.Splits {
			d := stats.Dist{}
			if e.Turns != nil {
				d = e.Turns.Splits[i][k]
			}
			rows = append(rows, countRow(m, Row(sp.Label+" "+m.Label, d), d))
		}
	}
	return rows
}

// cacheHitLine is the table's "cache_hit_rate": cached over prompt tokens of the requests
// whose server reported both; — when none did.
func cacheHitLine(e *stats.EndpointStats) string {
	if e.CacheHitRate == nil {
		return "cache hit rate " + NoData + " (no request reported cached and prompt tokens)"
	}
	return "cache hit rate " + Percent(*e.CacheHitRate) + " (cached of prompt tokens)"
}

// Conversations (--turns) on a card: one line with the share of prompt tokens the responses
// said were cached (cached over prompt tokens of the requests that reported both: the
// client's view of the cache, labelled "prompt cached" / "cached", never "hit", which the
// server line's "prefix hit" from the server's own /metrics uses) and, when later turns were
// seen, TTFT p50 and prompt tokens p50 of first and later turns. Shown when either exists.

// hasTurnsLine reports whether a card has the line's figures.
func hasTurnsLine(e *stats.EndpointStats) bool { return e.Turns != nil || e.CacheHitRate != nil }

// turnsForms are "prompt cached 54.0% · ttft 1st 120 later 45 ms · prompt 66 → 180 tok",
// shortened until it fits.
func turnsForms(e *stats.EndpointStats) []Form {
	L, V, U, F := In(Label), In(Value), In(Unit), In(Faint)
	hit := Dash
	if e.CacheHitRate != nil {
		hit = Pct(100 * *e.CacheHitRate)
	}
	head := Join(L("prompt cached "), V(hit), U("%"))
	short := Join(L("cached "), V(hit), U("%"))
	if e.Turns == nil {
		return []Form{head, short}
	}
	t := e.Turns
	ft, lt := Pick(t.Of(0, metric.TTFT), P50, Ms), Pick(t.Of(1, metric.TTFT), P50, Ms)
	fp, lp := Pick(t.Of(0, metric.PromptTokens), P50, Toks), Pick(t.Of(1, metric.PromptTokens), P50, Toks)
	sep := F(" · ")
	return []Form{
		Join(head, sep, L("ttft 1st "), V(ft), L(" later "), V(lt), U(" ms"), sep, L("prompt "), V(fp), L(" → "), V(lp), U(" tok")),
		Join(short, sep, L("ttft "), V(ft), L("/"), V(lt), U(" ms"), sep, L("prompt "), V(fp), L("/"), V(lp)),
		Join(short, L(" ttft "), V(ft), L("/"), V(lt)),
		short,
	}
}

// turnColumns join the compare table when an endpoint runs conversations (--turns > 1) or
// shares a prefix (--shared-prefix): the cache-hit rate, then each split metric's p50 by turn
// (stats.Splits × stats.SplitMetrics: "ttft first", "ttft later", …).
func turnColumns() []Column {
	cols := []Column{{Title: "cached %", Format: Pct, Better: +1, Rank: 18, Value: func(e *stats.EndpointStats) (float64, bool) {
		if e.CacheHitRate == nil {
			return 0, false
		}
		return 100 * *e.CacheHitRate, true
	}}}
	rank := 19
	for i, sp := range stats.Splits {
		for _, id := range stats.SplitMetrics {
			m := metric.Get(id)
			title := m.Key
			if len(m.Compare) > 0 {
				title = m.Compare[0].Title
			}
			cols = append(cols, Column{Title: shortTitle(title) + " " + sp.Key, Format: KindFormat(m.Kind), Better: int(m.Better), Rank: rank,
				Value: func(e *stats.EndpointStats) (float64, bool) {
					if e.Turns == nil {
						return 0, false
					}
					d := e.Turns.Of(i, id)
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

// The report's conversations section (--turns): each metric split by turn
// (stats.SplitMetrics) by turn index, one curve per endpoint, from the summary's figures by
// turn (the same aggregation as the JSON's "turns"), and a table with the cache-hit rate.

// turnsSection is the section, when an endpoint of the report ran conversations.
func turnsSection(r *Report) Section {
	has := false
	for i := range r.Endpoints {
		has = has || r.Endpoints[i].Stats != nil && r.Endpoints[i].Stats.Turns != nil
	}
	if !has {
		return Section{}
	}
	return Section{ID: "turns", Title: "Conversations", Intro: "Each turn re-sends the conversation so far: TTFT and prompt size by turn, and how much of the prompts a prefix cache served.",
		Charts: turnCharts(r), Table: turnsTable(r)}
}

// turnCharts are, for each split metric, its p50 by turn index (turn 1 is the first).
func turnCharts(r *Report) []Chart {
	var charts []Chart
	for j, id := range stats.SplitMetrics {
		m := metric.Get(id)
		c := Chart{ID: "turns-" + m.Key, Title: m.Label + " by turn", XLabel: "turn of the conversation",
			YLabel: m.Label + " p50" + unitSuffix(m), YFromZero: true, XFromZero: false, YInteger: m.Kind == metric.Count,
			Note: "Median over the ok requests of each turn; a prefix cache that serves the earlier turns keeps the later ones' prefill short."}
		var ticks []float64
		for i := range r.Endpoints {
			e := &r.Endpoints[i]
			if e.Stats == nil || e.Stats.Turns == nil {
				continue
			}
			l := Layer{Ep: e.Index, Kind: DrawLine}
			for k, byMetric := range e.Stats.Turns.ByTurn {
				if d := byMetric[j]; d.Count > 0 {
					l.Xs, l.Ys = append(l.Xs, float64(k+1)), append(l.Ys, d.P50)
					if len(ticks) <= k {
						ticks = append(ticks, float64(k+1))
					}
				}
			}
			if len(l.Xs) > 0 {
				c.Layers = append(c.Layers, l, Layer{Ep: e.Index, Kind: DrawMarks, Xs: l.Xs, Ys: l.Ys})
				c.Legend = append(c.Legend, LegendItem{Text: e.Name, Ep: e.Index})
			}
		}
		c.XTicks = ticks
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
func turnsTable(r *Report) *SectionTable {
	t := &SectionTable{Header: []string{"endpoint", "cache hit"}}
	for _, sp := range stats.Splits {
		for _, id := range stats.SplitMetrics {
			t.Header = append(t.Header, metric.Get(id).Label+" p50, "+sp.Label)
		}
	}
	for i := range r.Endpoints {
		st := r.Endpoints[i].Stats
		if st == nil {
			continue
		}
		row := []string{r.Endpoints[i].Name, hitText(st)}
		for s := range stats.Splits {
			for _, id := range stats.SplitMetrics {
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

// Turns and cache hits in Prometheus: the metrics split by turn (stats.SplitMetrics) as
// histograms with a "turn" label (stats.Splits: first, later), named tokscope_turn_<metric>,
// and the prompt-cache counters that the cache-hit rate is read from:
// tokscope_cache_hit_*_total count the cached and prompt tokens of the ok requests that
// reported both, so that rate(..._cached_tokens_total) / rate(..._prompt_tokens_total) is the
// summary's cache_hit_rate over any window.
func turnsProm() *Prom {
	p := &Prom{Families: []PromFamily{
		{Name: "tokscope_cache_hit_cached_tokens_total", Zero: true,
			Help: "Cached prompt tokens of ok requests whose server reported both cached and prompt tokens."},
		{Name: "tokscope_cache_hit_prompt_tokens_total", Zero: true,
			Help: "Prompt tokens of ok requests whose server reported both cached and prompt tokens (the cache-hit rate's denominator)."},
	}, Observe: turnsObserve}
	for _, id := range stats.SplitMetrics {
		m := metric.Get(id)
		name, buckets := turnHistName(m)
		p.Families = append(p.Families, PromFamily{Name: name, Buckets: buckets, Labels: []string{"turn"},
			Help: m.Label + " of ok requests by turn of their conversation (--turns): first, or later."})
	}
	return p
}

// turnHistName is the split histogram of m: its Prometheus name with tokscope_turn_ for
// tokscope_, or tokscope_turn_<key> for a metric without a histogram of its own.
func turnHistName(m *metric.Metric) (string, []float64) {
	if m.Prom != nil {
		return "tokscope_turn_" + strings.TrimPrefix(m.Prom.Name, "tokscope_"), m.Prom.Buckets
	}
	return "tokscope_turn_" + m.Key, metric.UsageBuckets
}

// turnsObserve adds a counted request (sample.Sample.Counted): its cached and prompt tokens,
// and its split metrics under its turn.
func turnsObserve(s *sample.Sample, emit func(int, []string, float64)) {
	if !s.Counted() {
		return
	}
	if cached, prompt, ok := stats.CacheHit(s); ok {
		emit(0, nil, float64(cached))
		emit(1, nil, float64(prompt))
	}
	for _, sp := range stats.Splits {
		if !sp.Holds(s) {
			continue
		}
		for j, id := range stats.SplitMetrics {
			m := metric.Get(id)
			m.Read(s, metric.Context{}, metric.AddFunc(func(v float64) {
				if v >= 0 {
					emit(2+j, []string{sp.Key}, m.PromValue(v))
				}
			}))
		}
	}
}
