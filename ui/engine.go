package ui

import (
	"time"

	"tokscope/probe"
	"tokscope/servermetrics"
	"tokscope/stats"
)

// Engine is what the UI drives of the probe Runner. Its methods are called from Update (the
// bubbletea goroutine) and must be safe to call concurrently with the Runner's own work.
type Engine interface {
	SetPaused(ep probe.EndpointIndex, paused bool)
	Paused(ep probe.EndpointIndex) bool
	SetConcurrency(ep probe.EndpointIndex, n int)
	Concurrency(ep probe.EndpointIndex) int
	// Stream sends one interactive request to endpoint ep; its events carry the returned id.
	Stream(ep probe.EndpointIndex, prompt string) uint64
	// Race sends prompt to every endpoint with a synchronized start; all carry one id.
	Race(prompt string) uint64
	// DroppedDeltas counts deltas dropped under back-pressure.
	DroppedDeltas() uint64
}

// statistics is the part of stats.Aggregator the UI uses; Update is its only writer.
type statistics interface {
	Observe(ev probe.Event) bool
	ObserveServer(u servermetrics.Update) bool
	Reset()
	Snapshot(now time.Time) stats.Snapshot
	// RecentITL counts an endpoint's inter-chunk gaps of the recent window by bars.
	RecentITL(ep int, now time.Time, bounds []float64) []int
}

// Bounds of what the UI keeps of recent requests for the detail view.
const (
	keepSamples = 64 // recent counted Samples per endpoint (TTFT breakdown, reasoning split)
)

// endpointState is what the UI knows of one endpoint beyond the statistics: the Runner's
// state, streams in flight, and a bounded tail of recent Samples.
type endpointState struct {
	state       probe.State
	until       time.Time // end of a back-off
	concurrency int
	paused      bool
	inflight    int // started and not done, from the event stream
	// drawnInflight is inflight as of the statistics snapshot the views draw: the card's
	// status word and its in-flight line both come from that instant, so "idle" never stands
	// above "1 in flight" (the Runner's Status travels apart from Started and Done).
	drawnInflight int
	failing       bool // the latest finished request was an error
	// tlsUnverified: the endpoint's certificate is not verified (insecure_skip_verify); its
	// card says so, always.
	tlsUnverified bool
	// warmup is the latest Progress of a warm-up request, then its final figures (Chunks == 0:
	// none). It never enters the statistics; the card shows it, labelled, until counted
	// requests have figures.
	warmup probe.Progress
	// connPerRequest: the server closes every kept-alive connection (probe.Status): each
	// request opens a new one, and the detail view says so.
	connPerRequest bool
	// reason: why the endpoint backs off or stopped after identical permanent errors
	// (probe.Status.Reason), shown on the card in place of the last error.
	reason string
	// finishing: the run has ended and this many of its requests are finishing within the
	// grace (probe.StateFinishing); the footer says so.
	finishing int

	samples []*probe.Sample // counted, newest last, at most keepSamples
	version uint64          // bumped on every change that a drawn view shows
}

func (st *endpointState) addSample(s *probe.Sample) {
	st.version++
	if s.Cut {
		return // in flight when the run ended: says nothing about the endpoint
	}
	st.failing = s.Outcome == probe.OutcomeError
	if !s.Counted() {
		return
	}
	// Chunks are kept: the detail view needs arrival offsets. Bounded by keepSamples.
	if len(st.samples) == keepSamples {
		copy(st.samples, st.samples[1:])
		st.samples = st.samples[:keepSamples-1]
	}
	st.samples = append(st.samples, s)
}

// warmupDone keeps a finished warm-up's own figures, as a last Progress.
func (st *endpointState) warmupDone(s *probe.Sample) {
	st.version++
	if s.Outcome != probe.OutcomeOK || s.FirstToken < 0 {
		st.warmup = probe.Progress{}
		return
	}
	st.warmup = probe.Progress{Start: s.Start, At: s.LastToken, FirstEvent: s.FirstEvent, FirstToken: s.FirstToken,
		FirstAnswer: s.FirstAnswer, Tokens: float64(s.Tokens), Estimated: s.Source != probe.SourceUsage,
		Chunks: s.TokenChunks(), MaxTokens: st.warmup.MaxTokens}
}

func (st *endpointState) reset() {
	st.samples, st.failing = nil, false
	st.version++
}

// inError is what turns a card's border red: the Runner says so, or the latest request failed.
func (st *endpointState) inError() bool { return st.state == probe.StateError || st.failing }

// status is the card's status word and the style key to draw it with. Streaming or not is
// said from the requests in flight at the drawn snapshot (drawnInflight), as the card's
// in-flight line is; the Runner's word decides paused, back-off, stopped and finishing.
func (st *endpointState) status(now time.Time) (string, probe.State) {
	switch {
	case st.paused:
		return "paused", probe.StatePaused
	case st.state == probe.StateBackoff:
		if left := st.until.Sub(now); left > 0 {
			secs := int((left + time.Second - 1) / time.Second) // counts down 3s, 2s, 1s
			return "backing off " + itoa(secs) + "s", probe.StateBackoff
		}
		return "backing off", probe.StateBackoff
	case st.state == "" || st.state == probe.StateIdle || st.state == probe.StateStreaming || st.state == probe.StateError:
		switch {
		case st.drawnInflight > 0:
			return "streaming", probe.StateStreaming
		case st.state == probe.StateError:
			return string(probe.StateError), probe.StateError
		}
		return "idle", probe.StateIdle
	}
	return string(st.state), st.state
}
