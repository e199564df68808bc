package probe

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"tokscope/sample"

	"tokscope/config"
	"tokscope/workload"
)

// lane is one endpoint of a run: its request loops and when they may send. It schedules;
// the concerns it schedules around are types of their own:
//
//   - warm (warmups): the warm-up requests and the gate counted requests wait behind;
//   - quota: the counted requests of Options.Requests (quota.go);
//   - open (arrivals): the open-loop arrival process and its queue (rate.go);
//   - health: the 429 back-off and the permanent-error policy (health.go, permanent.go);
//   - flights: the background requests in flight, which CutBefore cuts (finish.go);
//   - status (statusQueue): the Status events, queued without blocking (status.go).
//
// One background request, from Started to Done, is request.go; interactive Stream/Race
// requests are interactive.go.
//
// Concurrency: mu guards the scheduling state below it, and also health and flights, so
// that a Status (stateLocked) is one consistent snapshot; lock order is status.mu, then mu,
// then a component's own lock (quota, arrivals). The loops are the lane's goroutines,
// counted in the Runner's wg; the other methods are called from any goroutine.
type lane struct {
	r       *Runner
	idx     sample.EndpointIndex
	ep      config.Endpoint
	client  *Client
	work    *workload.Workload
	workErr error // the workload could not be built: every request fails with it
	seq     atomic.Uint64

	warm   *warmups
	quota  *quota
	open   *arrivals // open-loop arrivals (Options.Rate); nil in the closed loop
	status *statusQueue

	ctx    context.Context // this endpoint's loops and waits; cancelled when no new request may start
	cancel context.CancelFunc

	mu       sync.Mutex
	live     bool          // loops may be started
	target   int           // concurrency
	running  []bool        // loop i is running
	paused   bool          // no new background request
	wake     chan struct{} // closed and replaced on pause/concurrency changes
	warming  chan struct{} // not nil while connections are warmed for added streams (warmedLocked)
	ending   bool          // the run is finishing: no new request (finish.go)
	finished bool          // every one of Options.Requests finished, or stopped (permanent.go)
	health   health
	flights  map[uint64]flight // background requests in flight, by seq
}

func newLane(r *Runner, idx sample.EndpointIndex, ep config.Endpoint) *lane {
	l := &lane{
		r: r, idx: idx, ep: ep, client: newClientWith(ep, r.opts.setup),
		warm:   newWarmups(r.opts.Warmup),
		quota:  &quota{limit: r.opts.Requests},
		target: max(ep.Concurrency, 1),
		wake:   make(chan struct{}),
		health: health{stopAfter: r.opts.StopAfterPermanent},
	}
	l.status = newStatusQueue(l.state, r.running)
	if r.opts.Rate > 0 || len(r.opts.Schedule) > 0 {
		l.open = newArrivals(max(r.opts.Rate, 1), r.opts.QueueLimit, r.opts.RateSeed, int(idx))
		if len(r.opts.Schedule) > 0 {
			l.open.schedule = r.opts.Schedule
		}
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
		l.status.publish()
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
	if !l.warm.over() || n <= 0 || !l.live || l.r.opts.coldConns {
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
		l.status.publish()
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
		l.status.publish()
	}
}

// wanted says whether loop i is still wanted; when not, it marks the loop ended, under the
// lock that SetConcurrency spawns under.
func (l *lane) wanted(i int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.live || i >= l.target || l.ctx.Err() != nil || l.quota.exhausted() {
		l.running[i] = false
		return false
	}
	return true
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
	if l.sessionsOn() {
		l.sessionLoop(i) // agent sessions (sessions.go)
		return
	}
	failures := 0    // consecutive failures of this loop: spaces retries against a dead server
	started := false // the loop's first counted request has been let go (stagger)
	var cv convo     // the stream's conversation under --turns
	for l.wantedIn(i, &cv) {
		if !l.waitReady(i) {
			continue // re-check live/target
		}
		warm := l.warm.take()
		if !warm {
			select {
			case <-l.warm.done():
			case <-l.ctx.Done():
				continue
			}
			if !started {
				started = true
				if !l.stagger(i) {
					continue
				}
			}
			if !cv.midway() && !l.quota.takeConversation(l.turns()) {
				continue // all of Options.Requests have started: the loop ends
			}
		}
		// The request is built before the wait for an arrival: a long synthetic prompt takes
		// milliseconds to cut, which would otherwise count as client queue.
		req := l.nextTurn(&cv, warm)
		var arrival time.Time // zero in the closed loop, for warm-ups and later turns
		if l.open != nil && !warm && req.Turn <= 1 {
			at, k, more := l.nextArrival()
			if !more {
				l.quota.giveBack(l.turns())
				cv.c = nil
				continue // paused, concurrency changed or stopped: re-check
			}
			arrival = at
			if l.work != nil && l.work.TraceLen() > 0 {
				req = l.work.TraceRequest(k) // cut before the run: nothing to build now
			}
		}
		s, ok := l.once(warm, arrival, req, cv.reply(req))
		if l.afterTurn(&cv, &s, ok) {
			continue // the conversation goes on after its think time
		}
		if l.open != nil {
			continue // the arrivals pace the requests: no Interval, no error spacing
		}
		if ok && s.Outcome == sample.OutcomeError && !isRateLimited(&s) {
			failures++
		} else {
			failures = 0
		}
		l.sleep(l.ep.Interval, failures)
	}
	l.endConversation(&cv)
}

// sleep waits the interval between two requests of a loop, at least errorPause after a run of
// failures; it ends early when the lane stops.
func (l *lane) sleep(interval time.Duration, failures int) {
	pause := interval
	if failures > 0 {
		pause = max(pause, errorPause(failures))
	}
	if pause <= 0 {
		return
	}
	t := time.NewTimer(pause)
	defer t.Stop()
	select {
	case <-t.C:
	case <-l.ctx.Done():
	}
}

// streamStagger spaces the first counted requests of an endpoint's streams when many start
// at once (the run's start after the warm-ups, '+', a sweep step): stream i waits i × this,
// the ramp at most maxStagger. Released at one instant, 64 requests queue for the CPU on the
// client (and, against the in-process simulator, on the server): TTFT error p99 was 6–8 ms at
// 64 streams; staggered by 0.5 ms it is under 2 ms (BenchmarkConcurrentStreams64). Above
// maxStagger / streamStagger streams (500) the spacing shrinks so that all of them spread
// over maxStagger: cut off at the cap instead, 524 of 1024 streams started at its one instant,
// and stayed in step (BenchmarkCeiling). The ramp is short against any run, and closed-loop
// streams keep their places after their first request.
const (
	streamStagger = 500 * time.Microsecond
	maxStagger    = 250 * time.Millisecond
)

// staggerDelay is stream i's place in the ramp of n streams.
func staggerDelay(i, n int) time.Duration {
	if n <= 0 {
		return 0
	}
	return time.Duration(i) * min(streamStagger, maxStagger/time.Duration(n))
}

// stagger holds loop i's first counted request for its place in the ramp; false when the
// lane stopped meanwhile. Open-loop lanes are paced by their arrivals instead.
func (l *lane) stagger(i int) bool {
	l.mu.Lock()
	n := l.target
	l.mu.Unlock()
	d := staggerDelay(i, n)
	if d <= 0 || l.open != nil || l.r.opts.lockstep {
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
		case l.health.backingOff(time.Now()):
			wait = time.Until(l.health.until)
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
			l.status.publish() // the back-off is over
		case <-l.ctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
	}
}
