package stats

import (
	"time"

	"tokscope/config"
)

// workloadState is what an endpoint's statistics keep of its workload: the cache mode the
// requests ran under and how many reached their --output-tokens target.
type workloadState struct {
	configured string // the endpoint's configured cache mode ("" when unknown, as in a replay)
	seen       string // the mode of the requests seen so far
	mixed      bool

	targetRequests, targetReached int

	// The run's span for throughput: the first t0 to the last finish of a non-warm-up
	// request. It ends with the requests, not at the snapshot, so that a replay, whose clock
	// stops at the last request, divides by the same time as the live run did.
	first, last time.Time
}

// span is the run's span so far: its wall time for throughput, goodput and GPU-hour costs.
func (w *workloadState) span() time.Duration { return w.last.Sub(w.first) }

func (w *workloadState) configure(ep *config.Endpoint) { w.configured = ep.Cache }

func (w *workloadState) reset() {
	w.seen, w.mixed = "", false
	w.targetRequests, w.targetReached = 0, 0
	w.first, w.last = time.Time{}, time.Time{}
}

// take takes a finished non-warm-up request: its cache mode (any outcome: an error ran
// under the mode too) and, when counted, whether it reached its output target.
func (w *workloadState) take(f *figures) {
	if !f.finished {
		return
	}
	s := f.s
	if w.first.IsZero() || s.Start.Before(w.first) {
		w.first = s.Start
	}
	if f.done.After(w.last) {
		w.last = f.done
	}
	switch {
	case s.Cache == "":
	case w.seen == "":
		w.seen = s.Cache
	case w.seen != s.Cache:
		w.mixed = true
	}
	if !f.counted {
		return
	}
	if reached, ok := s.ReachedTarget(); ok {
		w.targetRequests++
		if reached {
			w.targetReached++
		}
	}
}

// fill sets the workload figures of st: its cache mode, output target and throughput over the
// run's span (of r's counted requests and their tokens).
func (w *workloadState) fill(st *EndpointStats, r readout) {
	switch {
	case w.mixed:
		st.Cache = "mixed"
	case w.seen != "":
		st.Cache = w.seen
	default:
		st.Cache = w.configured
	}
	st.TargetRequests, st.TargetReached = w.targetRequests, w.targetReached
	st.RunSpan = w.span()
	if st.RunSpan > 0 {
		st.OutputTPS = float64(r.outputToks) / st.RunSpan.Seconds()
		st.RequestsPerS = float64(r.ok) / st.RunSpan.Seconds()
	}
}
