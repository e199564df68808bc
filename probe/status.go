package probe

import (
	"context"
	"sync"
	"time"

	"tokscope/sample"
)

// statusQueue is an endpoint's queue of Status events. publish queues the endpoint's state
// when it changed since the last one queued, and never blocks: SetPaused and SetConcurrency
// are called by the consumer itself, which must not wait on its own channel. run sends the
// queue in order, blocking like Done.
//
// Concurrency: publish may be called from any goroutine; its mutex orders the computation of
// a state with its queueing, so that two publishes cannot queue their states in the wrong
// order. run is the queue's one sender (one goroutine, started by Run).
type statusQueue struct {
	state   func() sample.Status // the endpoint's state now
	running func() bool          // events are being sent (before Run, nothing is queued)

	mu     sync.Mutex
	last   sample.Status
	q      []sample.Status
	signal chan struct{} // poked (never blocking) when q may be non-empty
}

func newStatusQueue(state func() sample.Status, running func() bool) *statusQueue {
	return &statusQueue{state: state, running: running, signal: make(chan struct{}, 1)}
}

// publish queues a Status when the state changed since the last one queued.
func (q *statusQueue) publish() {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.state()
	if st == q.last || !q.running() {
		return // not running: Run publishes every lane's state when it starts
	}
	q.last = st
	q.q = append(q.q, st)
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// run sends queued statuses with send until ctx ends; on drain it sends what is left and
// returns.
func (q *statusQueue) run(ctx context.Context, drain <-chan struct{}, send func(context.Context, sample.Event)) {
	for {
		draining := false
		select {
		case <-q.signal:
		case <-drain:
			draining = true
		case <-ctx.Done():
			return
		}
		q.mu.Lock()
		batch := q.q
		q.q = nil
		q.mu.Unlock()
		for _, st := range batch {
			send(ctx, &st)
		}
		if draining {
			return
		}
	}
}

// state is the endpoint's Status now.
func (l *lane) state() sample.Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stateLocked()
}

// stateLocked derives the endpoint's state; l.mu held.
func (l *lane) stateLocked() sample.Status {
	st := sample.Status{Endpoint: l.idx, Concurrency: l.target, ConnPerRequest: l.client.ClosesConnections(),
		Reason: l.health.reason()}
	inFlight := len(l.flights)
	switch {
	case l.finished:
		st.State = sample.StateStopped
	case l.ending && inFlight > 0:
		st.State, st.InFlight = sample.StateFinishing, inFlight
	case l.ending:
		st.State = sample.StateStopped
	case l.paused:
		st.State = sample.StatePaused
	case l.health.backingOff(time.Now()):
		st.State, st.Until, st.Backoff = sample.StateBackoff, l.health.until, l.health.length
	case inFlight > 0:
		st.State = sample.StateStreaming
	case l.health.lastFailed:
		st.State = sample.StateError
	default:
		st.State = sample.StateIdle
	}
	return st
}
