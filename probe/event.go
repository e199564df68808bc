package probe

import "time"

// Event is what a Runner sends on its channel: *Started, *Delta, *Done or *Status.
type Event interface{ isEvent() }

// Started: request Seq of endpoint Endpoint (index into the Runner's endpoints) was sent at At.
type Started struct {
	Endpoint int
	Seq      uint64
	Stream   uint64 // non-zero for an interactive Stream/Race request (see Runner.Stream)
	At       time.Time
}

// Delta is a piece of streamed text. Deltas are sent only for interactive streams (Stream !=
// 0) or when Options.Deltas is set; under back-pressure they may be dropped (counted by
// Runner.DroppedDeltas), Done events never are.
type Delta struct {
	Endpoint  int
	Seq       uint64
	Stream    uint64
	At        time.Time
	Text      string
	Reasoning bool // reasoning_content / reasoning rather than content
	Tokens    int  // tokens in this chunk when the server reports them, else 0
}

// Done carries a finished request.
type Done struct {
	Endpoint int
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
)

// Status reports a change of an endpoint's state (e.g. backing off after a 429 until Until).
type Status struct {
	Endpoint    int
	State       State
	Until       time.Time // end of a back-off, zero otherwise
	Concurrency int       // current streams in flight target
	Backoff     time.Duration
	// ConnPerRequest: the server closes every kept-alive connection right after its answer,
	// so each request opens a new connection and connect time is part of every TTFT there.
	ConnPerRequest bool
}

func (*Started) isEvent() {}
func (*Delta) isEvent()   {}
func (*Done) isEvent()    {}
func (*Status) isEvent()  {}
