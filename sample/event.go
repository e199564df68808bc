package sample

import (
	"time"

	"tokscope/workload"
)

// Event is what a Runner sends on its channel: *Started, *Delta, *Progress, *Done or *Status.
// A run's loop (fanout.Loop) adds its own events to the same stream, defined above this
// package: they embed Extension.
type Event interface{ isEvent() }

// Extension makes a type defined above this package an Event when embedded: a run-level event
// the vocabulary cannot name, such as a server scrape (fanout.Scrape), which then travels on
// the one stream of a run's events, in order with the Runner's.
type Extension struct{}

func (Extension) isEvent() {}

// EndpointIndex is an endpoint's place in the Runner's endpoints (Runner.Endpoints), which
// is how events name it; a Sample names its endpoint by name (Sample.Endpoint).
type EndpointIndex int

// In reports whether i indexes a slice of n endpoints.
func (i EndpointIndex) In(n int) bool { return i >= 0 && int(i) < n }

// Started: request Seq of endpoint Endpoint was sent at At.
type Started struct {
	Endpoint EndpointIndex
	Seq      uint64
	Stream   uint64 // non-zero for an interactive Stream/Race request (see Runner.Stream)
	At       time.Time
	// Session places an agent session's turn (--sessions) in its lane; nil otherwise.
	Session *workload.SessionTurn
}

// Delta is a piece of streamed text. Deltas are sent only for interactive streams (Stream !=
// 0) or when Options.Deltas is set; under back-pressure they may be dropped (counted by
// Runner.DroppedDeltas), Done events never are.
type Delta struct {
	Endpoint  EndpointIndex
	Seq       uint64
	Stream    uint64
	At        time.Time
	Text      string
	Reasoning bool // reasoning_content / reasoning rather than content
	Tokens    int  // tokens in this chunk when the server reports them, else 0
}

// Progress reports the tokens a request in flight has received so far. A Runner sends one when
// the request's first token arrives, then at most one per ProgressEvery as chunks arrive (for
// every request: background, warm-up and interactive). It never blocks the request: under
// back-pressure one is dropped. Its figures are cumulative, so the next Progress carries what
// a dropped one had, and the Done that ends the request has the exact figures: consumers
// reconcile what they counted live with its Sample.
type Progress struct {
	Endpoint EndpointIndex
	Seq      uint64
	Stream   uint64 // non-zero for an interactive Stream/Race request
	Warmup   bool
	Start    time.Time // wall clock of t0
	// At is the arrival offset (from t0) of the newest chunk counted in Tokens.
	At time.Duration
	// The instants of docs/metrics.md that have happened so far (offsets from t0, Absent until then).
	FirstEvent, FirstToken, FirstAnswer time.Duration
	// Tokens is the output tokens received so far: the server's per-chunk (cumulative) usage
	// when it sends one, else an estimate (Estimated): the endpoint's learned tokens per chunk
	// times the chunks so far, or, before a request of the endpoint has finished, the offline
	// tokenizer's count of the text so far. Fractional when estimated.
	Tokens    float64
	Estimated bool
	Chunks    int // token-bearing chunks so far
	MaxTokens int // the request's max_tokens, 0 without a limit
}

// ProgressEvery is the shortest interval between two Progress events of one request.
const ProgressEvery = 100 * time.Millisecond

// TTFT is the request's time to first token so far under from's definition (ok=false until
// that instant happened), as TTFTFrom.TTFT is of a Sample.
func (p *Progress) TTFT(from TTFTFrom) (time.Duration, bool) {
	d := p.FirstToken
	switch from {
	case TTFTFirstEvent:
		d = p.FirstEvent
	case TTFTFirstAnswer:
		d = p.FirstAnswer
	}
	return d, present(d)
}

// DecodeRate is the decode rate so far, docs/metrics.md's (N − 1) / (last_token − first_token) on
// what has arrived: (Tokens − 1) / (At − FirstToken). At the request's end it is the Sample's
// DecodeRate (with the final N); undefined with fewer than 2 tokens or no span yet.
func (p *Progress) DecodeRate() (float64, bool) {
	if !present(p.FirstToken) || p.Tokens < 2 || p.At <= p.FirstToken {
		return 0, false
	}
	return (p.Tokens - 1) / (p.At - p.FirstToken).Seconds(), true
}

// Done carries a finished request.
type Done struct {
	Endpoint EndpointIndex
	Stream   uint64
	Sample   Sample
}

// State is what an endpoint's request loops are doing.
type State string

const (
	StateIdle      State = "idle"
	StateStreaming State = "streaming"
	StatePaused    State = "paused"
	StateBackoff   State = "backing off"
	StateError     State = "error"
	StateStopped   State = "stopped"
	// StateFinishing: the run has ended; Status.InFlight requests are finishing within the
	// grace period (finish.go).
	StateFinishing State = "finishing"
)

// Status reports a change of an endpoint's state (e.g. backing off after a 429 until Until).
type Status struct {
	Endpoint    EndpointIndex
	State       State
	Until       time.Time // end of a back-off, zero otherwise
	Concurrency int       // current streams in flight target
	Backoff     time.Duration
	// ConnPerRequest: the server closes every kept-alive connection right after its answer,
	// so each request opens a new connection and connect time is part of every TTFT there.
	ConnPerRequest bool
	InFlight       int // requests still finishing (StateFinishing only)
	// Reason says why the endpoint backs off or stopped after identical permanent errors
	// (401, 403, 404; permanent.go), e.g. "3× http_404 in a row: …"; "" otherwise.
	Reason string
}

func (*Started) isEvent()  {}
func (*Delta) isEvent()    {}
func (*Progress) isEvent() {}
func (*Done) isEvent()     {}
func (*Status) isEvent()   {}
