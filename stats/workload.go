package stats

import (
	"time"

	"tokscope/probe"
)

// workloadState is what an endpoint's statistics keep of its workload: the cache mode the
// requests ran under and how many reached their --output-tokens target.
type workloadState struct {
	configured string // the endpoint's configured cache mode ("" when unknown, as in a replay)
	seen       string // the mode of the requests seen so far
	mixed      bool

	targetRequests, targetReached int
}

func (w *workloadState) reset() {
	w.seen, w.mixed = "", false
	w.targetRequests, w.targetReached = 0, 0
}

// observe takes a finished non-warm-up request: its cache mode (any outcome: an error ran
// under the mode too) and, when counted, whether it reached its output target.
func (w *workloadState) observe(s *probe.Sample) {
	switch {
	case s.Cache == "":
	case w.seen == "":
		w.seen = s.Cache
	case w.seen != s.Cache:
		w.mixed = true
	}
	if !s.Counted() {
		return
	}
	if reached, ok := s.ReachedTarget(); ok {
		w.targetRequests++
		if reached {
			w.targetReached++
		}
	}
}

// fill sets the workload figures of st; ok and outputTokens are the endpoint's counted
// requests and their tokens, wall its WallTime.
func (w *workloadState) fill(st *EndpointStats, ok int, outputTokens int64, wall time.Duration) {
	switch {
	case w.mixed:
		st.Cache = "mixed"
	case w.seen != "":
		st.Cache = w.seen
	default:
		st.Cache = w.configured
	}
	st.TargetRequests, st.TargetReached = w.targetRequests, w.targetReached
	if wall > 0 {
		st.OutputTPS = float64(outputTokens) / wall.Seconds()
		st.RequestsPerS = float64(ok) / wall.Seconds()
	}
}
