package probe

import (
	"sync"
	"sync/atomic"
)

// quota hands out an endpoint's Options.Requests counted requests (tickets) and counts those
// that finished: the endpoint's loops end once every ticket is out, and the endpoint is done
// when the last counted request has finished. With no limit (0) every takeConversation succeeds and
// nothing is counted.
//
// Concurrency: safe for concurrent use (the loops of one endpoint share it).
type quota struct {
	limit int // Options.Requests; 0 = unlimited

	mu         sync.Mutex
	started    int  // tickets out, up to limit
	allStarted bool // a takeConversation found every ticket out

	finished atomic.Int64 // counted requests finished (cut ones are not)
}

// takeConversation hands out the n tickets of a conversation (--turns) at its first turn:
// false once all have started. A conversation once begun is finished, so when fewer than n
// are left the limit grows to take it whole (--requests is then exceeded by at most n−1 per
// stream; a multiple of n gives exact counts).
func (q *quota) takeConversation(n int) bool {
	n = max(n, 1)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.limit <= 0 {
		return true
	}
	if q.started >= q.limit {
		q.allStarted = true
		return false
	}
	q.started += n
	q.limit = max(q.limit, q.started)
	return true
}

// skip counts n tickets of a conversation that ended early (a turn failed) as finished:
// true when that made the last of limit.
func (q *quota) skip(n int) bool {
	q.mu.Lock()
	limit := q.limit
	q.mu.Unlock()
	if limit <= 0 || n <= 0 {
		return false
	}
	after := q.finished.Add(int64(n))
	return after >= int64(limit) && after-int64(n) < int64(limit)
}

// giveBack returns a ticket whose request was never sent (an open-loop wait ended by a pause
// or the end of the run).
func (q *quota) giveBack(n int) {
	q.mu.Lock()
	if q.limit <= 0 {
		q.mu.Unlock()
		return
	}
	q.started -= n
	q.allStarted = false
	q.mu.Unlock()
}

// exhausted reports that a takeConversation found every ticket out: no loop has anything left to start.
func (q *quota) exhausted() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.allStarted
}

// finish counts one counted request that finished (not cut); true for the last of limit.
func (q *quota) finish() bool {
	q.mu.Lock()
	limit := q.limit // grows under takeConversation
	q.mu.Unlock()
	return limit > 0 && q.finished.Add(1) == int64(limit)
}

// warmups hands out an endpoint's Options.Warmup warm-up requests, the first ones the loops
// take, and opens its gate when the last of them has ended: counted requests (and open-loop
// arrivals) wait for the gate.
//
// Concurrency: safe for concurrent use; the counters are atomic, and only the caller of the
// end that returned true opens the gate, once.
type warmups struct {
	n     int64
	taken atomic.Int64 // requests that asked whether they are warm-ups
	ended atomic.Int64 // warm-ups finished
	gate  chan struct{}
}

func newWarmups(n int) *warmups {
	w := &warmups{n: int64(n), gate: make(chan struct{})}
	if n == 0 {
		close(w.gate)
	}
	return w
}

// take says whether the request about to be sent is a warm-up.
func (w *warmups) take() bool { return w.taken.Add(1) <= w.n }

// end accounts a warm-up's end; true for the last one, whose caller then opens the gate.
func (w *warmups) end() bool { return w.ended.Add(1) == w.n }

func (w *warmups) open() { close(w.gate) }

// done is closed once the warm-ups are over.
func (w *warmups) done() <-chan struct{} { return w.gate }

// over reports whether the warm-ups are over, without waiting.
func (w *warmups) over() bool {
	select {
	case <-w.gate:
		return true
	default:
		return false
	}
}
