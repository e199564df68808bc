package sim

import (
	"sync"
	"time"
)

// FrameKind says what a streamed data frame carried.
type FrameKind string

// The data frames a stream can send, in the order they appear.
const (
	FrameRole      FrameKind = "role"      // {"delta":{"role":"assistant"}}
	FrameReasoning FrameKind = "reasoning" // delta.reasoning_content
	FrameContent   FrameKind = "content"   // delta.content
	FrameFinish    FrameKind = "finish"    // empty delta with finish_reason
	FrameUsage     FrameKind = "usage"     // "choices":[] and the final usage
	FrameError     FrameKind = "error"     // a mid-stream {"error":{...}} frame
)

// Send is one data frame as the server sent it.
type Send struct {
	At     time.Time // time.Now() right after the frame was written and flushed
	Kind   FrameKind
	Tokens int // tokens in the frame (reasoning and content frames only)
}

// Sends returns, for a streamed response id (the chunk "id", e.g. "chatcmpl-sim-42"), each
// data frame written, in order, with the time.Now() taken right after it was written and
// flushed (Send.At) and what it carried: role, reasoning, content, finish, usage and error
// frames, but not keep-alive comments nor "data: [DONE]". It returns nil when
// Options.TrackSends is off or the id is unknown or forgotten (only the last 10000 responses
// are kept). A stream still in flight returns the frames sent so far.
func (s *Server) Sends(id string) []Send {
	if s.sends == nil {
		return nil
	}
	rec := s.sends.get(id)
	if rec == nil {
		return nil
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]Send(nil), rec.sends...)
}

// Arrival returns when the server got the request of a streamed response id (its handler
// started: the instant every scheduled delay, TTFT included, is counted from); false when
// Options.TrackSends is off or the id is unknown or forgotten. A client's TTFT minus the
// server's (first content frame's send time minus Arrival) is what the client added.
func (s *Server) Arrival(id string) (time.Time, bool) {
	if s.sends == nil {
		return time.Time{}, false
	}
	rec := s.sends.get(id)
	if rec == nil {
		return time.Time{}, false
	}
	return rec.arrival, true
}

// Received returns when the request of a streamed response id reached the server's socket,
// by the kernel's receive time of the read that delivered its last byte (package kstamp):
// before Arrival by the server's own wait to read and route it (a CPU, the HTTP server).
// False when Options.TrackSends is off, the id is unknown or forgotten, or the kernel
// stamped nothing (not Linux). A client's TTFT minus (the first content frame's send time
// minus Received) is what the client added, with the server's every wait counted as its own.
func (s *Server) Received(id string) (time.Time, bool) {
	if s.sends == nil {
		return time.Time{}, false
	}
	rec := s.sends.get(id)
	if rec == nil || rec.received.IsZero() {
		return time.Time{}, false
	}
	return rec.received, true
}

// sendLog remembers the frames of the last len(ring) responses.
type sendLog struct {
	mu   sync.Mutex
	byID map[string]*sendRecord
	ring []string // ids in arrival order; ring[next] is the oldest once full
	next int
}

type sendRecord struct {
	mu       sync.Mutex
	sends    []Send
	arrival  time.Time // when the handler got the request
	received time.Time // when its bytes reached the socket (kernel clock); zero: not stamped
	// clock is what the response said of the server's own clock (servertiming.go).
	clock    Clock
	clockSet bool
}

func newSendLog(capacity int) *sendLog {
	return &sendLog{byID: make(map[string]*sendRecord), ring: make([]string, capacity)}
}

// start registers a new response, forgetting the oldest one when full.
func (l *sendLog) start(id string, frames int) *sendRecord {
	rec := &sendRecord{sends: make([]Send, 0, frames)}
	l.mu.Lock()
	defer l.mu.Unlock()
	if old := l.ring[l.next]; old != "" {
		delete(l.byID, old)
	}
	l.ring[l.next] = id
	l.next = (l.next + 1) % len(l.ring)
	l.byID[id] = rec
	return rec
}

func (l *sendLog) get(id string) *sendRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byID[id]
}

func (r *sendRecord) add(f Send) {
	r.mu.Lock()
	r.sends = append(r.sends, f)
	r.mu.Unlock()
}
