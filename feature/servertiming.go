package feature

import (
	"encoding/json"
	"fmt"
	"strconv"

	"tokscope/config"
	"tokscope/metric"
	"tokscope/sample"
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
		Section: srvSection, Keep: srvKeep,
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

// The report's "client and server" section: where a server reported its own clock per
// request (docs/server-side.md, "The server's own clock"), its TTFT and decode distributions
// beside the client's, and outside (client TTFT − server TTFT) over the run. Left out of runs
// whose servers said nothing.

// srvValues are what the report keeps of a counted request for the server's own clock.
type srvValues struct {
	ttft, decode, outside       float64
	ttftOK, decodeOK, outsideOK bool
}

// srvKeep reads them off a counted request through the registry (the same reads as the
// summary's); nil for another.
func srvKeep(s *sample.Sample, _ *config.Endpoint, from sample.TTFTFrom) any {
	if !s.Counted() {
		return nil
	}
	var v srvValues
	c := metric.Context{TTFTFrom: from}
	read := func(id metric.ID, to *float64, ok *bool) {
		metric.Get(id).Read(s, c, metric.AddFunc(func(x float64) { *to, *ok = x, true }))
	}
	read(metric.ServerTTFT, &v.ttft, &v.ttftOK)
	read(metric.ServerDecodeTPS, &v.decode, &v.decodeOK)
	read(metric.Outside, &v.outside, &v.outsideOK)
	return v
}

// srvSection is the section, when a server reported its own clock.
func srvSection(r *Report) Section {
	ttft := Chart{ID: "cs-ttft", Title: "TTFT: client (line) and server (dots)", XLabel: "TTFT (ms)",
		YLabel: "fraction of ok requests", XFromZero: true,
		Note: "Cumulative distributions over ok requests of the client's TTFT and of the server's own (llama.cpp prompt_ms, vLLM time_to_first_token_ms, Ollama load + prompt_eval); requests that paid for loading the model are left out of both."}
	dec := Chart{ID: "cs-decode", Title: "Decode speed: client (line) and server (dots)", XLabel: "decode tok/s (per request)",
		YLabel: "fraction of ok requests", XFromZero: true,
		Note: "Cumulative distributions over ok requests of the client's (N − 1) / (last token − first token) and of the server's own decode rate."}
	ax := r.Axis
	outside := Chart{ID: "cs-outside", Title: "Outside the server, at the time each request started", XLabel: ax.Label(),
		YLabel: "client TTFT − server TTFT (ms)", XFromZero: true, YFromZero: true,
		Note: "Network, HTTP, templating, the wait for a free slot (llama.cpp), the client itself: one dot per ok request, at its t0."}
	any := false
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		if !e.Kept {
			continue
		}
		var cT, sT, cD, sD []float64
		var pts []Point
		for _, q := range e.Requests {
			v, ok := q.Kept.(srvValues)
			if !q.Counted || !ok || !(v.ttftOK || v.decodeOK) {
				continue
			}
			if v.ttftOK && q.TTFTOK {
				cT, sT = append(cT, q.TTFT), append(sT, v.ttft)
			}
			if v.decodeOK && q.DecodeOK {
				cD, sD = append(cD, q.Decode), append(sD, v.decode)
			}
			if v.outsideOK && ax.Bins > 0 {
				pts = append(pts, Point{X: ax.X(q.Start), Y: v.outside})
			}
		}
		any = any || len(sT) > 0 || len(sD) > 0
		sideBySide(&ttft, e, cT, sT)
		sideBySide(&dec, e, cD, sD)
		if ls, _ := ScatterOrBand(e.Index, pts); ls != nil {
			outside.Layers = append(outside.Layers, ls...)
			outside.Legend = append(outside.Legend, LegendItem{Text: e.Name, Ep: e.Index, Mark: true})
		}
	}
	if !any {
		return Section{}
	}
	return Section{ID: "client-server", Title: "Client and server", Intro: srvIntro(r), Charts: []Chart{ttft, dec, outside}}
}

// sideBySide adds an endpoint's client CDF (a line) and server CDF (dots) to c.
func sideBySide(c *Chart, e *ReportEndpoint, client, server []float64) {
	if len(server) == 0 {
		return
	}
	xs, ys := CDF(client)
	if len(xs) > 0 {
		c.Layers = append(c.Layers, Layer{Ep: e.Index, Kind: DrawLine, Xs: xs, Ys: ys})
		c.Legend = append(c.Legend, LegendItem{Text: e.Name + " client", Ep: e.Index})
	}
	xs, ys = CDF(server)
	c.Layers = append(c.Layers, Layer{Ep: e.Index, Kind: DrawPoints, Xs: xs, Ys: ys})
	c.Legend = append(c.Legend, LegendItem{Text: e.Name + " server", Ep: e.Index, Mark: true})
	one := 1.0
	c.YMax = &one
}

// srvIntro says what the section shows, and any request that paid for loading the model.
func srvIntro(r *Report) string {
	intro := "Where the server reported its own clock per request: its TTFT and decode speed beside the client's, and what happened outside it."
	for i := range r.Endpoints {
		if st := r.Endpoints[i].Stats; st != nil && st.ServerTiming.ModelLoads > 0 {
			intro += fmt.Sprintf(" %s: model load %.0f ms on request %d (the warm-up did not absorb it), left out of the TTFT figures.",
				r.Endpoints[i].Name, st.ServerTiming.FirstLoadMs, st.ServerTiming.FirstLoadSeq)
		}
	}
	return intro
}
