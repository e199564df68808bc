// Package probe is the measurement engine: one streamed request becomes one sample.Sample, and
// a Runner schedules the request loops of every endpoint and emits the events of package sample.
//
// It reads config and must not import stats, export, ui, bubbletea or lipgloss.
package probe

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"tokscope/sample"

	"tokscope/config"
	"tokscope/workload"
)

// Options tune a Runner. The zero value runs every endpoint until the context ends, with no
// warm-up and background deltas off.
type Options struct {
	Warmup int // warm-up requests per endpoint not counted (default 1 applied by caller; 0 allowed)
	// Requests > 0: each endpoint starts exactly this many counted (non-warm-up) requests and
	// stops once all of them have finished; 0 = unlimited.
	Requests int
	Duration time.Duration // end the run after this (finish.go); 0 = until ctx done or Stop
	// Grace is how long requests in flight may finish once the run ends (Duration, Stop,
	// every endpoint done): no new request starts, and what is still running when it is over
	// is cut (Sample.Cut). 0 cuts at once.
	Grace time.Duration
	// StopAfterPermanent > 0 stops an endpoint after that many identical permanent errors
	// (401, 403, 404) in a row (permanent.go; headless runs). 0: it only backs off.
	StopAfterPermanent int
	Deltas             bool // emit Delta events for background requests too (interactive streams always emit)
	// OnStart is called on the request's worker goroutine for every request (warm-ups and
	// interactive ones too) after its Started event is sent and before the request is sent,
	// so before the Runner can count it out of flight (InFlight). The capacity search counts
	// the requests begun with it: a step's drain must know every one of them before their
	// events are read (sweep.Search.OnStart). Goroutine-safe and quick. Everything else that
	// consumes requests reads the Runner's events (a fanout.Loop's observers).
	OnStart     []func(endpoint string, seq uint64)
	EventBuffer int // channel capacity, default 4096

	// Rate > 0 makes every endpoint open-loop (rate.go): requests arrive as a Poisson
	// process of Rate per second per endpoint and wait in a bounded queue for one of the
	// concurrency's worker slots; Interval is then unused. 0 keeps the closed loop.
	Rate     float64
	RateSeed uint64 // seeds the arrival gaps (mixed with the endpoint index): same seed, same schedule
	// Schedule, when not empty, makes every endpoint open-loop on these arrival offsets from
	// the start (a --trace) instead of Poisson draws; request k of the endpoint's workload
	// trace (workload.TraceRequest) serves arrival k. Rate is then only reported.
	Schedule   []time.Duration
	QueueLimit int // arrivals that may wait per endpoint; 0 = DefaultQueueFactor × concurrency

	// Workloads[i] builds the requests of endpoint i (workload.ForEndpoints, which reports a
	// bad prompts file before anything is sent). A missing or nil entry is workload.New(ep)
	// seeded with RateSeed; should that fail, every request of the endpoint fails as a
	// "request" error carrying the reason, and nothing is sent.
	Workloads []*workload.Workload

	coldConns bool // no connection warm-up (WarmConns): benchmarks show what it removes
	lockstep  bool // no stagger: every stream's first request at one instant (the ceiling's worst case)
	// setup builds the Runner's clients (client.go): the product's when zero; a test's own
	// resolver, clock or token counting, for its Runner alone.
	setup clientSetup
}

// Runner runs concurrent request loops against each endpoint and reports on one channel.
//
// Every reported request has a Started and a Done event, those cut by the end of the run
// (Sample.Cut) too. Only when Run's ctx ends (the caller abandons the run) may a request that
// had a Started event get no Done.
//
// The Runner owns the run's phases, its contexts and the goroutines it waits for; each
// endpoint's scheduling is a lane (lane.go), and the events go out through one outbox.
//
// Ownership: Run's goroutines are the only senders on Events; Run closes it after every one of
// them has returned. The other methods may be called from any goroutine, before or during Run.
type Runner struct {
	eps       []config.Endpoint
	opts      Options
	lanes     []*lane
	out       *outbox
	streamIDs atomic.Uint64

	mu      sync.Mutex
	phase   runPhase
	ctx     context.Context // sends block until this ends (the caller's ctx)
	reqCtx  context.Context // requests run until this ends: the cut (errCut) or the caller's ctx
	pending []func(context.Context)
	stopc   chan time.Duration // Stop's grace (finish.go)
	ended   sample.RunEnd      // how the run ended (End), set before Events closes
	wg      sync.WaitGroup     // request loops and interactive requests
	senders sync.WaitGroup     // status senders
	left    int                // endpoints not finished (Options.Requests, or stopped: permanent.go)
	allDone chan struct{}      // closed when left reaches 0
}

type runPhase int

const (
	phaseNew runPhase = iota
	phaseRunning
	phaseFinishing // no new request; those in flight have the grace to finish (finish.go)
	phaseStopped
)

// NewRunner prepares one lane (client, connection pool, state) per endpoint, and the
// tokenizer of live token counts. Nothing is sent before Run.
func NewRunner(eps []config.Endpoint, opts Options) *Runner {
	WarmTokenizer()
	if opts.EventBuffer <= 0 {
		opts.EventBuffer = 4096
	}
	opts.Warmup = max(opts.Warmup, 0)
	r := &Runner{
		eps:     append([]config.Endpoint(nil), eps...),
		opts:    opts,
		out:     newOutbox(opts.EventBuffer),
		allDone: make(chan struct{}),
		stopc:   make(chan time.Duration, 1),
	}
	r.lanes = make([]*lane, len(eps))
	for i, ep := range r.eps {
		l := newLane(r, sample.EndpointIndex(i), ep)
		if i < len(opts.Workloads) {
			l.work = opts.Workloads[i]
		}
		if l.work == nil {
			l.work, l.workErr = workload.New(ep, workload.Options{Seed: opts.RateSeed, Endpoint: i})
		}
		r.lanes[i] = l
	}
	return r
}

// Endpoints returns the endpoints in the order events refer to them by index.
func (r *Runner) Endpoints() []config.Endpoint { return append([]config.Endpoint(nil), r.eps...) }

// Events is the channel of *Started, *Delta, *Progress, *Done and *Status events; closed
// after Run returns.
func (r *Runner) Events() <-chan sample.Event { return r.out.events }

// DroppedDeltas counts Delta events dropped because the channel was full.
func (r *Runner) DroppedDeltas() uint64 { return r.out.droppedDeltas.Load() }

// Run sends requests until the run ends: Options.Duration has elapsed, Stop was called, or
// every endpoint has finished its Options.Requests. Then no new request starts, those in
// flight have the grace (Options.Grace, Stop's) to finish, and what is still running after it
// is cut and reported as such (finish.go). When ctx ends instead, the run is abandoned: the
// requests in flight are cancelled and not reported. Run waits for every goroutine it started
// and closes Events. Events are sent blocking until ctx is done: every reported Done and Status
// reaches a consumer that keeps reading. It returns nil on any of these ends, and an error only
// when called twice.
func (r *Runner) Run(ctx context.Context) error {
	sendCtx, cancelSend := context.WithCancel(ctx)
	defer cancelSend()
	reqCtx, cutAll := context.WithCancelCause(sendCtx)
	defer cutAll(nil)
	workCtx, stopWork := context.WithCancel(sendCtx)
	defer stopWork()
	var expired <-chan time.Time
	if r.opts.Duration > 0 {
		t := time.NewTimer(r.opts.Duration)
		defer t.Stop()
		expired = t.C
	}
	drain := make(chan struct{})
	if !r.start(sendCtx, workCtx, reqCtx, drain) {
		return errors.New("probe: Runner.Run called twice")
	}

	grace, finishing := r.opts.Grace, true
	select {
	case <-ctx.Done():
		finishing = false // abandoned
	case <-expired:
	case <-r.allDone:
	case grace = <-r.stopc:
	}

	if finishing {
		r.setPhase(phaseFinishing)
	} else {
		r.setPhase(phaseStopped)
	}
	for _, l := range r.lanes {
		l.stop(finishing)
	}
	stopWork()
	if finishing {
		r.finish(ctx, grace, cutAll)
	}
	r.wg.Wait() // request loops and interactive requests
	r.setPhase(phaseStopped)
	close(drain)
	r.senders.Wait()
	cancelSend()
	for _, l := range r.lanes {
		l.client.CloseIdleConnections()
	}
	close(r.out.events)
	return nil
}

// start moves a new Runner to running: every lane's status sender and loops start (under
// workCtx), the Stream/Race requests asked for before Run are launched, and every lane
// publishes its state. False when the Runner was already run.
func (r *Runner) start(sendCtx, workCtx, reqCtx context.Context, drain <-chan struct{}) bool {
	r.mu.Lock()
	if r.phase != phaseNew {
		r.mu.Unlock()
		return false
	}
	r.phase, r.ctx, r.reqCtx = phaseRunning, sendCtx, reqCtx
	r.left = len(r.lanes)
	if r.left == 0 && r.opts.Requests > 0 {
		close(r.allDone)
	}
	for _, l := range r.lanes {
		r.senders.Add(1)
		go func() {
			defer r.senders.Done()
			l.status.run(sendCtx, drain, r.out.send)
		}()
		l.start(workCtx)
	}
	for _, f := range r.pending {
		r.goLocked(f)
	}
	r.pending = nil
	r.mu.Unlock()
	for _, l := range r.lanes {
		l.status.publish()
	}
	return true
}

func (r *Runner) setPhase(p runPhase) {
	r.mu.Lock()
	r.phase = p
	r.mu.Unlock()
}

// goLocked starts f on a goroutine Run waits for; r.mu must be held and the run running. f's
// requests run until the cut, like the background ones.
func (r *Runner) goLocked(f func(context.Context)) {
	r.wg.Add(1)
	ctx := r.reqCtx
	go func() {
		defer r.wg.Done()
		f(ctx)
	}()
}

// launch runs f now if running, later at Run if not started yet; false once stopped.
func (r *Runner) launch(f func(context.Context)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.phase {
	case phaseNew:
		r.pending = append(r.pending, f)
	case phaseRunning:
		r.goLocked(f)
	default:
		return false
	}
	return true
}

// endpointFinished is called once per lane that finished its Options.Requests.
func (r *Runner) endpointFinished() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.left--
	if r.left == 0 {
		close(r.allDone)
	}
}

// running: events are being sent (the run is going on or finishing).
func (r *Runner) running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.phase == phaseRunning || r.phase == phaseFinishing
}

func (r *Runner) lane(ep sample.EndpointIndex) *lane {
	if !ep.In(len(r.lanes)) {
		return nil
	}
	return r.lanes[ep]
}

// SetPaused pauses or resumes endpoint ep's background loops. Requests in flight finish and
// are reported; no new one starts while paused. Interactive Stream/Race requests still run.
func (r *Runner) SetPaused(ep sample.EndpointIndex, paused bool) {
	if l := r.lane(ep); l != nil {
		l.setPaused(paused)
	}
}

// Paused reports whether endpoint ep is paused.
func (r *Runner) Paused(ep sample.EndpointIndex) bool {
	if l := r.lane(ep); l != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.paused
	}
	return false
}

// SetConcurrency sets the number of request loops of endpoint ep (n < 1 counts as 1). Extra
// loops start at once; surplus loops end after their request in flight.
func (r *Runner) SetConcurrency(ep sample.EndpointIndex, n int) {
	if l := r.lane(ep); l != nil {
		l.setConcurrency(max(n, 1))
	}
}

// Concurrency returns endpoint ep's number of request loops.
func (r *Runner) Concurrency(ep sample.EndpointIndex) int {
	if l := r.lane(ep); l != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.target
	}
	return 0
}
