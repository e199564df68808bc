package probe

import (
	"time"

	"tokscope/sample"
)

// What a capacity search (sweep.Search, --find-max) needs beyond a sweep: each endpoint runs
// its own sequence of steps, so the end of one endpoint's step must neither wait for nor cut
// another endpoint's requests.

// InFlight is the number of endpoint ep's background requests begun and not yet ended (a
// request counts from just before its t0 until just before its Done is reported).
func (r *Runner) InFlight(ep sample.EndpointIndex) int {
	l := r.lane(ep)
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.flights)
}

// CutEndpointBefore cuts endpoint ep's background requests still in flight that started
// before t (CutBefore for one endpoint). It returns how many.
func (r *Runner) CutEndpointBefore(ep sample.EndpointIndex, t time.Time) int {
	l := r.lane(ep)
	if l == nil {
		return 0
	}
	n := 0
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.flights {
		if f.at.Before(t) {
			f.cancel(errCut)
			n++
		}
	}
	return n
}

// Warming reports whether endpoint ep is opening connections for streams just added
// (SetConcurrency): its loops hold their requests until it is done, and open-loop arrivals
// queue meanwhile, so a search waits for it before a step begins.
func (r *Runner) Warming(ep sample.EndpointIndex) bool {
	l := r.lane(ep)
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.warming != nil
}
