package report

import (
	"fmt"
	"tokscope/feature"

	"tokscope/metric"
	"tokscope/sample"
)

// The "client and server" section: where a server reported its own clock per request
// (docs/server-side.md, "The server's own clock"), its TTFT and decode distributions beside the
// client's, and outside (client TTFT − server TTFT) over the run. Left out of runs whose
// servers said nothing.

// srvValues are a counted request's figures of the server's own clock.
type srvValues struct {
	ttft, decode, outside       float64
	ttftOK, decodeOK, outsideOK bool
}

// serverValues reads them off s through the registry (the same reads as the summary's).
func serverValues(s *sample.Sample, c metric.Context) srvValues {
	var v srvValues
	read := func(id metric.ID, to *float64, ok *bool) {
		metric.Get(id).Read(s, c, metric.AddFunc(func(x float64) { *to, *ok = x, true }))
	}
	read(metric.ServerTTFT, &v.ttft, &v.ttftOK)
	read(metric.ServerDecodeTPS, &v.decode, &v.decodeOK)
	read(metric.Outside, &v.outside, &v.outsideOK)
	return v
}

// addServerSection is the client-and-server section, when a server reported its own clock.
func addServerSection(p *page, in *Input, eps []endpointRef) error {
	charts := serverCharts(in, eps)
	if charts == nil {
		return nil
	}
	_, err := p.add("client-server", "Client and server", serverIntro(eps), charts)
	return err
}

// serverCharts are the section's charts; nil when no endpoint's server reported its clock.
func serverCharts(in *Input, eps []endpointRef) []*chart {
	ttft := &chart{id: "cs-ttft", title: "TTFT: client (line) and server (dots)", xLabel: "TTFT (ms)",
		yLabel: "fraction of ok requests", xFromZero: true,
		note: "Cumulative distributions over ok requests of the client's TTFT and of the server's own (llama.cpp prompt_ms, vLLM time_to_first_token_ms, Ollama load + prompt_eval); requests that paid for loading the model are left out of both."}
	dec := &chart{id: "cs-decode", title: "Decode speed: client (line) and server (dots)", xLabel: "decode tok/s (per request)",
		yLabel: "fraction of ok requests", xFromZero: true,
		note: "Cumulative distributions over ok requests of the client's (N − 1) / (last token − first token) and of the server's own decode rate."}
	var ax feature.TimeAxis
	if in.Requests != nil && in.Requests.first != 0 {
		ax = feature.NewTimeAxis(in.Requests.first, in.Requests.last)
	}
	outside := &chart{id: "cs-outside", title: "Outside the server, at the time each request started", xLabel: ax.Label(),
		yLabel: "client TTFT − server TTFT (ms)", xFromZero: true, yFromZero: true,
		note: "Network, HTTP, templating, the wait for a free slot (llama.cpp), the client itself: one dot per ok request, at its t0."}
	any := false
	for i := range eps {
		e := &eps[i]
		if e.series == nil {
			continue
		}
		var cT, sT, cD, sD []float64
		var pts []feature.Point
		for _, r := range e.series.sortedRequests() {
			if !r.counted || !(r.srv.ttftOK || r.srv.decodeOK) {
				continue
			}
			if r.srv.ttftOK && r.ttftOK {
				cT, sT = append(cT, r.ttft), append(sT, r.srv.ttft)
			}
			if r.srv.decodeOK && r.decodeOK {
				cD, sD = append(cD, r.decode), append(sD, r.srv.decode)
			}
			if r.srv.outsideOK && ax.Bins > 0 {
				pts = append(pts, feature.Point{X: ax.X(r.start), Y: r.srv.outside})
			}
		}
		any = any || len(sT) > 0 || len(sD) > 0
		sideBySide(ttft, e, cT, sT)
		sideBySide(dec, e, cD, sD)
		if ls, _ := scatterOrBand(e.idx, pts); ls != nil {
			outside.layers = append(outside.layers, ls...)
			outside.legend = append(outside.legend, legendItem{text: e.name, ep: e.idx, mark: true})
		}
	}
	if !any {
		return nil
	}
	return []*chart{ttft, dec, outside}
}

// sideBySide adds an endpoint's client CDF (a line) and server CDF (dots) to c.
func sideBySide(c *chart, e *endpointRef, client, server []float64) {
	if len(server) == 0 {
		return
	}
	xs, ys := feature.CDF(client)
	if len(xs) > 0 {
		c.layers = append(c.layers, layer{ep: e.idx, kind: drawLine, xs: xs, ys: ys})
		c.legend = append(c.legend, legendItem{text: e.name + " client", ep: e.idx})
	}
	xs, ys = feature.CDF(server)
	c.layers = append(c.layers, layer{ep: e.idx, kind: drawPoints, xs: xs, ys: ys})
	c.legend = append(c.legend, legendItem{text: e.name + " server", ep: e.idx, mark: true})
	one := 1.0
	c.yMax = &one
}

// serverIntro says what the section shows, and any request that paid for loading the model.
func serverIntro(eps []endpointRef) string {
	intro := "Where the server reported its own clock per request: its TTFT and decode speed beside the client's, and what happened outside it."
	for i := range eps {
		if st := eps[i].stats; st != nil && st.ServerTiming.ModelLoads > 0 {
			intro += fmt.Sprintf(" %s: model load %.0f ms on request %d (the warm-up did not absorb it), left out of the TTFT figures.",
				eps[i].name, st.ServerTiming.FirstLoadMs, st.ServerTiming.FirstLoadSeq)
		}
	}
	return intro
}
