package probe

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

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
	// OnDone is called from worker goroutines for every finished request (warm-ups and
	// interactive ones too: see Sample.Warmup and Sample.Stream); must be goroutine-safe.
	OnDone []func(*Sample)
	// OnStart and OnEnd bracket every request, reported or not (a request cancelled by a
	// stop gets OnEnd but no OnDone), so in-flight gauges cannot drift. Goroutine-safe.
	OnStart, OnEnd []func(endpoint string, seq uint64)
	// OnProgress is called from worker goroutines with every Progress of every request (see
	// Progress.Warmup and Progress.Stream), before it is sent on the channel and whether or
	// not the channel has room; the pointer is valid during the call only. Goroutine-safe
	// and quick: it runs between two reads of a stream.
	OnProgress  []func(*Progress)
	EventBuffer int // channel capacity, default 4096

	// Rate > 0 makes every endpoint open-loop (rate.go): requests arrive as a Poisson
	// process of Rate per second per endpoint and wait in a bounded queue for one of the
	// concurrency's worker slots; Interval is then unused. 0 keeps the closed loop.
	Rate       float64
	RateSeed   uint64 // seeds the arrival gaps (mixed with the endpoint index): same seed, same schedule
	QueueLimit int    // arrivals that may wait per endpoint; 0 = DefaultQueueFactor × concurrency

	// Workloads[i] builds the requests of endpoint i (workload.ForEndpoints, which reports a
	// bad prompts file before anything is sent). A missing or nil entry is workload.New(ep)
	// seeded with RateSeed; should that fail, every request of the endpoint fails as a
	// "request" error carrying the reason, and nothing is sent.
	Workloads []*workload.Workload

	coldConns bool // no connection warm-up (WarmConns): benchmarks show what it removes
}

// Runner runs concurrent request loops against each endpoint and reports on one channel.
//
// Every reported request has a Started and a Done event, those cut by the end of the run
// (Sample.Cut) too. Only when Run's ctx ends (the caller abandons the run) may a request that
// had a Started event get no Done.
//
// Ownership: Run's goroutines are the only senders on Events; Run closes it after every one of
// them has returned. The other methods may be called from any goroutine, before or during Run.
type Runner struct {
	eps    []config.Endpoint
	opts   Options
	lanes  []*lane
	events chan Event

	dropped         atomic.Uint64
	droppedProgress atomic.Uint64
	streamIDs       atomic.Uint64

	mu      sync.Mutex
	phase   runPhase
	ctx     context.Context // sends block until this ends (the caller's ctx)
	workCtx context.Context // loops and waits run until this ends (the end of the run)
	reqCtx  context.Context // requests run until this ends: the cut (errCut) or the caller's ctx
	pending []func(context.Context)
	stopc   chan time.Duration // Stop's grace (finish.go)
	ended   RunEnd             // how the run ended (End), set before Events closes
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
		events:  make(chan Event, opts.EventBuffer),
		allDone: make(chan struct{}),
		stopc:   make(chan time.Duration, 1),
	}
	r.lanes = make([]*lane, len(eps))
	for i, ep := range r.eps {
		l := newLane(r, i, ep)
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
func (r *Runner) Events() <-chan Event { return r.events }

// DroppedDeltas counts Delta events dropped because the channel was full.
func (r *Runner) DroppedDeltas() uint64 { return r.dropped.Load() }

// DroppedProgress counts Progress events dropped because the channel was full (nothing of
// their counts is lost: the next Progress and the Done carry them).
func (r *Runner) DroppedProgress() uint64 { return r.droppedProgress.Load() }

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

	r.mu.Lock()
	if r.phase != phaseNew {
		r.mu.Unlock()
		return errors.New("probe: Runner.Run called twice")
	}
	r.phase, r.ctx, r.workCtx, r.reqCtx = phaseRunning, sendCtx, workCtx, reqCtx
	r.left = len(r.lanes)
	if r.left == 0 && r.opts.Requests > 0 {
		close(r.allDone)
	}
	drain := make(chan struct{})
	for _, l := range r.lanes {
		r.senders.Add(1)
		go l.statusLoop(sendCtx, drain)
		l.start(workCtx)
	}
	for _, f := range r.pending {
		r.goLocked(f)
	}
	r.pending = nil
	r.mu.Unlock()
	for _, l := range r.lanes {
		l.publish()
	}

	grace, finishing := r.opts.Grace, true
	select {
	case <-ctx.Done():
		finishing = false // abandoned
	case <-expired:
	case <-r.allDone:
	case grace = <-r.stopc:
	}

	r.mu.Lock()
	r.phase = phaseFinishing
	if !finishing {
		r.phase = phaseStopped
	}
	r.mu.Unlock()
	for _, l := range r.lanes {
		l.stop(finishing)
	}
	stopWork()
	if finishing {
		r.finish(ctx, grace, cutAll)
	}
	r.wg.Wait() // request loops and interactive requests
	r.mu.Lock()
	r.phase = phaseStopped
	r.mu.Unlock()
	close(drain)
	r.senders.Wait()
	cancelSend()
	for _, l := range r.lanes {
		l.client.CloseIdleConnections()
	}
	close(r.events)
	return nil
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

// send delivers an event that must not be dropped (Started, Done, Status): it blocks while
// the consumer lags, and gives up only when the run is over.
func (r *Runner) send(ctx context.Context, ev Event) {
	select {
	case r.events <- ev:
	case <-ctx.Done():
	}
}

// sendDelta never blocks: live text is worth less than the producer's timing.
func (r *Runner) sendDelta(d *Delta) {
	select {
	case r.events <- d:
	default:
		r.dropped.Add(1)
	}
}

// sendProgress never blocks either: a dropped Progress loses nothing but its instant.
func (r *Runner) sendProgress(p *Progress) {
	select {
	case r.events <- p:
	default:
		r.droppedProgress.Add(1)
	}
}

func (r *Runner) lane(ep int) *lane {
	if ep < 0 || ep >= len(r.lanes) {
		return nil
	}
	return r.lanes[ep]
}

// SetPaused pauses or resumes endpoint ep's background loops. Requests in flight finish and
// are reported; no new one starts while paused. Interactive Stream/Race requests still run.
func (r *Runner) SetPaused(ep int, paused bool) {
	if l := r.lane(ep); l != nil {
		l.setPaused(paused)
	}
}

// Paused reports whether endpoint ep is paused.
func (r *Runner) Paused(ep int) bool {
	if l := r.lane(ep); l != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.paused
	}
	return false
}

// SetConcurrency sets the number of request loops of endpoint ep (n < 1 counts as 1). Extra
// loops start at once; surplus loops end after their request in flight.
func (r *Runner) SetConcurrency(ep, n int) {
	if l := r.lane(ep); l != nil {
		l.setConcurrency(max(n, 1))
	}
}

// Concurrency returns endpoint ep's number of request loops.
func (r *Runner) Concurrency(ep int) int {
	if l := r.lane(ep); l != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.target
	}
	return 0
}

// Stream sends one interactive request with prompt to endpoint ep. Its Started, Delta and
// Done events carry the returned stream id (never 0); consumers keep it out of statistics.
// It returns 0 when ep is out of range or the Runner has stopped. Called before Run, the
// request starts when Run does.
func (r *Runner) Stream(ep int, prompt string) uint64 {
	l := r.lane(ep)
	if l == nil {
		return 0
	}
	id := r.streamIDs.Add(1)
	if !r.launch(func(ctx context.Context) { l.interactive(ctx, id, prompt) }) {
		return 0
	}
	return id
}

// Race sends prompt to every endpoint at once under one stream id: all requests are prepared,
// then released at one instant. It returns 0 when there are no endpoints or the Runner has
// stopped.
func (r *Runner) Race(prompt string) uint64 {
	if len(r.lanes) == 0 {
		return 0
	}
	id := r.streamIDs.Add(1)
	ok := r.launch(func(ctx context.Context) {
		var ready, done sync.WaitGroup
		gate := make(chan struct{})
		for _, l := range r.lanes {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				ready.Done()
				select {
				case <-gate:
				case <-ctx.Done():
					return
				}
				l.interactive(ctx, id, prompt)
			}()
		}
		ready.Wait()
		close(gate)
		done.Wait()
	})
	if !ok {
		return 0
	}
	return id
}

// lane is one endpoint's scheduling state.
type lane struct {
	r       *Runner
	idx     int
	ep      config.Endpoint
	client  *Client
	work    *workload.Workload
	workErr error // the workload could not be built: every request fails with it

	seq         atomic.Uint64
	warmTickets atomic.Int64 // warm-up requests handed out
	warmEnded   atomic.Int64 // warm-up requests finished
	warmGate    chan struct{}
	counted     atomic.Int64 // finished counted requests (cut ones are not)
	open        *arrivals    // open-loop arrivals (Options.Rate); nil in the closed loop

	ctx    context.Context // this endpoint's loops and waits; cancelled when no new request may start
	cancel context.CancelFunc

	mu           sync.Mutex
	live         bool   // loops may be started
	target       int    // concurrency
	running      []bool // loop i is running
	paused       bool
	wake         chan struct{} // closed and replaced on pause/concurrency changes
	warming      chan struct{} // not nil while connections are warmed for added streams (warmedLocked)
	inFlight     int
	backoffUntil time.Time
	backoff      time.Duration // length of the current back-off
	rateLimited  int           // consecutive 429s
	lastFailed   bool
	finished     bool   // every one of Options.Requests finished
	ending       bool   // the run is finishing: no new request (finish.go)
	permKind     string // the last permanent error's kind (permanent.go)
	permCount    int    // identical permanent errors in a row
	permMsg      string // the last one's message
	stopWhy      string // why the endpoint stopped after permanent errors; "" while it runs
	tickets      int    // counted requests started, up to Options.Requests
	allStarted   bool   // tickets reached Options.Requests
	flights      map[uint64]flight

	statusMu     sync.Mutex // orders status computation with its queueing
	lastStatus   Status
	statusQ      []Status
	statusSignal chan struct{}
}

func newLane(r *Runner, idx int, ep config.Endpoint) *lane {
	l := &lane{
		r: r, idx: idx, ep: ep, client: NewClient(ep),
		target:       max(ep.Concurrency, 1),
		wake:         make(chan struct{}),
		warmGate:     make(chan struct{}),
		statusSignal: make(chan struct{}, 1),
	}
	if r.opts.Warmup == 0 {
		close(l.warmGate)
	}
	if r.opts.Rate > 0 {
		l.open = newArrivals(r.opts.Rate, r.opts.QueueLimit, r.opts.RateSeed, idx)
	}
	return l
}

func (l *lane) start(runCtx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ctx, l.cancel = context.WithCancel(runCtx)
	l.live = true
	l.spawnLocked(nil)
	if l.open != nil {
		l.r.wg.Add(1)
		go l.arrive()
	}
}

// stop ends the lane's loops: no new request starts. finishing says that the run is ending
// with a grace (requests in flight go on, the Status says how many); otherwise it is abandoned.
func (l *lane) stop(finishing bool) {
	l.mu.Lock()
	l.live = false
	l.ending = finishing
	cancel := l.cancel
	l.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if finishing {
		l.publish()
	}
}

// spawnLocked starts the missing loops below target, each first waiting for gate (if not
// nil); l.mu held.
func (l *lane) spawnLocked(gate <-chan struct{}) {
	if !l.live {
		return
	}
	for len(l.running) < l.target {
		l.running = append(l.running, false)
	}
	for i := 0; i < l.target; i++ {
		if !l.running[i] {
			l.running[i] = true
			l.r.wg.Add(1)
			go l.loop(i, gate)
		}
	}
}

// warmedLocked is a gate that opens once the lane's connections are warm (WarmConns) for
// loops added after the warm-ups: a sweep step or '+' starts new streams on warm connections
// too. It warms one connection per stream, n in all (the new target), not only the added
// ones: the warm-up requests would otherwise take the running streams' idle connections and
// leave new streams to connect inside their first TTFT. Meanwhile the running loops hold
// their next request (l.warming, waitReady), so that a warm-up cannot take a connection from
// under a stream about to send; it lasts one round trip to the server. Before the warm-ups are
// over it is nil: their end warms one connection per stream.
func (l *lane) warmedLocked(n int) <-chan struct{} {
	select {
	case <-l.warmGate:
	default:
		return nil
	}
	if n <= 0 || !l.live || l.r.opts.coldConns {
		return nil
	}
	gate := make(chan struct{})
	l.warming = gate
	ctx := l.ctx
	l.r.wg.Add(1)
	go func() {
		defer l.r.wg.Done()
		l.client.WarmConns(ctx, n)
		l.mu.Lock()
		if l.warming == gate {
			l.warming = nil
			l.wakeLocked()
		}
		l.mu.Unlock()
		close(gate)
	}()
	return gate
}

func (l *lane) wakeLocked() {
	close(l.wake)
	l.wake = make(chan struct{})
}

func (l *lane) setPaused(p bool) {
	l.mu.Lock()
	changed := l.paused != p
	l.paused = p
	if changed {
		l.wakeLocked()
	}
	l.mu.Unlock()
	if changed {
		l.publish()
	}
}

func (l *lane) setConcurrency(n int) {
	l.mu.Lock()
	changed := l.target != n
	added := n - l.target
	l.target = n
	if changed {
		l.wakeLocked()
		warm := 0
		if added > 0 {
			warm = n
		}
		l.spawnLocked(l.warmedLocked(warm))
	}
	l.mu.Unlock()
	if changed {
		l.publish()
	}
}

// loop is request loop i: wait while paused or backing off, send, report, sleep the interval.
func (l *lane) loop(i int, gate <-chan struct{}) {
	defer l.r.wg.Done()
	if gate != nil {
		select {
		case <-gate:
		case <-l.ctx.Done():
		}
	}
	failures := 0    // consecutive failures of this loop: spaces retries against a dead server
	started := false // the loop's first counted request has been let go (stagger)
	for {
		l.mu.Lock()
		if !l.live || i >= l.target || l.ctx.Err() != nil || l.allStarted {
			l.running[i] = false // decided under the lock that SetConcurrency spawns under
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		if !l.waitReady(i) {
			continue // re-check live/target
		}
		warm := l.warmTickets.Add(1) <= int64(l.r.opts.Warmup)
		if !warm {
			select {
			case <-l.warmGate:
			case <-l.ctx.Done():
				continue
			}
			if !started {
				started = true
				if !l.stagger(i) {
					continue
				}
			}
			if !l.takeTicket() {
				continue // all of Options.Requests have started: the loop ends
			}
		}
		// The request is built before the wait for an arrival: a long synthetic prompt takes
		// milliseconds to cut, which would otherwise count as client queue.
		req := l.nextRequest()
		var arrival time.Time // zero in the closed loop and for warm-ups
		if l.open != nil && !warm {
			at, more := l.nextArrival()
			if !more {
				l.returnTicket()
				continue // paused, concurrency changed or stopped: re-check
			}
			arrival = at
		}
		s, ok := l.once(warm, arrival, req)
		if l.open != nil {
			continue // the arrivals pace the requests: no Interval, no error spacing
		}
		pause := l.ep.Interval
		if ok && s.Outcome == OutcomeError && !isRateLimited(&s) {
			failures++
			pause = max(pause, errorPause(failures))
		} else {
			failures = 0
		}
		if pause > 0 {
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-l.ctx.Done():
				t.Stop()
			}
		}
	}
}

// streamStagger spaces the first counted requests of an endpoint's streams when many start
// at once (the run's start after the warm-ups, '+', a sweep step): stream i waits i × this,
// at most maxStagger. Released at one instant, 64 requests queue for the CPU on the client
// (and, against the in-process simulator, on the server): TTFT error p99 was 6–8 ms at 64
// streams; staggered by 0.5 ms it is under 2 ms (BenchmarkConcurrentStreams64). The ramp
// (32 ms at 64 streams) is short against any request, and closed-loop streams drift apart
// anyway after their first request.
const (
	streamStagger = 500 * time.Microsecond
	maxStagger    = 250 * time.Millisecond
)

// stagger holds loop i's first counted request for its place in the ramp; false when the
// lane stopped meanwhile. Open-loop lanes are paced by their arrivals instead.
func (l *lane) stagger(i int) bool {
	d := min(time.Duration(i)*streamStagger, maxStagger)
	if d <= 0 || l.open != nil {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.ctx.Done():
		return false
	}
}

// errorPause grows 50 ms, 100 ms, … to 5 s so a refused connection does not spin a core.
func errorPause(failures int) time.Duration {
	return min(50*time.Millisecond<<min(failures-1, 10), 5*time.Second)
}

// waitReady blocks while the lane is paused or backing off; false when loop i should re-check
// whether it is still wanted (stopped, concurrency lowered).
func (l *lane) waitReady(i int) bool {
	for {
		l.mu.Lock()
		if !l.live || i >= l.target || l.ctx.Err() != nil {
			l.mu.Unlock()
			return false
		}
		wake := l.wake
		var wait time.Duration
		switch {
		case l.paused, l.warming != nil:
			wait = -1 // until woken
		case time.Now().Before(l.backoffUntil):
			wait = time.Until(l.backoffUntil)
		default:
			l.mu.Unlock()
			return true
		}
		l.mu.Unlock()
		var timer *time.Timer
		var expired <-chan time.Time
		if wait > 0 {
			timer = time.NewTimer(wait)
			expired = timer.C
		}
		select {
		case <-wake:
		case <-expired:
			l.publish() // the back-off is over
		case <-l.ctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// once sends one background request; ok=false when its sample was not reported (the run was
// abandoned). arrival, when not zero, is the open-loop arrival it serves: the time from it to
// t0 is the client queue.
func (l *lane) once(warm bool, arrival time.Time, req workload.Request) (Sample, bool) {
	r := l.r
	seq := l.seq.Add(1)
	ctx, cancel := context.WithCancelCause(r.reqCtx)
	defer cancel(nil)
	at := l.begin(seq, cancel)
	r.send(r.ctx, &Started{Endpoint: l.idx, Seq: seq, At: at})
	live := Live{Progress: l.progressSink(seq, 0, warm)}
	if r.opts.Deltas {
		live.Delta = l.deltaSink(seq, 0)
	}
	l.hooks(r.opts.OnStart, seq)
	s := l.send(ctx, req, live)
	l.hooks(r.opts.OnEnd, seq)
	s.Seq, s.Warmup = seq, warm
	markCut(ctx, &s)
	if !arrival.IsZero() {
		s.Queue = s.Start.Sub(arrival)
	}
	l.end(seq, &s)

	if warm {
		defer func() {
			if l.warmEnded.Add(1) == int64(r.opts.Warmup) {
				l.warmConns()
				close(l.warmGate)
			}
		}()
	}
	if abandoned(ctx, &s) {
		return s, false // cancelled with the run: not a request the endpoint failed
	}
	last := !warm && !s.Cut && r.opts.Requests > 0 && l.counted.Add(1) == int64(r.opts.Requests)
	l.report(&s, 0)
	if last { // every counted request has started (tickets), and this was the last to finish
		l.mu.Lock()
		last = !l.finished
		l.finished, l.live = true, false
		cancel := l.cancel
		l.mu.Unlock()
		cancel()
		l.publish()
		if last {
			r.endpointFinished()
		}
	}
	l.stopPermanent()
	return s, true
}

// warmConns opens one connection per stream before the counted requests start together, so
// that none of them opens its connection inside its TTFT (a request that still does shows its
// connect phase).
func (l *lane) warmConns() {
	if l.r.opts.coldConns {
		return
	}
	l.mu.Lock()
	n := l.target
	l.mu.Unlock()
	l.client.WarmConns(l.ctx, n)
}

// interactive runs one Stream/Race request on this endpoint.
func (l *lane) interactive(ctx context.Context, id uint64, prompt string) {
	r := l.r
	seq := l.seq.Add(1)
	r.send(ctx, &Started{Endpoint: l.idx, Seq: seq, Stream: id, At: time.Now()})
	l.hooks(r.opts.OnStart, seq)
	var req workload.Request
	if l.work != nil {
		req = l.work.Interactive(prompt)
	}
	s := l.send(ctx, req, Live{Delta: l.deltaSink(seq, id), Progress: l.progressSink(seq, id, false)})
	l.hooks(r.opts.OnEnd, seq)
	s.Seq, s.Stream = seq, id
	markCut(ctx, &s)
	if abandoned(ctx, &s) {
		return
	}
	if isRateLimited(&s) {
		l.rateLimit(&s) // the limit applies to the key, whoever hit it
		l.publish()
	}
	l.report(&s, id)
}

func (l *lane) nextRequest() workload.Request {
	if l.work == nil {
		return workload.Request{}
	}
	return l.work.Next()
}

// send measures one request, or fails it at once when the workload could not be built.
func (l *lane) send(ctx context.Context, req workload.Request, live Live) Sample {
	if l.workErr == nil {
		return l.client.SendLive(ctx, req, live)
	}
	s := newSample(l.ep)
	s.Start, s.End = time.Now(), 0
	s.Outcome, s.ErrorKind = OutcomeError, ErrRequest
	s.ErrorMessage = readable(l.workErr.Error())
	return s
}

func (l *lane) hooks(fs []func(string, uint64), seq uint64) {
	for _, f := range fs {
		f(l.ep.Name, seq)
	}
}

func (l *lane) report(s *Sample, stream uint64) {
	s.KeepMicroseconds() // what the record keeps: a replay then aggregates the same values
	for _, f := range l.r.opts.OnDone {
		f(s)
	}
	l.r.send(l.r.ctx, &Done{Endpoint: l.idx, Stream: stream, Sample: *s})
}

func (l *lane) deltaSink(seq, stream uint64) func(Delta) {
	return func(d Delta) {
		d.Endpoint, d.Seq, d.Stream = l.idx, seq, stream
		l.r.sendDelta(&d)
	}
}

// progressSink reports a request's Progress to the OnProgress hooks and on the channel.
func (l *lane) progressSink(seq, stream uint64, warm bool) func(*Progress) {
	hooks := l.r.opts.OnProgress
	return func(p *Progress) {
		p.Endpoint, p.Seq, p.Stream, p.Warmup = l.idx, seq, stream, warm
		for _, f := range hooks {
			f(p)
		}
		ev := *p
		l.r.sendProgress(&ev)
	}
}

// begin accounts a background request about to be sent (cancel cuts it: CutBefore) and
// returns the instant it started.
func (l *lane) begin(seq uint64, cancel context.CancelCauseFunc) time.Time {
	at := time.Now()
	l.mu.Lock()
	l.inFlight++
	if l.flights == nil {
		l.flights = map[uint64]flight{}
	}
	l.flights[seq] = flight{at: at, cancel: cancel}
	l.mu.Unlock()
	l.publish()
	return at
}

func (l *lane) end(seq uint64, s *Sample) {
	l.mu.Lock()
	l.inFlight--
	delete(l.flights, seq)
	switch {
	case s.ErrorKind == ErrCanceled:
		// cut or abandoned with the run: says nothing about the endpoint
	case isRateLimited(s):
		l.rateLimitLocked(s)
		l.permCount = 0
	case isPermanent(s):
		l.permanentLocked(s)
	case s.Outcome == OutcomeError:
		l.lastFailed, l.permCount = true, 0
	default:
		l.lastFailed, l.rateLimited, l.permCount = false, 0, 0
	}
	l.mu.Unlock()
	l.publish()
}

// isRateLimited: 429, or Anthropic's 529 overloaded_error, which asks for the same back-off.
func isRateLimited(s *Sample) bool {
	return s.HTTPStatus == 429 || s.ErrorKind == "http_429" || s.HTTPStatus == 529 || s.ErrorKind == "http_529"
}

func (l *lane) rateLimit(s *Sample) {
	l.mu.Lock()
	l.rateLimitLocked(s)
	l.mu.Unlock()
}

// rateLimitLocked starts a back-off: Retry-After when the server gave one, else 1 s, 2 s, …
// 30 s with ±20 % jitter so that loops do not return in lockstep. Back-off happens before t0,
// so it is never part of any latency.
func (l *lane) rateLimitLocked(s *Sample) {
	l.lastFailed = true
	l.rateLimited++
	d := s.RetryAfter
	if d <= 0 {
		d = min(time.Second<<min(l.rateLimited-1, 5), 30*time.Second)
		d = time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	}
	now := time.Now()
	if until := now.Add(d); until.After(l.backoffUntil) {
		// What this 429 adds to the time spent backing off: all of d, or the extension of a
		// back-off already running.
		s.Backoff = until.Sub(later(now, l.backoffUntil))
		l.backoffUntil, l.backoff = until, d
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// stateLocked derives the endpoint's state; l.mu held.
func (l *lane) stateLocked() Status {
	st := Status{Endpoint: l.idx, Concurrency: l.target, ConnPerRequest: l.client.ClosesConnections(),
		Reason: l.permanentReasonLocked()}
	switch {
	case l.finished:
		st.State = StateStopped
	case l.ending && l.inFlight > 0:
		st.State, st.InFlight = StateFinishing, l.inFlight
	case l.ending:
		st.State = StateStopped
	case l.paused:
		st.State = StatePaused
	case time.Now().Before(l.backoffUntil):
		st.State, st.Until, st.Backoff = StateBackoff, l.backoffUntil, l.backoff
	case l.inFlight > 0:
		st.State = StateStreaming
	case l.lastFailed:
		st.State = StateError
	default:
		st.State = StateIdle
	}
	return st
}

// publish queues a Status when the state changed since the last one queued. It never blocks:
// SetPaused and SetConcurrency are called by the consumer itself, which must not wait on its
// own channel. statusLoop sends the queue in order.
func (l *lane) publish() {
	l.statusMu.Lock()
	defer l.statusMu.Unlock()
	l.mu.Lock()
	st := l.stateLocked()
	l.mu.Unlock()
	if st == l.lastStatus || !l.r.running() {
		return // not running: Run publishes every lane's state when it starts
	}
	l.lastStatus = st
	l.statusQ = append(l.statusQ, st)
	select {
	case l.statusSignal <- struct{}{}:
	default:
	}
}

// statusLoop sends queued statuses, blocking like Done; on drain it sends what is left and
// returns.
func (l *lane) statusLoop(sendCtx context.Context, drain <-chan struct{}) {
	defer l.r.senders.Done()
	for {
		draining := false
		select {
		case <-l.statusSignal:
		case <-drain:
			draining = true
		case <-sendCtx.Done():
			return
		}
		l.statusMu.Lock()
		q := l.statusQ
		l.statusQ = nil
		l.statusMu.Unlock()
		for _, st := range q {
			l.r.send(sendCtx, &st)
		}
		if draining {
			return
		}
	}
}

// running: events are being sent (the run is going on or finishing).
func (r *Runner) running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.phase == phaseRunning || r.phase == phaseFinishing
}
