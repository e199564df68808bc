package sim

import (
	"sync"
	"time"
)

// Seen is one request as the server received and served it (Options.LogRequests): what a
// test of a client compares with what the client meant to send, on the server's side of the
// wire.
type Seen struct {
	ID  string // the response id (X-Request-Id)
	API string
	// Arrival is when the handler got the request; Received when its last byte reached the
	// socket by the kernel's clock (zero when not stamped: Options.TrackSends off, not Linux).
	Arrival, Received time.Time
	// End is when the response's last frame was written and flushed; zero until then, and for
	// a response that did not end cleanly (a fault, a client gone).
	End time.Time
	// PromptTokens as usage reports them; PromptText of them the messages' text (text parts and
	// tool results), the rest the template's and the tool calls' (readPrompt).
	PromptTokens, PromptText int
	// CachedTokens are the tokens the prefix cache served (whole blocks, usage cached_tokens);
	// CachedText of them the messages' text; CachedBlocks the blocks. All 0 without
	// PrefixCache or before admission.
	CachedTokens, CachedText, CachedBlocks int
	Messages                               []SeenMessage
}

// SeenMessage is a message of a request: its role (a Responses function_call item is the
// assistant's, its function_call_output the tool's) and parts.
type SeenMessage struct {
	Role  string
	Parts []SeenPart
}

// SeenPart is a part of a message: PartText, PartToolCall (Name, CallID) or PartToolResult
// (CallID), and its length in the profile's tokenizer (a tool call's: its arguments').
type SeenPart struct {
	Kind, CallID, Name string
	Tokens             int
}

// seenRequests bounds the memory of Options.LogRequests per profile.
const seenRequests = 10000

// seenLog is a profile's last seenRequests requests, in arrival order.
type seenLog struct {
	mu   sync.Mutex
	reqs []*Seen
}

// Seen returns the requests a profile received, in arrival order (the last 10000), as the
// server saw them: nil unless Options.LogRequests.
func (s *Server) Seen(profile string) []Seen {
	ep, ok := s.endpoint(profile)
	if !ok || ep.seen == nil {
		return nil
	}
	ep.seen.mu.Lock()
	defer ep.seen.mu.Unlock()
	out := make([]Seen, len(ep.seen.reqs))
	for i, r := range ep.seen.reqs {
		out[i] = *r
	}
	return out
}

// add logs a request as it arrives (nil without a log).
func (l *seenLog) add(c *call, tok tokenFunc) *Seen {
	if l == nil {
		return nil
	}
	r := &Seen{ID: c.id, API: c.api, Arrival: c.arrival, Received: c.received,
		PromptTokens: c.out.prompt.tokens, PromptText: c.out.prompt.text}
	for _, m := range c.req.Messages {
		sm := SeenMessage{Role: m.role()}
		for _, p := range m.parts() {
			n := 0
			tok(p.text, func([]byte) { n++ })
			sm.Parts = append(sm.Parts, SeenPart{Kind: p.kind, CallID: p.callID, Name: p.name, Tokens: n})
		}
		r.Messages = append(r.Messages, sm)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.reqs) >= seenRequests {
		l.reqs = append(l.reqs[:0], l.reqs[1:]...)
	}
	l.reqs = append(l.reqs, r)
	return r
}

// cached records what the prefix cache served the request.
func (l *seenLog) cached(r *Seen, pr prompt, tokens int) {
	if r == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if pr.blockTokens > 0 {
		r.CachedBlocks = tokens / pr.blockTokens
	}
	r.CachedTokens, r.CachedText = tokens, pr.textIn(r.CachedBlocks)
}

// ended records the instant the response's last frame was written.
func (l *seenLog) ended(r *Seen, at time.Time) {
	if r == nil {
		return
	}
	l.mu.Lock()
	r.End = at
	l.mu.Unlock()
}
