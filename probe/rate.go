package probe

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"tokscope/sample"
)

// Open-loop arrivals (Options.Rate).
//
// In the closed loop a stream sends its next request when the previous one ends, so a slow
// server slows the load down with it and nothing ever waits in the client. In the open loop
// requests arrive on their own schedule — a Poisson process of Rate per second per endpoint
// (exponential gaps drawn from a seeded generator) — and each waits in a bounded FIFO until
// one of the endpoint's worker slots (its concurrency) is free. That wait is the client queue
// (Sample.Queue = t0 − arrival): measured, reported, never part of any latency, since t0 is
// taken after it. An arrival that finds the queue full is dropped and counted
// (Runner.Arrivals); it never becomes a request.

// DefaultQueueFactor sets the queue bound when Options.QueueLimit is 0: this many waiting
// arrivals per worker slot. An overloaded endpoint then shows a client queue of about four
// request durations and a growing dropped count, rather than a queue that grows without end.
const DefaultQueueFactor = 4

// arrivals is one endpoint's arrival process and its queue of arrivals waiting for a slot.
type arrivals struct {
	rate  atomic.Uint64 // requests per second, as math.Float64bits (SetRate changes it)
	reset chan struct{} // poked (never blocking) by SetRate: the schedule restarts from now
	limit int           // fixed queue bound; 0 = DefaultQueueFactor × the concurrency
	rng   *rand.Rand    // only the generator goroutine draws
	// schedule, when not nil, replaces the Poisson draws: arrival k comes schedule[k] after
	// the arrivals start, and there are len(schedule) of them (a --trace).
	schedule []time.Duration

	mu    sync.Mutex
	q     []time.Time   // scheduled arrival instants, oldest first
	ks    []uint64      // each queued arrival's number from 0 (a trace's request index)
	ready chan struct{} // poked (never blocking) when q may be non-empty

	offered atomic.Uint64 // arrivals generated, dropped ones included
	dropped atomic.Uint64 // arrivals that found the queue full
}

func newArrivals(rate float64, limit int, seed uint64, endpoint int) *arrivals {
	a := &arrivals{
		limit: limit,
		rng:   arrivalRand(seed, endpoint),
		ready: make(chan struct{}, 1),
		reset: make(chan struct{}, 1),
	}
	a.rate.Store(math.Float64bits(rate))
	return a
}

// perSecond is the current arrival rate.
func (a *arrivals) perSecond() float64 { return math.Float64frombits(a.rate.Load()) }

// arrivalRand is endpoint's generator: the same seed gives the same schedule, and endpoints
// get different ones, so that they do not receive their arrivals in lockstep.
func arrivalRand(seed uint64, endpoint int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15^uint64(endpoint)))
}

// arrivalGap draws one exponential inter-arrival gap of mean 1/rate seconds.
func arrivalGap(rng *rand.Rand, rate float64) time.Duration {
	return time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
}

// push queues an arrival, or drops it when slots×DefaultQueueFactor (or the fixed limit)
// arrivals already wait.
func (a *arrivals) push(at time.Time, slots int) {
	k := a.offered.Add(1) - 1
	limit := a.limit
	if limit <= 0 {
		limit = DefaultQueueFactor * max(slots, 1)
	}
	a.mu.Lock()
	if len(a.q) >= limit {
		a.mu.Unlock()
		a.dropped.Add(1)
		return
	}
	a.q = append(a.q, at)
	a.ks = append(a.ks, k)
	a.mu.Unlock()
	a.poke()
}

func (a *arrivals) poke() {
	select {
	case a.ready <- struct{}{}:
	default:
	}
}

// take blocks until an arrival waits and returns its instant; false when wake is closed
// (pause, concurrency change) or ctx ends first, so that the caller re-checks its state.
func (a *arrivals) take(ctx context.Context, wake <-chan struct{}) (time.Time, uint64, bool) {
	for {
		a.mu.Lock()
		if len(a.q) > 0 {
			at, k := a.q[0], a.ks[0]
			a.q, a.ks = a.q[1:], a.ks[1:]
			more := len(a.q) > 0
			a.mu.Unlock()
			if more {
				a.poke() // one poke may stand for several arrivals: pass it on
			}
			return at, k, true
		}
		a.mu.Unlock()
		select {
		case <-a.ready:
		case <-wake:
			return time.Time{}, 0, false
		case <-ctx.Done():
			return time.Time{}, 0, false
		}
	}
}

// clear discards the waiting arrivals (the endpoint was paused: they would only come back
// with a queue time that measures the pause).
func (a *arrivals) clear() {
	a.mu.Lock()
	a.q, a.ks = nil, nil
	a.mu.Unlock()
}

// arrive is the lane's arrival process. It starts when the warm-ups are over and runs until
// the lane stops. Arrivals are stamped with their scheduled instant, so a late timer shows
// as client queue rather than shifting the schedule. While the lane is paused no arrival is
// generated and those waiting are discarded; on resume the schedule restarts from now.
func (l *lane) arrive() {
	defer l.r.wg.Done()
	a := l.open
	select {
	case <-l.warm.done():
	case <-l.ctx.Done():
		return
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	next := time.Now()
	start := next // a schedule's offsets count from here
	for {
		if a.schedule != nil {
			k := int(a.offered.Load())
			if k >= len(a.schedule) {
				return // the trace is over
			}
			next = start.Add(a.schedule[k])
		} else {
			next = next.Add(arrivalGap(a.rng, a.perSecond()))
		}
		if d := time.Until(next); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-a.reset: // a new rate (SetRate): its first gap is drawn from now
				timer.Stop()
				next = time.Now()
				continue
			case <-l.ctx.Done():
				return
			}
		}
		resumed := false
		for {
			l.mu.Lock()
			paused, wake := l.paused, l.wake
			l.mu.Unlock()
			if !paused {
				break
			}
			a.clear()
			resumed = true
			select {
			case <-wake:
			case <-l.ctx.Done():
				return
			}
		}
		if resumed {
			next = time.Now()
			if k := int(a.offered.Load()); a.schedule != nil && k < len(a.schedule) {
				start = next.Add(-a.schedule[k]) // the schedule goes on from where it paused
			}
			continue
		}
		l.mu.Lock()
		slots := l.target
		l.mu.Unlock()
		a.push(next, slots)
	}
}

// nextArrival waits for the lane's next arrival; false when loop i should re-check its state.
func (l *lane) nextArrival() (time.Time, uint64, bool) {
	l.mu.Lock()
	wake := l.wake
	l.mu.Unlock()
	return l.open.take(l.ctx, wake)
}

// Arrivals reports endpoint ep's open-loop arrivals so far: offered (generated) and dropped
// (found the queue full). Both are 0 in the closed loop.
func (r *Runner) Arrivals(ep sample.EndpointIndex) (offered, dropped uint64) {
	if l := r.lane(ep); l != nil && l.open != nil {
		return l.open.offered.Load(), l.open.dropped.Load()
	}
	return 0, 0
}

// Waiting is endpoint ep's arrivals still waiting for a worker slot, as their arrival
// instants, oldest first (a copy; nil in the closed loop). Their wait so far is client queue
// too: an overloaded endpoint's worst waits are those that have not ended yet.
func (r *Runner) Waiting(ep sample.EndpointIndex) []time.Time {
	l := r.lane(ep)
	if l == nil || l.open == nil {
		return nil
	}
	a := l.open
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Time(nil), a.q...)
}

// Rate is the open-loop arrival rate per endpoint (Options.Rate); 0 in the closed loop.
func (r *Runner) Rate() float64 { return max(r.opts.Rate, 0) }

// SetRate changes endpoint ep's open-loop arrival rate (a capacity search, --find-max rate);
// the next arrival is drawn at the new rate from now. No-op in the closed loop or for rate ≤ 0.
func (r *Runner) SetRate(ep sample.EndpointIndex, rate float64) {
	l := r.lane(ep)
	if l == nil || l.open == nil || !(rate > 0) {
		return
	}
	l.open.rate.Store(math.Float64bits(rate))
	select {
	case l.open.reset <- struct{}{}:
	default:
	}
}
