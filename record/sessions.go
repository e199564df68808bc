package record

import (
	"time"

	"tokscope/workload"
)

// SessionFields place a request in an agent session (--sessions); every one is absent
// outside sessions, and turn (Record.Turn) is its place in its context. Embedded in Record,
// so they are top-level keys of its line.
type SessionFields struct {
	// Session is the request's context (a session's root agent or one of its sub-agents),
	// from 1 per endpoint; Parent the context that started it (0 for a root); Depth 0 for a
	// root, 1 for its sub-agents, …
	Session *uint64 `json:"session,omitempty"`
	Parent  *uint64 `json:"parent,omitempty"`
	Depth   *int    `json:"depth,omitempty"`
	// SessionRoot is the root context of the request's session, and SessionTurns that
	// session's number of turns, sub-agents' included.
	SessionRoot *uint64 `json:"session_root,omitempty"`
	// Lane is the endpoint's loop (1…-n) the session ran in.
	Lane         *int `json:"lane,omitempty"`
	SessionTurns *int `json:"session_turns,omitempty"`
	// OfflinePromptTokens is the prompt's length in the offline tokenizer, ideal_cached's unit.
	OfflinePromptTokens *int `json:"offline_prompt_tokens,omitempty"`
	// GapMS is the wait before the turn since its context's previous turn ended (tool or
	// think time under the gap policy, and any sub-agents joined); 0 for a first turn.
	GapMS *float64 `json:"gap_ms,omitempty"`
	// Blocks is the number of full blocks of the trace's block size the prompt holds, and
	// IdealCached the prompt tokens (offline tokenizer) a perfect prefix cache would have
	// served, given the prompts sent to the endpoint before it.
	Blocks      *int `json:"blocks,omitempty"`
	IdealCached *int `json:"ideal_cached,omitempty"`
	// ToolResult: the turn's recorded input was a tool's result.
	ToolResult bool `json:"tool_result,omitempty"`
}

func sessionFields(t *workload.SessionTurn) SessionFields {
	if t == nil {
		return SessionFields{}
	}
	c := *t
	gap := durMS(c.Gap)
	return SessionFields{Session: &c.ID, Parent: &c.Parent, Depth: &c.Depth, GapMS: &gap,
		SessionRoot: &c.Root, Lane: &c.Lane, SessionTurns: &c.SessionTurns, OfflinePromptTokens: &c.PromptTokens,
		Blocks: &c.Blocks, IdealCached: &c.IdealCached, ToolResult: c.Tool}
}

// sessionTurn is the SessionTurn the fields came from; nil outside sessions.
func (f SessionFields) sessionTurn(turn int) *workload.SessionTurn {
	if f.Session == nil {
		return nil
	}
	t := &workload.SessionTurn{ID: *f.Session, Turn: turn, Tool: f.ToolResult}
	if f.Parent != nil {
		t.Parent = *f.Parent
	}
	if f.Depth != nil {
		t.Depth = *f.Depth
	}
	if f.GapMS != nil {
		t.Gap = time.Duration(*f.GapMS * float64(time.Millisecond))
	}
	for _, v := range []struct {
		from *int
		to   *int
	}{{f.SessionTurns, &t.SessionTurns}, {f.OfflinePromptTokens, &t.PromptTokens}, {f.Lane, &t.Lane}} {
		if v.from != nil {
			*v.to = *v.from
		}
	}
	if f.SessionRoot != nil {
		t.Root = *f.SessionRoot
	}
	if f.Blocks != nil {
		t.Blocks = *f.Blocks
	}
	if f.IdealCached != nil {
		t.IdealCached = *f.IdealCached
	}
	return t
}
