package stats

import (
	"time"

	"tokscope/config"
	"tokscope/metric"
	"tokscope/sample"
)

// Bounds that keep an Aggregator's memory fixed however long the run.
const (
	recentSlots     = int(RecentWindow / time.Second) // one-second histogram slots
	aggBucket       = 100 * time.Millisecond          // aggregate tok/s bucket width
	aggBuckets      = int(AggregateWindow / aggBucket)
	historyLen      = 600  // Points kept for charts
	recentErrorsLen = 20   // ErrorRecords kept for the detail view
	reservoirLen    = 1000 // raw TTFT and decode tok/s values kept for bootstrap comparisons
)

// metricSet holds one series per registered metric (metric.All), by metric.ID.
type metricSet [metric.NumIDs]series

func newMetricSet() metricSet {
	var m metricSet
	for i := range m {
		m[i] = newSeries()
	}
	return m
}

func (m *metricSet) reset() {
	for i := range m {
		m[i].reset()
	}
}

func (m *metricSet) window() Window {
	var d [metric.NumIDs]Dist
	for i := range m {
		d[i] = m[i].dist()
	}
	return windowOf(&d)
}

// windowOf is the Window of one distribution per registered metric.
func windowOf(d *[metric.NumIDs]Dist) Window {
	for i := range d {
		// Token counts are whole: their quantiles read back as the nearest whole count rather
		// than as the top of HdrHistogram's bucket (785.407 for a median of 785 prompt tokens).
		if metric.All[i].Kind == metric.Count {
			d[i] = d[i].whole()
		}
	}
	var w Window
	for i := range d {
		w.Set(metric.ID(i), d[i])
	}
	return w
}

// record adds every value of every metric a counted Sample defines. Its cost is proportional
// to the sample's chunk count and independent of how many samples came before.
func (m *metricSet) record(s *sample.Sample, c metric.Context) {
	for i := range metric.All {
		metric.All[i].Read(s, c, &m[i])
	}
}

// recordCut adds the metrics that count for a request cut by the end of the run (ReadOnCut);
// it reports whether there was any.
func (m *metricSet) recordCut(s *sample.Sample, c metric.Context) bool {
	got := false
	for i := range metric.All {
		if metric.All[i].ReadOnCut {
			metric.All[i].Read(s, c, metric.AddFunc(func(v float64) { m[i].record(v); got = true }))
		}
	}
	return got
}

// slot is one second of the recent window.
type slot struct {
	sec  int64 // Unix second held; meaningful only when used
	used bool
	m    metricSet
}

// tokBucket holds the tokens that arrived during one aggBucket.
type tokBucket struct {
	key    int64 // aggKey of the bucket; 0 = empty
	tokens float64
}

// ring is a bounded FIFO that overwrites its oldest element.
type ring[T any] struct {
	buf  []T
	next int
	full bool
}

func newRing[T any](n int) ring[T] { return ring[T]{buf: make([]T, n)} }

func (r *ring[T]) push(v T) {
	r.buf[r.next] = v
	r.next++
	if r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
}

func (r *ring[T]) len() int {
	if r.full {
		return len(r.buf)
	}
	return r.next
}

// slice returns a fresh copy, oldest first (nil when empty).
func (r *ring[T]) slice() []T {
	n := r.len()
	if n == 0 {
		return nil
	}
	out := make([]T, 0, n)
	if r.full {
		out = append(out, r.buf[r.next:]...)
	}
	return append(out, r.buf[:r.next]...)
}

func (r *ring[T]) last() (T, bool) {
	var zero T
	if r.len() == 0 {
		return zero, false
	}
	return r.buf[(r.next-1+len(r.buf))%len(r.buf)], true
}

func (r *ring[T]) reset() {
	clear(r.buf)
	r.next, r.full = 0, false
}

// endpoint is one endpoint's mutable statistics.
type endpoint struct {
	name, model, baseURL string
	api                  string // the wire protocol (config.Endpoint.API); "" until known

	requests, ok, errors, truncated, warmups int
	cut                                      int // requests cut by the end of the run (not in requests)
	errorKinds                               map[string]int
	outputToks                               int64

	whole metricSet
	queue series
	slots [recentSlots]slot
	live  live // tokens at arrival, per-second series, requests in flight (live.go)

	history   ring[Point]
	errs      ring[ErrorRecord]
	ttftVals  ring[float64]
	decodeVal ring[float64]

	// The features' accumulators (features.go), walked through accumulators().
	rl        rateLimits    // ratelimit.go
	source    tokenSource   // features.go
	work      workloadState // workload.go
	cost      costState     // cost.go
	slo       sloState      // slo.go
	srvTiming ServerTiming  // the server's own clock (servertiming.go)
	turns     turnState     // turns.go
	gpu       gpuState      // gpu.go
	sessions  sessionTurns  // sessions.go

	server serverState // the server's scrapes (server.go): not per Sample
	fig    figures     // the Sample being added (AddAt): derived once, reused

	// The recent window is cached between Snapshots: a UI snapshots several times per second
	// while samples arrive about once per second per stream, and merging 60 slots of 17
	// metrics is the costliest part of a Snapshot. version counts changes to the
	// distributions from 1; a cache whose version is 0 was never filled.
	version     uint64
	recentVer   uint64
	recentSec   int64
	recentCache Window
}

func newEndpoint(name, model, baseURL string) *endpoint {
	e := &endpoint{
		name: name, model: model, baseURL: baseURL,
		errorKinds: map[string]int{},
		version:    1,
		whole:      newMetricSet(),
		queue:      newSeries(),
		history:    newRing[Point](historyLen),
		errs:       newRing[ErrorRecord](recentErrorsLen),
		ttftVals:   newRing[float64](reservoirLen),
		decodeVal:  newRing[float64](reservoirLen),
		rl:         noRateLimits(),
		server:     newServerState(),
		gpu:        newGPUState(false),
		live:       newLive(),
	}
	for i := range e.slots {
		e.slots[i].m = newMetricSet()
	}
	return e
}

func (e *endpoint) reset() {
	e.requests, e.ok, e.errors, e.truncated, e.warmups, e.cut = 0, 0, 0, 0, 0, 0
	clear(e.errorKinds)
	e.outputToks = 0
	e.whole.reset()
	e.queue.reset()
	for i := range e.slots {
		e.slots[i].used = false
		e.slots[i].m.reset()
	}
	e.live.reset()
	e.history.reset()
	e.errs.reset()
	e.ttftVals.reset()
	e.decodeVal.reset()
	for _, acc := range e.accumulators() {
		acc.reset()
	}
	e.server.reset()
	e.version++
}

// Aggregator owns the rolling statistics of every endpoint.
//
// It is NOT safe for concurrent use: one goroutine (the one reading the Runner's events)
// calls Add, Reset and Snapshot. The Snapshots it returns share nothing mutable
// with it and may be handed to any other goroutine.
type Aggregator struct {
	eps     []*endpoint
	byName  map[string]int
	scratch series // reused to merge the recent slots of one metric
	// ttftFrom is the instant TTFT is measured to (WithTTFTFrom); "" is first-token.
	ttftFrom  sample.TTFTFrom
	open      openLoop      // WithRate, SetArrivals, SetWaiting (arrivals.go)
	sloTarget float64       // --slo-target
	end       sample.RunEnd // SetEnd
}

// Option sets up an Aggregator at construction: every consumer of a run builds its
// Aggregator with the same options (cli builds the list once), so none can forget one.
type Option func(*Aggregator)

// WithTTFTFrom chooses the instant TTFT figures (distributions, History, LastTTFT) are
// measured to; the default is first-token. Only TTFT changes: decode tok/s and TPOT keep
// first_token as their start, and the TTFB/TTFA/TTFEvent figures keep their own definitions.
// It is an option, not a setter: a change mid-run would mix definitions in one aggregate.
func WithTTFTFrom(f sample.TTFTFrom) Option { return func(a *Aggregator) { a.ttftFrom = f } }

// WithSLOTarget sets the attainment below which the recent window is a breach
// (--slo-target); 0 keeps DefaultBreachTarget.
func WithSLOTarget(f float64) Option { return func(a *Aggregator) { a.sloTarget = f } }

// WithRate records that requests arrive open-loop at rate per second per endpoint;
// Snapshots carry it (Snapshot.Rate), and summaries then show the client queue. 0 is the
// closed loop.
func WithRate(rate float64) Option { return func(a *Aggregator) { a.open.rate = rate } }

// New returns an Aggregator with one (empty) entry per configured endpoint, in order, set
// up by opts (applied after the endpoints exist).
func New(eps []config.Endpoint, opts ...Option) *Aggregator {
	a := &Aggregator{byName: make(map[string]int, len(eps)), scratch: newSeries()}
	defer func() {
		for _, o := range opts {
			o(a)
		}
	}()
	for _, ep := range eps {
		e := a.eps[a.addEndpoint(ep.Name, ep.Model, ep.BaseURL)]
		e.api = ep.API
		for _, acc := range e.accumulators() {
			acc.configure(&ep)
		}
	}
	return a
}

func (a *Aggregator) addEndpoint(name, model, baseURL string) int {
	i := len(a.eps)
	a.eps = append(a.eps, newEndpoint(name, model, baseURL))
	if _, dup := a.byName[name]; !dup {
		a.byName[name] = i
	}
	return i
}

// Add accounts for one finished request of the endpoint named s.Endpoint. A sample of an
// unknown endpoint (e.g. replayed from a record) adds that endpoint rather than being
// dropped.
func (a *Aggregator) Add(s *sample.Sample) {
	i, ok := a.byName[s.Endpoint]
	if !ok {
		i = a.addEndpoint(s.Endpoint, s.Model, "")
	}
	a.AddAt(sample.EndpointIndex(i), s)
}

// AddAt accounts for one finished request of endpoint index ep (the order given to New, as
// in probe events). It panics when ep is out of range.
//
// Warm-ups count in Warmups only. Errors and truncations count in Requests, Errors /
// Truncated and ErrorKinds, never in latency or speed figures. Only counted requests
// (Sample.Counted) enter the distributions, tokens, aggregate tok/s and History; every
// non-warm-up request enters Queue, since client queueing happens whatever the outcome.
func (a *Aggregator) AddAt(ep sample.EndpointIndex, s *sample.Sample) {
	e := a.eps[ep]
	if e.api == "" {
		e.api = s.API // a replayed endpoint's API is its records'
	}
	f := &e.fig
	f.derive(s, a.ctx())
	// Every feature takes the Sample once, and keeps what it counts (rate limits, and the
	// back-off a 429 starts, apply to the key, whichever request saw them).
	for _, acc := range e.accumulators() {
		acc.take(f)
	}
	if !f.background { // an interactive stream/race request: its prompt is not the probe's
		return
	}
	if s.Warmup {
		e.warmups++
		return
	}
	// What it counted in flight gives way to the exact figures of its Sample.
	e.live.finish(s.Seq)
	e.live.markActive(s.Start, f.done)
	if s.Cut {
		e.addCut(f)
		return
	}
	e.requests++
	e.queue.recordDur(s.Queue)
	e.countOutcome(f)
	if !f.counted {
		return
	}
	e.outputToks += int64(s.Tokens)
	e.version++
	e.whole.record(s, f.ctx)
	if m := e.slotOf(f.done.Unix()); m != nil {
		m.record(s, f.ctx)
	}
	e.live.addSample(f)

	p := Point{At: s.Start}
	if f.HasTTFT {
		p.TTFT = ms(f.TTFT)
		if !f.ModelLoad { // as in the TTFT distribution (the head-to-head's values)
			e.ttftVals.push(p.TTFT)
		}
	}
	if f.HasDecode {
		p.DecodeTPS, p.DecodeOK = f.Decode, true
		e.decodeVal.push(f.Decode)
	}
	e.history.push(p)
}

// addCut accounts a request cut by the end of the run (docs/metrics.md): not a request that finished
// nor an error; a TTFT that had arrived counts in the TTFT figures, nothing else of it does.
func (e *endpoint) addCut(f *figures) {
	e.cut++
	if !f.HasTTFT {
		return
	}
	e.live.addTTFT(f) // the per-second TTFT series keeps it too
	e.version++
	e.whole.recordCut(f.s, f.ctx)
	if m := e.slotOf(f.done.Unix()); m != nil {
		m.recordCut(f.s, f.ctx)
	}
}

// countOutcome counts a finished request by its outcome; an error also by its kind, and in
// the recent errors.
func (e *endpoint) countOutcome(f *figures) {
	s := f.s
	switch s.Outcome {
	case sample.OutcomeOK:
		e.ok++
	case sample.OutcomeTruncated:
		e.truncated++
	default: // OutcomeError, or a malformed outcome, which must not vanish
		e.errors++
		kind := s.ErrorKind
		if kind == "" {
			kind = "unknown"
		}
		e.errorKinds[kind]++
		e.errs.push(ErrorRecord{At: f.done, Kind: kind, Message: s.ErrorMessage})
	}
}

// slotOf is the metrics of the recent-window slot of second sec, reset first when the slot
// held an older second; nil when it already holds a newer one: a sample that finished more
// than RecentWindow before the newest one belongs to the whole run only.
func (e *endpoint) slotOf(sec int64) *metricSet {
	sl := &e.slots[int(mod(sec, int64(recentSlots)))]
	switch {
	case !sl.used || sl.sec < sec:
		sl.m.reset()
		sl.sec, sl.used = sec, true
	case sl.sec != sec:
		return nil
	}
	return &sl.m
}

// ctx is what the metrics' readers need of the Aggregator's settings.
func (a *Aggregator) ctx() metric.Context { return metric.Context{TTFTFrom: a.ttftFrom} }

// TokenArrivals calls f with a sample's N tokens at the instants they arrived, the rule every
// "tokens received per second" figure uses (aggregate tok/s here, per-step throughput in
// sweeps): by the chunks' own counts when the server reported them (scaled so that they sum to
// N), else N spread evenly over the token-bearing chunks, else all at the last instant known
// (e.g. a non-streaming reply).
func TokenArrivals(s *sample.Sample, f func(at time.Time, tokens float64)) {
	if s.Tokens <= 0 {
		return
	}
	var chunkToks, bearing int
	for _, c := range s.Chunks {
		chunkToks += max(c.Tokens, 0)
		if c.TokenBearing() {
			bearing++
		}
	}
	n := float64(s.Tokens)
	switch {
	case chunkToks > 0:
		scale := n / float64(chunkToks)
		for _, c := range s.Chunks {
			if c.Tokens > 0 {
				f(s.Start.Add(c.At), float64(c.Tokens)*scale)
			}
		}
	case bearing > 0:
		per := n / float64(bearing)
		for _, c := range s.Chunks {
			if c.TokenBearing() {
				f(s.Start.Add(c.At), per)
			}
		}
	default:
		f(doneAt(s), n)
	}
}

// aggKey numbers the aggBucket that holds t (avoiding UnixNano, undefined for a zero Time).
func aggKey(t time.Time) int64 {
	return t.Unix()*int64(time.Second/aggBucket) + int64(t.Nanosecond())/int64(aggBucket)
}

func mod(a, n int64) int64 { return ((a % n) + n) % n }

// doneAt is the wall-clock instant a request finished: t0 + End, else the last instant known.
func doneAt(s *sample.Sample) time.Time {
	switch {
	case s.End >= 0:
		return s.Start.Add(s.End)
	case s.LastToken >= 0:
		return s.Start.Add(s.LastToken)
	}
	return s.Start
}

// Reset sets every statistic back to zero, keeping the endpoints.
func (a *Aggregator) Reset() {
	for _, e := range a.eps {
		e.reset()
	}
}

// Snapshot returns every endpoint's statistics as of now. The recent window holds the
// requests that finished in the 60 one-second slots ending with now's second; aggregate tok/s
// sums the aggBucket buckets of the AggregateWindow ending at now.
//
// Tokens reach the aggregate as they arrive (live.go): a stream in flight counts with what
// its Progress reported, and its Done replaces that with the exact count.
func (a *Aggregator) Snapshot(now time.Time) Snapshot {
	snap := Snapshot{At: now, TTFTFrom: a.ttftFrom.Name(), Endpoints: make([]EndpointStats, len(a.eps))}
	for i, e := range a.eps {
		a.endpointStats(&snap.Endpoints[i], i, e, now)
	}
	a.open.fill(&snap)
	snap.End = a.end
	return snap
}

// SetEnd records how the run ended (probe.Runner.End), for the summary.
func (a *Aggregator) SetEnd(end sample.RunEnd) { a.end = end }

// endpointStats fills st, in the Snapshot's slice: an EndpointStats is kilobytes, and a local
// one handed to the accumulators' fill (an interface method) would be copied to the heap.
func (a *Aggregator) endpointStats(st *EndpointStats, i int, e *endpoint, now time.Time) {
	*st = EndpointStats{
		Name: e.name, Model: e.model, BaseURL: e.baseURL, API: apiName(e.api),
		Requests: e.requests, OK: e.ok, Errors: e.errors, Truncated: e.truncated, Warmups: e.warmups, Cut: e.cut,
		ErrorKinds:    make(map[string]int, len(e.errorKinds)),
		OutputTokens:  e.outputToks,
		Whole:         e.whole.window(),
		Recent:        a.recentWindow(e, now),
		RecentErrors:  e.errs.slice(),
		History:       e.history.slice(),
		LastTTFT:      e.ttftVals.slice(),
		LastDecodeTPS: e.decodeVal.slice(),
		Server:        e.server.stats(),
	}
	for k, v := range e.errorKinds {
		st.ErrorKinds[k] = v
	}
	if last, ok := e.errs.last(); ok {
		st.LastError = &last
	}
	st.Queue, st.Waiting = a.open.queueDist(i, &e.queue, now)
	r := readout{now: now, span: e.work.span(), ok: e.ok, outputToks: e.outputToks, sloTarget: a.sloTarget}
	for _, acc := range e.accumulators() {
		acc.fill(st, r)
	}
	e.live.fill(st, now)
}

func (a *Aggregator) recentWindow(e *endpoint, now time.Time) Window {
	hi := now.Unix()
	if e.recentVer == e.version && e.recentSec == hi {
		return e.recentCache
	}
	lo := hi - int64(recentSlots) // exclusive
	var d [metric.NumIDs]Dist
	for m := range metric.NumIDs {
		a.scratch.reset()
		for i := range e.slots {
			if sl := &e.slots[i]; sl.used && sl.sec > lo && sl.sec <= hi {
				a.scratch.merge(&sl.m[m])
			}
		}
		d[m] = a.scratch.dist()
	}
	e.recentCache, e.recentVer, e.recentSec = windowOf(&d), e.version, hi
	return e.recentCache
}

// apiName is an endpoint's API as the outputs name it: "" (an endpoint built without one, or
// replayed from a record older than the field) is chat, as the probe reads it.
func apiName(api string) string {
	if api == "" {
		return config.DefaultAPI
	}
	return api
}
