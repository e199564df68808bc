package report

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"

	"tokscope/config"
	"tokscope/feature"
	"tokscope/metric"
	"tokscope/sample"
	"tokscope/stats"
)

// Collector keeps what the report draws from the finished requests of a run: one compact row
// per request (t0, end, TTFT, decode tok/s, prompt tokens, outcome), the output tokens that
// arrived in each second, and the values of every registered metric the report charts (a
// histogram for ITL's many gaps). It is fed the same Done
// events (Observe) or Samples (AddAt) as the stats.Aggregator of the summary: live from the
// Runner, or from a --record file in a replay.
//
// Every Sample is first reduced to what its --record line keeps (instants to the
// microsecond, sample.Sample.KeepMicroseconds), and everything kept is either a value per
// request, sorted before drawing, or an integer sum. So the report of a replay is the report
// of the live run, whatever order the requests arrive in.
//
// It is NOT safe for concurrent use: the goroutine that reads the events calls every method.
type Collector struct {
	ttftFrom sample.TTFTFrom
	// keeps are the features that keep something of each request for their report sections
	// (feature.Feature.Keep), in feature.All()'s order; request.kept holds theirs.
	keeps  []keep
	eps    []*endpointSeries
	byName map[string]int
	// first and last are the earliest t0 and the latest end of any background request,
	// warm-ups included, in Unix nanoseconds (wall clock); first == 0 before any.
	first, last int64
}

// endpointSeries is one endpoint's share of a Collector.
type endpointSeries struct {
	name, model string
	requests    []request
	// tokens holds the output tokens of counted requests by the Unix second they arrived
	// in, in millionths of a token: integer sums do not depend on the order of addition.
	tokens map[int64]int64
	// values and hists hold what the distribution charts draw, by metric.ID, for the
	// registered metrics with a Chart: one value per counted request, or (ManyPerSample: ITL, every gap)
	// a bounded histogram.
	values [metric.NumIDs][]float64
	hists  [metric.NumIDs]logHistogram
	cfg    config.Endpoint // its configuration (the objectives its requests are judged against); its name alone for one a replay added
}

// keep is one feature's Keep, by the feature's name.
type keep struct {
	feature string
	fn      func(s *sample.Sample, ep *config.Endpoint, from sample.TTFTFrom) any
}

// keepsOf are the features' Keeps.
func keepsOf() []keep {
	var out []keep
	for _, f := range feature.All() {
		if f.Keep != nil {
			out = append(out, keep{f.Name, f.Keep})
		}
	}
	return out
}

func newEndpointSeries(name, model string) *endpointSeries {
	e := &endpointSeries{name: name, model: model, tokens: map[int64]int64{}, cfg: config.Endpoint{Name: name, Model: model}}
	e.resetCharts()
	return e
}

// resetCharts empties the values and histograms of the charted metrics.
func (e *endpointSeries) resetCharts() {
	for i := range metric.All {
		e.values[i] = nil
		if metric.All[i].Chart != nil && metric.All[i].ManyPerSample {
			e.hists[i] = newLogHistogram()
		}
	}
}

// addCharts adds a counted request's values of the charted metrics.
func (e *endpointSeries) addCharts(s *sample.Sample, c metric.Context) {
	for i := range metric.All {
		m := &metric.All[i]
		switch {
		case m.Chart == nil:
		case m.ManyPerSample:
			m.Read(s, c, metric.AddFunc(e.hists[i].add))
		default:
			m.Read(s, c, metric.AddFunc(func(v float64) { e.values[i] = append(e.values[i], v) }))
		}
	}
}

// request is one finished, non-warm-up background request.
type request struct {
	start, end int64 // Unix ns of t0 and of the end of the request
	ttft       float64
	decode     float64
	prompt     int
	outcome    sample.Outcome
	counted    bool // ok: in the latency and speed figures, as in stats
	ttftOK     bool
	decodeOK   bool
	kept       []any    // what each of the Collector's keeps kept of it, in their order
	turn       laneTurn // its place in an agent session's lane; zero outside sessions (lanes.go)
}

// slo is the request's verdict against its endpoint's objectives, as the SLO feature kept it.
func (r *request) slo() feature.SLOVerdict {
	for _, k := range r.kept {
		if v, ok := k.(feature.SLOVerdict); ok {
			return v
		}
	}
	return feature.SLOVerdict{}
}

// missedSLO reports whether the request was judged against its objectives and missed them.
func (r *request) missedSLO() bool {
	v := r.slo()
	return v.Counted && !v.Good
}

// NewCollector returns a Collector with one (empty) series per endpoint, in the order of the
// Runner's events.
func NewCollector(eps []config.Endpoint) *Collector {
	c := &Collector{byName: map[string]int{}, keeps: keepsOf()}
	for _, ep := range eps {
		c.eps[c.addEndpoint(ep.Name, ep.Model)].cfg = ep
	}
	return c
}

func (c *Collector) addEndpoint(name, model string) int {
	i := len(c.eps)
	c.eps = append(c.eps, newEndpointSeries(name, model))
	if _, dup := c.byName[name]; !dup {
		c.byName[name] = i
	}
	return i
}

// SetTTFTFrom chooses the instant TTFT is measured to, as stats.WithTTFTFrom does for an Aggregator; call
// it before the first request.
func (c *Collector) SetTTFTFrom(f sample.TTFTFrom) { c.ttftFrom = f }

// Observe takes the Sample of a finished background request (a *sample.Done of the Runner
// whose Stream is 0) and reports whether it was taken; other events are ignored.
func (c *Collector) Observe(ev sample.Event) bool {
	d, ok := ev.(*sample.Done)
	if !ok || d.Stream != 0 || !d.Endpoint.In(len(c.eps)) {
		return false
	}
	c.AddAt(d.Endpoint, &d.Sample)
	return true
}

// Add takes a finished request of the endpoint named s.Endpoint, adding that endpoint when
// it is not known yet.
func (c *Collector) Add(s *sample.Sample) {
	i, ok := c.byName[s.Endpoint]
	if !ok {
		i = c.addEndpoint(s.Endpoint, s.Model)
	}
	c.AddAt(sample.EndpointIndex(i), s)
}

// AddAt takes a finished request of endpoint index ep. Interactive (stream/race) requests
// are left out; warm-ups only widen the run's span.
func (c *Collector) AddAt(ep sample.EndpointIndex, s *sample.Sample) {
	if s.Stream != 0 {
		return
	}
	kept := *s // what the record keeps (the Runner's Samples are so already), so that a replay agrees
	kept.Chunks = slices.Clone(s.Chunks)
	kept.KeepMicroseconds()
	s = &kept
	start, end := s.Start.UnixNano(), finishedAt(s)
	if c.first == 0 || start < c.first {
		c.first = start
	}
	c.last = max(c.last, end)
	if s.Warmup {
		return
	}
	e := c.eps[ep]
	r := request{start: start, end: end, prompt: s.PromptTokens, outcome: s.Outcome, counted: s.Counted()}
	if len(c.keeps) > 0 {
		r.kept = make([]any, len(c.keeps))
		for i, k := range c.keeps {
			r.kept[i] = k.fn(s, &e.cfg, c.ttftFrom)
		}
	}
	r.turn = laneTurnOf(s, c.ttftFrom)
	if r.counted {
		if d, ok := c.ttftFrom.TTFT(s); ok {
			r.ttft, r.ttftOK = ms(d), true
		}
		r.decode, r.decodeOK = s.DecodeRate()
		stats.TokenArrivals(s, func(at time.Time, tokens float64) {
			e.tokens[at.Unix()] += int64(math.Round(tokens * 1e6))
		})
		e.addCharts(s, metric.Context{TTFTFrom: c.ttftFrom})
	}
	e.requests = append(e.requests, r)
}

// Reset forgets every request, keeping the endpoints (the UI's statistics reset).
func (c *Collector) Reset() {
	for _, e := range c.eps {
		e.requests = nil
		clear(e.tokens)
		e.resetCharts()
	}
	c.first, c.last = 0, 0
}

// Span is when the run began (the first request's t0, warm-ups included) and how long it
// lasted (to the end of the last request); zero before any request finished.
func (c *Collector) Span() (start time.Time, d time.Duration) {
	if c.first == 0 {
		return time.Time{}, 0
	}
	return time.Unix(0, c.first), time.Duration(c.last - c.first)
}

// sortedRequests is e's requests in a canonical order (t0, then the other fields), so that
// what is drawn does not depend on the order the requests finished in.
func (e *endpointSeries) sortedRequests() []request {
	rs := slices.Clone(e.requests)
	slices.SortFunc(rs, func(a, b request) int {
		switch {
		case a.start != b.start:
			return cmp.Compare(a.start, b.start)
		case a.end != b.end:
			return cmp.Compare(a.end, b.end)
		case a.ttft != b.ttft:
			return cmp.Compare(a.ttft, b.ttft)
		}
		return cmp.Compare(a.decode, b.decode)
	})
	return rs
}

// finishedAt is when a request ended on the wall clock, in Unix ns: t0 + End, else its last
// instant known.
func finishedAt(s *sample.Sample) int64 {
	for _, d := range []time.Duration{s.End, s.LastToken, s.FirstEvent, s.Headers} {
		if d >= 0 {
			return s.Start.UnixNano() + int64(d)
		}
	}
	return s.Start.UnixNano()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// logHistogram counts values (ms) in logarithmic bins, bounded memory however many gaps a
// run has: binsPerDecade bins from 1 µs up, the first bin holding everything below.
type logHistogram struct{ counts []int64 }

const (
	histLowMS         = 0.001 // 1 µs
	histBinsPerDecade = 40
	histDecades       = 9 // 1 µs … 1000 s
)

func newLogHistogram() logHistogram {
	return logHistogram{counts: make([]int64, histBinsPerDecade*histDecades+1)}
}

func (h *logHistogram) add(v float64) {
	i := 0
	if v > histLowMS {
		i = int(math.Ceil(math.Log10(v/histLowMS)*histBinsPerDecade - 1e-9))
	}
	h.counts[min(max(i, 0), len(h.counts)-1)]++
}

// upper is the upper edge of bin i, ms.
func (h *logHistogram) upper(i int) float64 {
	return histLowMS * math.Pow(10, float64(i)/histBinsPerDecade)
}

func (h *logHistogram) total() int64 {
	var n int64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// Clone returns a copy that shares nothing with c, so that a report can be written on
// another goroutine while c goes on taking requests (the TUI's report key).
func (c *Collector) Clone() *Collector {
	out := &Collector{ttftFrom: c.ttftFrom, keeps: c.keeps, byName: maps.Clone(c.byName), first: c.first, last: c.last}
	for _, e := range c.eps {
		o := &endpointSeries{name: e.name, model: e.model, requests: slices.Clone(e.requests),
			tokens: maps.Clone(e.tokens), cfg: e.cfg}
		for i := range metric.All {
			o.values[i] = slices.Clone(e.values[i])
			o.hists[i] = logHistogram{counts: slices.Clone(e.hists[i].counts)}
		}
		out.eps = append(out.eps, o)
	}
	return out
}
