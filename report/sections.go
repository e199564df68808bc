package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"tokscope/feature"

	"tokscope/metric"
	"tokscope/sample"
	"tokscope/stats"
	"tokscope/sweep"
)

// The built-in sections, each a list of charts built from the Input. A chart without data
// stays in its place and says so; a section that cannot apply to the run (prompts that do
// not vary, no sweep) is left out whole.

// endpointRef is an endpoint of the report: its place (colour), its series and statistics.
type endpointRef struct {
	idx    int
	name   string
	model  string
	series *endpointSeries      // nil when the Collector never saw it
	stats  *stats.EndpointStats // nil when the summary does not list it
	sorted []request            // series' requests in their canonical order, once asked for (requests)
}

// requests are the endpoint's requests in their canonical order (sortedRequests), sorted once
// per page however many sections read them; none when the Collector never saw it.
func (e *endpointRef) requests() []request {
	if e.sorted == nil && e.series != nil {
		e.sorted = e.series.sortedRequests()
	}
	return e.sorted
}

// endpointsOf lists the endpoints of the summary and the Collector by name: a replay, whose
// records do not keep the configuration's order, then draws them in the same order and
// colours as the live run did.
func endpointsOf(in *Input) []endpointRef {
	byName := map[string]*endpointRef{}
	var names []string
	ref := func(name, model string) *endpointRef {
		r, ok := byName[name]
		if !ok {
			r = &endpointRef{name: name, model: model}
			byName[name] = r
			names = append(names, name)
		}
		return r
	}
	for i := range in.Summary.Endpoints {
		e := &in.Summary.Endpoints[i]
		ref(e.Name, e.Model).stats = e
	}
	if in.Requests != nil {
		for _, s := range in.Requests.eps {
			r := ref(s.name, s.model)
			if r.series == nil {
				r.series = s
			}
		}
	}
	slices.Sort(names)
	out := make([]endpointRef, len(names))
	for i, n := range names {
		out[i] = *byName[n]
		out[i].idx = i
	}
	return out
}

// timeSeriesCharts are the charts over the run's time: output tok/s, the TTFT of each
// request at the second it started, streams in flight, and errors.
func timeSeriesCharts(in *Input, eps []endpointRef) []*chart {
	var ax feature.TimeAxis
	if in.Requests != nil && in.Requests.first != 0 {
		ax = feature.NewTimeAxis(in.Requests.first, in.Requests.last)
	}
	tput, ttft, inflight, errs := timeSeriesFrames(&ax)
	if ax.Bins == 0 {
		return []*chart{tput, ttft, inflight, errs}
	}
	aggregated := false
	for i := range eps {
		e := &eps[i]
		if e.series == nil {
			continue
		}
		reqs := e.requests()

		tokens := make([]int64, ax.Bins)
		for sec, micro := range e.series.tokens {
			if b := ax.Bin(sec); b >= 0 {
				tokens[b] += micro
			}
		}
		if l := rateLayer(&ax, e.idx, tokens, 1e-6); l != nil {
			tput.layers = append(tput.layers, *l)
			tput.legend = append(tput.legend, legendItem{text: e.name, ep: e.idx})
		}

		var pts []feature.Point
		busy := make([]int64, ax.Bins) // ns of requests in flight within each bin
		failed := make([]float64, ax.Bins)
		nFailed := 0
		for _, r := range reqs {
			if r.ttftOK {
				pts = append(pts, feature.Point{X: ax.X(r.start), Y: r.ttft})
			}
			addOverlap(&ax, busy, r.start, r.end)
			if r.outcome != sample.OutcomeOK {
				if b := ax.Bin(feature.FloorDiv(r.end, int64(time.Second))); b >= 0 {
					failed[b]++
					nFailed++
				}
			}
		}
		if ls, agg := scatterOrBand(e.idx, pts); ls != nil {
			ttft.layers = append(ttft.layers, ls...)
			ttft.legend = append(ttft.legend, legendItem{text: e.name, ep: e.idx, mark: !agg})
			aggregated = aggregated || agg
		}
		if l := rateLayer(&ax, e.idx, busy, 1e-9); l != nil {
			inflight.layers = append(inflight.layers, *l)
			inflight.legend = append(inflight.legend, legendItem{text: e.name, ep: e.idx})
		}
		if nFailed > 0 {
			l := layer{ep: e.idx, kind: drawStems}
			for b := range failed {
				if failed[b] > 0 {
					l.xs, l.ys = append(l.xs, ax.BinX(b)), append(l.ys, failed[b])
				}
			}
			errs.layers = append(errs.layers, l)
			errs.legend = append(errs.legend, legendItem{text: e.name, ep: e.idx, mark: true})
		}
	}
	ttft.note = "One dot per ok request, at its t0."
	if aggregated {
		ttft.note = fmt.Sprintf("More than %d requests: the median (line) and p10–p90 (band) of the requests started in each slice of the run.", feature.MaxScatter)
	}
	if errs.hasData() {
		errs.yLabel = "failed requests " + ax.Per()
	}
	for _, c := range []*chart{tput, ttft, inflight, errs} { // one X range for the four
		c.xMin, c.xMax = new(float64), new(float64)
		*c.xMax = ax.X(ax.Last)
	}
	return []*chart{tput, ttft, inflight, errs}
}

// timeSeriesFrames are the four time-series charts, titled and labelled for ax, still empty.
func timeSeriesFrames(ax *feature.TimeAxis) (tput, ttft, inflight, errs *chart) {
	tput = &chart{id: "ts-throughput", title: "Output tokens per second", xLabel: ax.Label(), yLabel: "output tok/s",
		note:      "Tokens of ok requests, counted when their chunk arrived, summed over every stream of the endpoint, " + ax.Per() + ".",
		yFromZero: true, xFromZero: true}
	ttft = &chart{id: "ts-ttft", title: "TTFT of each request, at the time it started", xLabel: ax.Label(), yLabel: "TTFT (ms)",
		yFromZero: true, xFromZero: true}
	inflight = &chart{id: "ts-inflight", title: "Streams in flight", xLabel: ax.Label(), yLabel: "streams (mean over bin)",
		note: "Requests in flight, time-weighted mean " + ax.Per() + " (warm-ups left out).", yFromZero: true, xFromZero: true}
	errs = &chart{id: "ts-errors", title: "Errors and truncated streams", xLabel: ax.Label(), yLabel: "failed requests per bin",
		note:  "Requests that ended in an error or without a finish_reason, by when they ended, " + ax.Per() + ".",
		empty: "no errors and no truncated streams", yFromZero: true, xFromZero: true, yInteger: true}
	return tput, ttft, inflight, errs
}

// rateLayer is a line of sum/covered-seconds per usable bin, each sum scaled by scale; nil
// when every sum is 0.
func rateLayer(ax *feature.TimeAxis, ep int, sums []int64, scale float64) *layer {
	l := layer{ep: ep, kind: drawLine}
	any := false
	for b, s := range sums {
		if !ax.Usable(b) {
			continue
		}
		lo, hi := ax.BinSpan(b)
		v := float64(s) * scale / (float64(hi-lo) / float64(time.Second))
		any = any || s != 0
		l.xs, l.ys = append(l.xs, ax.BinX(b)), append(l.ys, v)
	}
	if !any {
		return nil
	}
	return &l
}

// addOverlap adds to each bin the nanoseconds of [start, end) it holds.
func addOverlap(ax *feature.TimeAxis, busy []int64, start, end int64) {
	sec := int64(time.Second)
	for b := ax.Bin(feature.FloorDiv(start, sec)); b >= 0 && b < ax.Bins; b++ {
		lo, hi := ax.BinSpan(b)
		if lo >= end {
			break
		}
		busy[b] += max(0, min(hi, end)-max(lo, start))
	}
}

// percentileRefs are the guides of every CDF.
var percentileRefs = []refLine{{0.5, "p50"}, {0.9, "p90"}, {0.99, "p99"}}

// distributionCharts are the CDFs of the registered metrics with a Chart (TTFT, decode tok/s,
// TPOT, ITL, output tokens), each with the summary's p50/p90/p99 marked on every endpoint's
// curve.
func distributionCharts(in *Input, eps []endpointRef) []*chart {
	var charts []*chart
	for _, id := range metric.IDs() {
		m := metric.Get(id)
		if m.Chart == nil {
			continue
		}
		c := &chart{id: "dist-" + m.Chart.ID, title: m.Chart.Title, xLabel: m.Chart.XLabel, yLabel: m.Chart.YLabel,
			note: m.Chart.Note, xFromZero: !m.Chart.LogX, logX: m.Chart.LogX}
		if id == metric.TTFT && in.Summary.TTFTFrom != "" && in.Summary.TTFTFrom != "first-token" {
			c.xLabel = "TTFT to the " + in.Summary.TTFTFrom + " (ms)"
		}
		addDistribution(c, id, eps)
		if c.hasData() {
			c.refs = percentileRefs
			one := 1.0
			c.yMax = &one
			c.legend = append(c.legend, legendItem{text: "p50 · p90 · p99 (summary)", ep: -1, mark: true})
		}
		charts = append(charts, c)
	}
	return charts
}

// addDistribution adds every endpoint's curve of metric id to c. On a log axis, coalesced
// reads leave a few gaps of microseconds, and an axis reaching down to them squeezes every
// curve against the right edge: the axis starts near the lowest value at which some
// endpoint's CDF reaches logTrim.
func addDistribution(c *chart, id metric.ID, eps []endpointRef) {
	const logTrim = 0.005
	lo := 0.0
	for i := range eps {
		e := &eps[i]
		if e.series == nil {
			continue
		}
		var whole stats.Window
		if e.stats != nil {
			whole = e.stats.Whole
		}
		curve := cdfOf(e.series.values[id])
		if metric.Get(id).ManyPerSample {
			xs, ys := histogramCDF(&e.series.hists[id])
			curve = [2][]float64{xs, ys}
		}
		if c.logX {
			for k := range curve[0] {
				curve[0][k] = math.Max(curve[0][k], histLowMS) // a log axis has no 0
				if curve[1][k] >= logTrim && (lo == 0 || curve[0][k] < lo) {
					lo = curve[0][k]
				}
			}
		}
		addCDF(c, e, curve, whole.Of(id))
	}
	if c.logX && lo > 0 {
		lo /= 1.5
		c.xMin = &lo
		c.note += " The axis starts where the first 0.5 % of some endpoint's gaps end."
	}
}

func cdfOf(v []float64) [2][]float64 {
	xs, ys := feature.CDF(v)
	return [2][]float64{xs, ys}
}

func addCDF(c *chart, e *endpointRef, curve [2][]float64, d stats.Dist) {
	if len(curve[0]) == 0 {
		return
	}
	c.layers = append(c.layers, layer{ep: e.idx, kind: drawLine, xs: curve[0], ys: curve[1]})
	c.legend = append(c.legend, legendItem{text: e.name, ep: e.idx})
	if d.Count > 0 {
		marks := layer{ep: e.idx, kind: drawMarks}
		for _, m := range []struct{ v, q float64 }{{d.P50, 0.5}, {d.P90, 0.9}, {d.P99, 0.99}} {
			v := m.v
			if c.logX {
				v = math.Max(v, histLowMS)
			}
			marks.xs, marks.ys = append(marks.xs, v), append(marks.ys, m.q)
		}
		c.layers = append(c.layers, marks)
	}
}

// promptsVary reports whether the prompt sizes of the ok requests differ by more than a
// tenth of their median: a fixed prompt with a cache-busting tag varies by a token or two,
// --input-tokens N:SD or a --prompts file by much more.
func promptsVary(eps []endpointRef) bool {
	var sizes []float64
	for i := range eps {
		if eps[i].series == nil {
			continue
		}
		for _, r := range eps[i].series.requests {
			if r.counted && r.prompt > 0 {
				sizes = append(sizes, float64(r.prompt))
			}
		}
	}
	if len(sizes) < 2 {
		return false
	}
	slices.Sort(sizes)
	return sizes[len(sizes)-1]-sizes[0] > 0.1*feature.Quantile(sizes, 0.5)
}

// promptChart is TTFT against prompt tokens, when prompts vary.
func promptChart(eps []endpointRef) *chart {
	c := &chart{id: "prompt-ttft", title: "TTFT against prompt size", xLabel: "prompt tokens (from usage)", yLabel: "TTFT (ms)",
		note: "One dot per ok request whose usage reported its prompt tokens.", yFromZero: true, xFromZero: true}
	aggregated := false
	for i := range eps {
		e := &eps[i]
		if e.series == nil {
			continue
		}
		var pts []feature.Point
		for _, r := range e.requests() {
			if r.ttftOK && r.prompt > 0 {
				pts = append(pts, feature.Point{X: float64(r.prompt), Y: r.ttft})
			}
		}
		if ls, agg := scatterOrBand(e.idx, pts); ls != nil {
			c.layers = append(c.layers, ls...)
			c.legend = append(c.legend, legendItem{text: e.name, ep: e.idx, mark: !agg})
			aggregated = aggregated || agg
		}
	}
	if aggregated {
		c.note = fmt.Sprintf("More than %d requests: the median (line) and p10–p90 (band) of TTFT in each slice of prompt sizes.", feature.MaxScatter)
	}
	return c
}

// sweepCharts are the trade-off of a sweep: aggregate throughput against per-stream speed,
// and aggregate tok/s and TTFT p50 against concurrency, one curve per endpoint, one point
// per step.
func sweepCharts(rep *sweep.Report, eps []endpointRef) []*chart {
	trade := &chart{id: "sweep-tradeoff", title: "Throughput against per-stream speed", xLabel: "per-stream decode tok/s (p50)",
		yLabel: "aggregate output tok/s", note: "One point per step, labelled with its concurrency: up and to the right is better; the curve bends where adding streams slows each one.",
		yFromZero: true, xFromZero: true, headroom: true}
	agg := &chart{id: "sweep-throughput", title: "Aggregate throughput by concurrency", xLabel: "concurrency (streams per endpoint)",
		yLabel: "aggregate output tok/s", note: "Tokens that arrived during each step, over every stream, per second of the step.", yFromZero: true, logX: true}
	ttft := &chart{id: "sweep-ttft", title: "TTFT p50 by concurrency", xLabel: "concurrency (streams per endpoint)", yLabel: "TTFT p50 (ms)",
		note: "Median TTFT of the ok requests that started in each step.", yFromZero: true, logX: true}
	var levels []float64
	for _, n := range rep.Plan.Concurrency {
		if !slices.Contains(levels, float64(n)) {
			levels = append(levels, float64(n))
		}
	}
	slices.Sort(levels)
	agg.xTicks, ttft.xTicks = levels, levels
	for i := range eps {
		e := &eps[i]
		t := layer{ep: e.idx, kind: drawLine}
		a := layer{ep: e.idx, kind: drawLine}
		f := layer{ep: e.idx, kind: drawLine}
		for _, r := range rep.Results {
			if r.Endpoint != e.name {
				continue
			}
			c := float64(r.Concurrency)
			a.xs, a.ys = append(a.xs, c), append(a.ys, r.AggregateTPS)
			if r.DecodeTPS.Count > 0 {
				t.xs, t.ys = append(t.xs, r.DecodeTPS.P50), append(t.ys, r.AggregateTPS)
				t.labels = append(t.labels, "c="+strconv.Itoa(r.Concurrency))
			}
			if r.TTFT.Count > 0 {
				f.xs, f.ys = append(f.xs, c), append(f.ys, r.TTFT.P50)
			}
		}
		for _, pair := range []struct {
			c *chart
			l layer
		}{{trade, t}, {agg, a}, {ttft, f}} {
			if len(pair.l.xs) == 0 {
				continue
			}
			marks := pair.l
			marks.kind, marks.labels = drawMarks, nil
			pair.c.layers = append(pair.c.layers, pair.l, marks)
			pair.c.legend = append(pair.c.legend, legendItem{text: e.name, ep: e.idx})
		}
	}
	return []*chart{trade, agg, ttft}
}
