package feature

import (
	"encoding/json"
	"strconv"

	"tokscope/metric"
	"tokscope/stats"
)

// jsonServerTiming is the "server_timing" block (docs/server-side.md, "The server's own clock"): the
// source, then the registered metrics of Group metric.Server under their Sub keys, then the
// count of requests that paid for loading the model (kept out of the TTFT figures); null when
// the endpoint's server said nothing.
type jsonServerTiming struct {
	source     string
	metrics    []Member
	modelLoads int
}

// serverTimingFeature: "server_timing" last in an endpoint's object, its columns always, the
// table's model-load line, and the rows of the server's clock that a server of the run reported
// (most say nothing; draft acceptance only under speculative decoding).
func serverTimingFeature() Feature {
	return Feature{
		Name:      "server timing",
		JSONAt:    JSONLast,
		JSON:      func(e *stats.EndpointStats) []Member { return []Member{{"server_timing", serverTimingJSON(e)}} },
		CSVHeader: func(*stats.Snapshot) []string { return serverTimingCSVHeader() },
		CSV:       func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return serverTimingCSV(e) },
		LinesAt:   LinesTail,
		Lines:     func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return Line(ModelLoadLine(e)) },
		RowsAt:    RowsMid,
		Rows:      serverTimingRows,
		Card:      &Card{Has: func(e *stats.EndpointStats) bool { return e.ServerTiming.Source != "" }, Forms: srvTimeForms, Shared: true},
		// Its columns join the table last, once some endpoint's server reports its own clock
		// (Group Server: srv ttft, outside, srv dec); a server that says nothing adds no page.
		Compare: &Compare{Joins: func(e *stats.EndpointStats) bool { return e.ServerTiming.Source != "" },
			Columns: func() []Column {
				return RegistryColumns(func(id metric.ID) bool { return metric.Get(id).Group == metric.Server })
			}},
	}
}

// serverTimingRows are the rows of the registered metrics of Group metric.Server that an
// endpoint of snap has data for.
func serverTimingRows(snap *stats.Snapshot, e *stats.EndpointStats) []TableRow {
	var rows []TableRow
	for _, id := range metric.IDs() {
		m := metric.Get(id)
		if !m.Table || m.Group != metric.Server ||
			!AnyEndpoint(snap, func(o *stats.EndpointStats) bool { return o.Whole.Of(id).Count > 0 }) {
			continue
		}
		rows = append(rows, MetricRow(id, &e.Whole, e.TokenSource == "estimate"))
	}
	return rows
}

func (t *jsonServerTiming) MarshalJSON() ([]byte, error) {
	src, err := json.Marshal(t.source)
	if err != nil {
		return nil, err
	}
	b := append([]byte(`{"source":`), src...)
	members, err := Members(t.metrics)
	if err != nil {
		return nil, err
	}
	if len(members) > 0 {
		b = append(append(b, ','), members...)
	}
	return append(b, `,"model_loads":`+strconv.Itoa(t.modelLoads)+`}`...), nil
}

// serverTimingJSON is the block; nil (null) when the endpoint's server said nothing.
func serverTimingJSON(e *stats.EndpointStats) *jsonServerTiming {
	if e.ServerTiming.Source == "" {
		return nil
	}
	return &jsonServerTiming{e.ServerTiming.Source, MetricsJSON(&e.Whole, metric.Server), e.ServerTiming.ModelLoads}
}

// serverTimingCSVHeader: the source, the Group metric.Server columns, the model loads.
func serverTimingCSVHeader() []string {
	h := append([]string{"server_timing_source"}, MetricsCSVHeader(metric.Server)...)
	return append(h, "model_loads")
}

func serverTimingCSV(e *stats.EndpointStats) []string {
	row := append([]string{e.ServerTiming.Source}, MetricsCSV(&e.Whole, metric.Server)...)
	return append(row, strconv.Itoa(e.ServerTiming.ModelLoads))
}

// ModelLoadLine says when requests that paid for loading the model were counted (the warm-up
// did not absorb them) and that their TTFT was kept out of the figures; "" when none.
func ModelLoadLine(e *stats.EndpointStats) string {
	t := &e.ServerTiming
	if t.ModelLoads == 0 {
		return ""
	}
	l := "model load " + strconv.FormatFloat(t.FirstLoadMs, 'f', 0, 64) + " ms on request " +
		strconv.FormatUint(t.FirstLoadSeq, 10)
	if t.ModelLoads > 1 {
		l += " (" + strconv.Itoa(t.ModelLoads) + " requests)"
	}
	return l + ": not absorbed by a warm-up; its TTFT is kept out of the TTFT figures"
}

// srvTimeForms are the card's line of what the server said of its own clock over the last
// 60 s (the whole run before any finished in it): the medians of its TTFT, of outside (client
// TTFT − server TTFT) and of its decode rate, "srv ttft 212 ms · outside 14 ms · srv 47.9
// tok/s"; a shared line (Card.Shared).
func srvTimeForms(e *stats.EndpointStats) []Form {
	L, V, U, F := In(Label), In(Value), In(Unit), In(Faint)
	win := &e.Recent
	if win.Of(metric.ServerTTFT).Count == 0 && win.Of(metric.ServerDecodeTPS).Count == 0 {
		win = &e.Whole
	}
	ttft, out := Pick(win.Of(metric.ServerTTFT), P50, CardMs), Pick(win.Of(metric.Outside), P50, CardMs)
	dec := Pick(win.Of(metric.ServerDecodeTPS), P50, Num)
	return []Form{
		Join(L("srv ttft "), V(ttft), U(" ms"), F(" · "), L("outside "), V(out), U(" ms"), F(" · "), L("srv "), V(dec), U(" tok/s")),
		Join(L("srv ttft "), V(ttft), U(" ms"), L(" out "), V(out), U(" ms"), L(" srv "), V(dec), U(" tok/s")),
		Join(L("srv ttft "), V(ttft), U(" ms"), L(" out "), V(out), U(" ms")),
		Join(L("srv ttft "), V(ttft), U(" ms")),
	}
}
