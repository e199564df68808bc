package sweep

import (
	"context"
	"math"
	"sync"
	"time"

	"tokscope/config"
	"tokscope/fanout"
	"tokscope/metric"
	"tokscope/sample"
	"tokscope/servermetrics"
	"tokscope/stats"
)

// A Search runs a capacity search (search.go decides) over a probe.Runner: each endpoint on
// its own goroutine and its own sequence of steps, so endpoints finish at different times.
//
// One endpoint's step: with the endpoint paused and nothing of it in flight, set the load,
// stamp the start, resume; after StepDuration, once at least MinRequests requests that
// started in the step have finished, stamp the end and pause; the step's requests then have
// the grace to finish, what is left is cut (probe.Runner.CutEndpointBefore), and the step is
// measured once every request of the endpoint has reported. A request belongs to the step in
// which it started; one that started after the end (a loop that passed its pause check just
// before it) belongs to none. Steps never overlap, so a step after a miss does not inherit
// the overloaded server's queue: requests of one step never count in another.
//
// Figures come from a stats.Aggregator per step, fed every request of the step (as every
// Aggregator is, AddAt), so attainment, goodput, output tok/s and TTFT follow stats' rules
// (errors and truncations count as misses, cut requests not at all).

// SearchController is what a search drives: the probe.Runner.
type SearchController interface {
	SetConcurrency(ep sample.EndpointIndex, n int)
	SetRate(ep sample.EndpointIndex, rate float64)
	SetPaused(ep sample.EndpointIndex, paused bool)
	InFlight(ep sample.EndpointIndex) int
	CutEndpointBefore(ep sample.EndpointIndex, t time.Time) int
	Warming(ep sample.EndpointIndex) bool
}

// Search is one capacity search. Observe (the run's loop), OnStart (a worker's hook) and its
// readers (Outcomes, Version, Current) are safe from any goroutine.
type Search struct {
	plan     SearchPlan
	eps      []config.Endpoint
	ttftFrom sample.TTFTFrom
	byName   map[string]int
	poll     time.Duration

	mu      sync.Mutex
	st      []*endpointSearch
	version uint64

	stepMu      sync.Mutex // serialises onStep and onStepStart
	onStep      func(ep sample.EndpointIndex, m Measurement, o Outcome)
	onStepStart func(ep sample.EndpointIndex, load float64, again bool, o Outcome)
	onTierDone  func(ep sample.EndpointIndex, t TierOutcome)
}

type endpointSearch struct {
	dec      decider
	warmLeft int
	warmed   chan struct{}
	started  int       // background requests begun (OnStart), warm-ups and interactive too
	reported int       // of which reported (their Done read by Observe)
	cur      *liveStep // the step being measured; nil between steps
	stopped  bool      // the Runner stopped the endpoint (permanent errors): no more steps
	slots    int       // a rate search's worker slots so far
	// sessionTurns counts the ok turns seen of each agent session (by its root context) over
	// the whole search, so a session is complete in the step that sees its last turn.
	sessionTurns map[uint64]int
	began        time.Time // when its first step could begin (warm-ups over)
	steps        int       // steps measured
	busy         time.Duration
}

// liveStep is a step being measured.
type liveStep struct {
	load       float64
	start, end time.Time // end zero while it runs
	agg        *stats.Aggregator
	finished   int // counted requests that finished
	slo        config.SLO
	vals       *tierValues // the values the tiers judge, and the conversations that ended
	energyJ    float64     // GPU energy of the scrapes inside the window (--gpu-metrics)
	energySpan time.Duration
}

// NewSearch prepares a search over eps (the Runner's endpoints, in order, their objectives
// set), each of which runs warmup warm-up requests first. onStep, if not nil, is called after
// every step (one call at a time) with the endpoint, the step and where its search stands.
func NewSearch(plan SearchPlan, eps []config.Endpoint, warmup int, ttftFrom sample.TTFTFrom,
	onStep func(ep sample.EndpointIndex, m Measurement, o Outcome)) *Search {
	s := &Search{plan: plan, eps: eps, ttftFrom: ttftFrom, byName: map[string]int{}, poll: 10 * time.Millisecond, onStep: onStep}
	for i, ep := range eps {
		s.byName[ep.Name] = i
		e := &endpointSearch{dec: newDecider(plan), warmLeft: max(warmup, 0), warmed: make(chan struct{})}
		if e.warmLeft == 0 {
			close(e.warmed)
		}
		s.st = append(s.st, e)
	}
	return s
}

// newDecider is the decisions of one endpoint's search: every tier's, or the single target's.
func newDecider(plan SearchPlan) decider {
	if len(plan.Tiers) > 0 {
		return newTierSearch(plan)
	}
	return &search{plan: plan}
}

// OnStepStart sets a hook called as each step begins (one call at a time, with onStep's),
// with the endpoint, the load, whether it re-measures, and where its search stands. Set it
// before Run.
func (s *Search) OnStepStart(f func(ep sample.EndpointIndex, load float64, again bool, o Outcome)) {
	s.onStepStart = f
}

// OnTierDone sets a hook called (one call at a time, with the others) when a tier's search
// on an endpoint is over: its boundary confirmed, or missed at the lowest load. Set it before
// Run.
func (s *Search) OnTierDone(f func(ep sample.EndpointIndex, t TierOutcome)) { s.onTierDone = f }

// Plan returns the search's plan.
func (s *Search) Plan() SearchPlan { return s.plan }

// Endpoints returns the endpoints searched, in order.
func (s *Search) Endpoints() []config.Endpoint { return s.eps }

// OnStart is a probe.Options.OnStart hook, called on the request's worker before the Runner
// counts it out of flight (InFlight): a step's drain, seeing nothing in flight, then knows
// every request that began, though their events may still be on the way to Observe. Counting
// the Started events instead would miss a request whose Started and Done are both unread.
func (s *Search) OnStart(name string, _ uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.byName[name]; ok {
		s.st[i].started++
	}
}

// Observe takes the run's events (a fanout.Observer, on the run's loop): each finished
// request (counted as reported, handed to the step it started in), the Runner's word that it
// stopped an endpoint (identical permanent errors: its search ends after the running step),
// and the GPU scrapes (each step's energy). It reports false: the views read the search under
// its lock (Version).
func (s *Search) Observe(ev sample.Event) bool {
	switch ev := ev.(type) {
	case *sample.Done:
		s.done(ev.Endpoint, &ev.Sample)
	case *sample.Status:
		if ev.State == sample.StateStopped && ev.Reason != "" {
			s.EndpointStopped(int(ev.Endpoint))
		}
	case *fanout.Scrape:
		if u := &ev.Update; u.Source == servermetrics.SourceGPU && u.State == servermetrics.StateOK {
			s.ObserveGPU(u.Endpoint, u.GPU)
		}
	}
	return false
}

// done counts one finished request of endpoint i as reported (warm-ups too: the first step
// waits for them) and hands it to the step it started in.
func (s *Search) done(i sample.EndpointIndex, smp *sample.Sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !i.In(len(s.st)) {
		return
	}
	e := s.st[i]
	e.reported++
	switch {
	case smp.Warmup:
		if e.warmLeft > 0 {
			e.warmLeft--
			if e.warmLeft == 0 {
				close(e.warmed)
			}
		}
		return
	case smp.Stream != 0 || e.cur == nil:
		return
	}
	c := e.cur
	if smp.Start.Before(c.start) || (!c.end.IsZero() && !smp.Start.Before(c.end)) {
		return
	}
	c.agg.AddAt(0, smp)
	if !smp.Cut && !(smp.Outcome == sample.OutcomeError && smp.ErrorKind == sample.ErrCanceled) { // counted as SLOs count
		c.finished++
		c.vals.add(smp, metric.Context{TTFTFrom: s.ttftFrom})
	}
	s.version++
}

// Version counts changes of what Outcomes and Current return (for redraw caches).
func (s *Search) Version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// Outcomes returns where every endpoint's search stands, endpoints in order.
func (s *Search) Outcomes() []Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Outcome, len(s.st))
	for i, e := range s.st {
		out[i] = e.dec.outcome()
	}
	return out
}

// Current is endpoint ep's running step: its load, start and the requests finished in it so
// far; false between steps.
func (s *Search) Current(ep int) (load float64, start time.Time, finished int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ep < 0 || ep >= len(s.st) || s.st[ep].cur == nil {
		return 0, time.Time{}, 0, false
	}
	c := s.st[ep].cur
	return c.load, c.start, c.finished, true
}

// Run searches every endpoint side by side and returns once every search is done (nil), or
// ctx's error when it ends first. Every endpoint is left paused.
func (s *Search) Run(ctx context.Context, ctl SearchController) error {
	errs := make(chan error, len(s.st))
	for i := range sample.EndpointIndex(len(s.st)) {
		go func() { errs <- s.runEndpoint(ctx, ctl, i) }()
	}
	var first error
	for range s.st {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// runEndpoint is endpoint ep's sequence of steps.
func (s *Search) runEndpoint(ctx context.Context, ctl SearchController, ep sample.EndpointIndex) error {
	select {
	case <-s.st[ep].warmed:
	case <-ctx.Done():
		return ctx.Err()
	}
	ctl.SetPaused(ep, true)
	defer ctl.SetPaused(ep, true)
	if err := s.drain(ctx, ctl, ep, time.Now()); err != nil {
		return err
	}
	s.mu.Lock()
	s.st[ep].began = time.Now()
	s.mu.Unlock()
	for {
		s.mu.Lock()
		load, again, ok := s.st[ep].dec.next()
		before := s.st[ep].dec.outcome()
		s.mu.Unlock()
		if !ok {
			return nil
		}
		s.call(func() {
			if s.onStepStart != nil {
				s.onStepStart(ep, load, again, before)
			}
		})
		began := time.Now()
		m, err := s.step(ctx, ctl, ep, load)
		if err != nil {
			return err
		}
		s.mu.Lock()
		e := s.st[ep]
		e.steps++
		e.busy += time.Since(began)
		m = e.dec.record(m)
		e.dec.next() // settles Done, so that onStep sees a finished search as such
		stopped := e.stopped
		if stopped {
			e.dec.stop() // with the answer so far: what it met, what it missed
		}
		out := e.dec.outcome()
		s.version++
		s.mu.Unlock()
		s.call(func() {
			if s.onStep != nil {
				s.onStep(ep, m, out)
			}
			for i, t := range out.Tiers {
				if s.onTierDone != nil && t.Done && !before.Tiers[i].Done {
					s.onTierDone(ep, t)
				}
			}
		})
		if stopped {
			return nil
		}
	}
}

// call runs a hook, one at a time.
func (s *Search) call(f func()) {
	s.stepMu.Lock()
	defer s.stepMu.Unlock()
	f()
}

// SearchProgress is how far one endpoint's search has come, for progress lines.
type SearchProgress struct {
	Steps   int           // steps measured
	Elapsed time.Duration // since its first step could begin
	// Left is an estimate of the steps still to run; Ramping: the load is still doubling, so
	// Left counts the doublings up to the limit and not the bisection after them.
	Left    int
	Ramping bool
	// PerStep is the mean time a step took so far, its drain included (0 before the first).
	PerStep time.Duration
}

// Progress is where endpoint ep's search stands.
func (s *Search) Progress(ep int) SearchProgress {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ep < 0 || ep >= len(s.st) {
		return SearchProgress{}
	}
	e := s.st[ep]
	p := SearchProgress{Steps: e.steps}
	if !e.began.IsZero() {
		p.Elapsed = time.Since(e.began)
	}
	if e.steps > 0 {
		p.PerStep = e.busy / time.Duration(e.steps)
	}
	p.Left, p.Ramping = e.dec.left()
	return p
}

// ObserveGPU takes one GPU scrape of endpoint ep (--gpu-metrics): its energy counts towards the
// running step when the scrape arrived inside the step's window. Safe from any goroutine.
func (s *Search) ObserveGPU(ep int, r servermetrics.GPUReading) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ep < 0 || ep >= len(s.st) || s.st[ep].cur == nil || !r.EnergyJ.OK || r.Span <= 0 {
		return
	}
	c := s.st[ep].cur
	if r.At.Before(c.start) || (!c.end.IsZero() && r.At.After(c.end)) {
		return
	}
	c.energyJ += r.EnergyJ.V
	c.energySpan += r.Span
}

// EndpointStopped ends endpoint ep's search after its running step, which is measured with
// the requests it has: the Runner stopped the endpoint (identical permanent errors), so no
// step would ever reach its requests.
func (s *Search) EndpointStopped(ep int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ep >= 0 && ep < len(s.st) {
		s.st[ep].stopped = true
	}
}

// step runs one step of endpoint ep at load (the endpoint paused, nothing in flight) and
// measures it.
func (s *Search) step(ctx context.Context, ctl SearchController, ep sample.EndpointIndex, load float64) (Measurement, error) {
	s.apply(ctl, ep, load)
	// Streams just added open their connections first, holding their requests (and, in the
	// open loop, letting arrivals pile up into a burst): the step begins once they are ready.
	if err := s.waitFor(ctx, func() bool { return !ctl.Warming(ep) }); err != nil {
		return Measurement{}, err
	}
	agg := stats.New([]config.Endpoint{s.eps[ep]}, stats.WithTTFTFrom(s.ttftFrom), stats.WithSLOTarget(s.plan.Target))
	c := &liveStep{load: load, agg: agg, slo: s.eps[ep].SLO, vals: newTierValues(s.plan.Tiers, s.eps[ep].Turns)}
	if s.plan.Users == UsersSessions {
		if s.st[ep].sessionTurns == nil {
			s.st[ep].sessionTurns = map[uint64]int{}
		}
		c.vals.sessions = s.st[ep].sessionTurns
	}
	s.mu.Lock()
	c.start = time.Now()
	s.st[ep].cur = c
	s.version++
	s.mu.Unlock()
	ctl.SetPaused(ep, false)
	err := s.waitFor(ctx, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.st[ep].stopped || time.Since(c.start) >= s.plan.StepDuration && c.finished >= s.plan.minRequests()
	})
	s.mu.Lock()
	c.end = time.Now()
	s.mu.Unlock()
	ctl.SetPaused(ep, true)
	if err == nil {
		err = s.drain(ctx, ctl, ep, c.end)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st[ep].cur = nil
	if err != nil {
		return Measurement{}, err
	}
	return measure(c, s.plan.Tiers), nil
}

// apply sets endpoint ep's load: its concurrency, or its arrival rate and enough worker slots
// for the arrivals not to wait in the client (a wait there is no part of any latency, so the
// server would look faster than it is).
func (s *Search) apply(ctl SearchController, ep sample.EndpointIndex, load float64) {
	switch {
	case s.plan.By == ByConcurrency:
		ctl.SetConcurrency(ep, int(load))
		return
	case s.plan.By == ByUsers:
		ctl.SetConcurrency(ep, int(load)) // each stream (lane) holds one conversation or session at a time
		return
	}
	ctl.SetRate(ep, load)
	s.mu.Lock()
	e := s.st[ep]
	e.slots = max(e.slots, RateSlots(load, s.eps[ep].Timeout)) // never fewer: each growth warms every slot's connection
	n := e.slots
	s.mu.Unlock()
	ctl.SetConcurrency(ep, n)
}

// RateSlots is the worker slots of a rate step: room for every arrival of the last timeout
// (the request deadline, at least RateSlotSeconds) in flight at once, so that arrivals wait in
// the client only past MaxConcurrency: an arrival waiting there is load the server never
// sees, and the step would pass at a load it was not given. At least 8.
func RateSlots(rate float64, timeout time.Duration) int {
	secs := max(timeout.Seconds(), RateSlotSeconds)
	return min(MaxConcurrency, max(8, int(math.Ceil(rate*secs))))
}

// RateSlotSeconds is the shortest span RateSlots makes room for.
const RateSlotSeconds = 10

// drain waits until every request of endpoint ep (paused) has ended and reported; those that
// started before end and still run a grace after it are cut.
func (s *Search) drain(ctx context.Context, ctl SearchController, ep sample.EndpointIndex, end time.Time) error {
	cut := false
	return s.waitFor(ctx, func() bool {
		if !cut && time.Since(end) >= s.plan.Grace {
			ctl.CutEndpointBefore(ep, end)
			cut = true
		}
		if ctl.InFlight(ep) > 0 { // before the hook counts: a request counts here first
			return false
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		e := s.st[ep]
		return e.started == e.reported
	})
}

// waitFor polls done until it holds; ctx's error if ctx ends first.
func (s *Search) waitFor(ctx context.Context, done func() bool) error {
	t := time.NewTicker(s.poll)
	defer t.Stop()
	for {
		if done() {
			return nil
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// measure reads a finished step's figures from its Aggregator and its tiers' values (s.mu
// held).
func measure(c *liveStep, tiers []TierSpec) Measurement {
	snap := c.agg.Snapshot(c.end)
	es := &snap.Endpoints[0]
	m := Measurement{
		Load: c.load, Start: c.start, Duration: c.end.Sub(c.start),
		Errors: es.Errors + es.Truncated, Cut: es.Cut,
		OutputTPS: es.OutputTPS, TTFT: es.Whole.TTFT,
		Requests: c.vals.counted,
	}
	if sl := es.SLO; sl != nil {
		m.Requests, m.Good, m.GoodputRPS = sl.Counted, sl.Good, sl.GoodputRPS
		if sl.Counted > 0 {
			m.Attainment = sl.Attainment
		}
	}
	for i := range tiers {
		j := TierJudgement{Binding: -1}
		for k := range tiers[i].Objectives {
			j.Counts = append(j.Counts, c.vals.count(&tiers[i].Objectives[k]))
		}
		m.Tiers = append(m.Tiers, j)
	}
	if (c.vals.turns > 1 || c.vals.sessions != nil) && m.Duration > 0 {
		m.SessionsPerMin = float64(c.vals.lastTurns) / m.Duration.Minutes()
	}
	if c.energySpan > 0 {
		m.PowerW, m.PowerOK = c.energyJ/c.energySpan.Seconds(), true
	}
	return m
}

// CapacityReport is what a search found, for the exporters.
type CapacityReport struct {
	Plan      SearchPlan
	Endpoints []EndpointCapacity // in order
	TTFTFrom  string             // the instant TTFT figures are measured to, e.g. "first-token"
	Complete  bool               // false when the run stopped before every search was done
}

// EndpointCapacity is one endpoint's search.
type EndpointCapacity struct {
	Name, Model string
	Outcome
}

// Report returns where every search stands, with what the exporters say about it.
func (s *Search) Report() CapacityReport {
	rep := CapacityReport{Plan: s.plan, TTFTFrom: s.ttftFrom.Name(), Complete: true}
	for i, o := range s.Outcomes() {
		rep.Endpoints = append(rep.Endpoints, EndpointCapacity{Name: s.eps[i].Name, Model: s.eps[i].Model, Outcome: o})
		rep.Complete = rep.Complete && o.Done
	}
	return rep
}
