package ui

import (
	"time"

	"tokscope/sample"
)

// Controls is what the UI drives of the probe Runner. Its methods are called from Update (the
// bubbletea goroutine) and must be safe to call concurrently with the Runner's own work.
type Controls interface {
	SetPaused(ep sample.EndpointIndex, paused bool)
	Paused(ep sample.EndpointIndex) bool
	SetConcurrency(ep sample.EndpointIndex, n int)
	Concurrency(ep sample.EndpointIndex) int
	// Stream sends one interactive request to endpoint ep; its events carry the returned id.
	Stream(ep sample.EndpointIndex, prompt string) uint64
	// Race sends prompt to every endpoint with a synchronized start; all carry one id.
	Race(prompt string) uint64
	// DroppedDeltas counts deltas dropped under back-pressure.
	DroppedDeltas() uint64
}

// Bounds of what the UI keeps of recent requests for the detail view.
const (
	keepSamples = 64 // recent counted Samples per endpoint (TTFT breakdown, reasoning split)
)

// endpointState is what the UI knows of one endpoint beyond the statistics: the Runner's
// state, streams in flight, and a bounded tail of recent Samples.
type endpointState struct {
	state       sample.State
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
	warmup sample.Progress
	// warmupLive: a warm-up is in flight (its Progress came, its Done not yet); drawnWarmupLive
	// is it as of the drawn snapshot, like drawnInflight: only then does the card's in-flight
	// line say "warm-up", so a finished one never stands under "idle" as if it ran.
	warmupLive, drawnWarmupLive bool
	// connPerRequest: the server closes every kept-alive connection (sample.Status): each
	// request opens a new one, and the detail view says so.
	connPerRequest bool
	// reason: why the endpoint backs off or stopped after identical permanent errors
	// (sample.Status.Reason), shown on the card in place of the last error.
	reason string
	// finishing: the run has ended and this many of its requests are finishing within the
	// grace (sample.StateFinishing); the footer says so.
	finishing int

	samples []*sample.Sample // counted, newest last, at most keepSamples
	version uint64           // bumped on every change that a drawn view shows
}

func (st *endpointState) addSample(s *sample.Sample) {
	st.version++
	if s.Cut {
		return // in flight when the run ended: says nothing about the endpoint
	}
	st.failing = s.Outcome == sample.OutcomeError
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
func (st *endpointState) warmupDone(s *sample.Sample) {
	st.version++
	st.warmupLive = false
	if s.Outcome != sample.OutcomeOK || s.FirstToken < 0 {
		st.warmup = sample.Progress{}
		return
	}
	st.warmup = sample.Progress{Start: s.Start, At: s.LastToken, FirstEvent: s.FirstEvent, FirstToken: s.FirstToken,
		FirstAnswer: s.FirstAnswer, Tokens: float64(s.Tokens), Estimated: s.Source != sample.SourceUsage,
		Chunks: s.TokenChunks(), MaxTokens: st.warmup.MaxTokens}
}

// reset forgets what the statistics' reset forgets, a finished warm-up's figures too (they
// are from before it); a warm-up still in flight stays shown.
func (st *endpointState) reset() {
	st.samples, st.failing = nil, false
	if !st.warmupLive {
		st.warmup = sample.Progress{}
	}
	st.version++
}

// inError is what turns a card's border red: the Runner says so, or the latest request failed.
func (st *endpointState) inError() bool { return st.state == sample.StateError || st.failing }

// status is the card's status word and the style key to draw it with. Streaming or not is
// said from the requests in flight at the drawn snapshot (drawnInflight), as the card's
// in-flight line is; the Runner's word decides paused, back-off, stopped and finishing.
func (st *endpointState) status(now time.Time) (string, sample.State) {
	switch {
	case st.paused:
		return "paused", sample.StatePaused
	case st.state == sample.StateBackoff:
		if left := st.until.Sub(now); left > 0 {
			secs := int((left + time.Second - 1) / time.Second) // counts down 3s, 2s, 1s
			return "backing off " + itoa(secs) + "s", sample.StateBackoff
		}
		return "backing off", sample.StateBackoff
	case st.state == "" || st.state == sample.StateIdle || st.state == sample.StateStreaming || st.state == sample.StateError:
		switch {
		case st.drawnInflight > 0:
			return "streaming", sample.StateStreaming
		case st.state == sample.StateError:
			return string(sample.StateError), sample.StateError
		}
		return "idle", sample.StateIdle
	}
	return string(st.state), st.state
}
