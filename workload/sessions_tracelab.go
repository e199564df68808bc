package workload

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"tokscope/config"
)

// TraceLab round traces (uw-syfi/TraceLab, example_sessions/sanitized/round_trace.jsonl):
// one JSON line a round (one model call), {"session_id", "round_index", "input_tokens_total",
// "prefix_tokens", "newly_append_tokens", "output_tokens", "timing_events": [{"event_type",
// "timestamp"}…], "tools": [{"tool_wall_latency_ms"}…]}. There are no hash ids: a round's
// prefix_tokens are the session's previous context, its newly_append_tokens new text. Rounds
// of several sessions may be interleaved; each session's rounds are taken in round_index
// order.

// TraceLabBlockTokens is the block size TraceLab rounds are cut into (the file has none).
const TraceLabBlockTokens = 64

type traceLabRound struct {
	Session  string   `json:"session_id"`
	Round    *float64 `json:"round_index"`
	Total    *float64 `json:"input_tokens_total"`
	Prefix   *float64 `json:"prefix_tokens"`
	Appended *float64 `json:"newly_append_tokens"`
	Output   *float64 `json:"output_tokens"`
	Events   []struct {
		Type string `json:"event_type"`
		At   string `json:"timestamp"`
	} `json:"timing_events"`
	Tools []struct {
		Wall *float64 `json:"tool_wall_latency_ms"`
	} `json:"tools"`
}

type traceLabTurn struct {
	r     traceLabRound
	line  int
	index int
}

func readTraceLab(path string, data []byte) ([]*Session, error) {
	bySession := map[string][]traceLabTurn{}
	var order []string
	for _, ln := range jsonLines(data) {
		var r traceLabRound
		if err := json.Unmarshal(ln.b, &r); err != nil {
			return nil, &FileError{File: path, Line: ln.n, Msg: "not a TraceLab round (one JSON object a line): " + err.Error()}
		}
		tt, err := checkTraceLab(&r)
		if err != nil {
			return nil, &FileError{File: path, Line: ln.n, Msg: err.Error()}
		}
		tt.line = ln.n
		rs := bySession[r.Session]
		if len(rs) > 0 && tt.index <= rs[len(rs)-1].index {
			return nil, &FileError{File: path, Line: ln.n, Msg: fmt.Sprintf("round_index %d of session %q after round %d: rounds are in order", tt.index, r.Session, rs[len(rs)-1].index)}
		}
		if len(rs) == 0 {
			order = append(order, r.Session)
		}
		bySession[r.Session] = append(rs, tt)
	}
	if len(order) == 0 {
		return nil, &FileError{File: path, Msg: "no round in it"}
	}
	out := make([]*Session, 0, len(order))
	for _, id := range order {
		out = append(out, traceLabSession(path, id, bySession[id]))
	}
	return out, nil
}

// checkTraceLab checks one round's numbers.
func checkTraceLab(r *traceLabRound) (traceLabTurn, error) {
	t := traceLabTurn{r: *r}
	if r.Session == "" {
		return t, fmt.Errorf(`"session_id" is missing`)
	}
	if r.Round == nil || *r.Round < 0 || *r.Round != math.Trunc(*r.Round) {
		return t, fmt.Errorf(`"round_index" must be a whole number, at least 0`)
	}
	t.index = int(*r.Round)
	for _, f := range []struct {
		name  string
		v     *float64
		least float64
	}{{"input_tokens_total", r.Total, 1}, {"prefix_tokens", r.Prefix, 0}, {"newly_append_tokens", r.Appended, 0}, {"output_tokens", r.Output, 0}} {
		if f.v == nil || *f.v != math.Trunc(*f.v) || *f.v < f.least || *f.v > config.MaxLengthTokens {
			return t, fmt.Errorf("%q must be a whole number of tokens from %v to %d", f.name, f.least, config.MaxLengthTokens)
		}
	}
	if *r.Prefix > *r.Total {
		return t, fmt.Errorf(`"prefix_tokens" (%v) is more than "input_tokens_total" (%v)`, *r.Prefix, *r.Total)
	}
	return t, nil
}

// traceLabSession makes one session's rounds turns: the context is a list of block ids; round
// r keeps the first prefix_tokens of it (whole blocks, and the previous round's tail block
// when the prefix reaches into it) and appends new blocks up to input_tokens_total.
func traceLabSession(path, id string, rounds []traceLabTurn) *Session {
	const b = TraceLabBlockTokens
	root := &Agent{}
	var ctx []int32
	next := int32(0)
	fresh := func() int32 { next++; return next - 1 }
	var turns []*Turn
	var lastEnd time.Time
	for k, rt := range rounds {
		r := rt.r
		total, prefix := int(*r.Total), int(*r.Prefix)
		keep := min(prefix/b, len(ctx))
		blocks := append([]int32(nil), ctx[:keep]...)
		for len(blocks) < total/b {
			blocks = append(blocks, fresh())
		}
		t := &Turn{In: total, Out: int(*r.Output), Blocks: blocks, Where: fmt.Sprintf("%s:%d", path, rt.line)}
		if k > 0 {
			t.Gap, t.Tool = traceLabGap(r, rounds[k-1].r, lastEnd)
		}
		lastEnd = lastEvent(r)
		ctx = blocks
		root.Steps = append(root.Steps, Step{Turn: t})
		turns = append(turns, t)
	}
	setTails(turns, fresh)
	return &Session{Name: path + "#" + id, BlockSize: b, Root: root, Turns: len(turns)}
}

// traceLabGap is the recorded wait before round r: from the previous round's last event to
// r's first (timestamps), else the previous round's longest tool wall latency. tool says r
// begins with a tool's result.
func traceLabGap(r, prev traceLabRound, prevEnd time.Time) (gap time.Duration, tool bool) {
	tool = len(r.Events) > 0 && r.Events[0].Type == "tool_result"
	if len(r.Events) > 0 && !prevEnd.IsZero() {
		if at, err := time.Parse(time.RFC3339Nano, r.Events[0].At); err == nil {
			return max(at.Sub(prevEnd), 0), tool
		}
	}
	for _, tl := range prev.Tools {
		if tl.Wall != nil && *tl.Wall > 0 {
			gap = max(gap, time.Duration(*tl.Wall*float64(time.Millisecond)))
		}
	}
	return gap, tool
}

// lastEvent is the time of a round's last timing event; zero when it has none that parses.
func lastEvent(r traceLabRound) time.Time {
	for i := len(r.Events) - 1; i >= 0; i-- {
		if at, err := time.Parse(time.RFC3339Nano, r.Events[i].At); err == nil {
			return at
		}
	}
	return time.Time{}
}
