package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"tokscope/config"
)

// The Weka / AgentX format (callanjfox/kv-cache-tester, traces/*.json): one JSON document a
// session, {"id", "block_size", "requests": […]}; a request is {"t": s, "in", "out",
// "hash_ids": […], "input_types": […], "stop", "think_time": s, "api_time": s}, a sub-agent
// {"t": s, "type": "subagent", "agent_id", "subagent_type", "duration_ms", "requests": […]}
// nested in its parent's list. "t" is seconds from the start of the list's agent (for a
// sub-agent, its own start on the parent's clock). hash_ids lists full blocks only; "in"
// beyond them is new text.

type agentxDoc struct {
	ID        string            `json:"id"`
	BlockSize *float64          `json:"block_size"`
	Requests  []json.RawMessage `json:"requests"`
}

type agentxItem struct {
	T          *float64          `json:"t"`
	Type       string            `json:"type"`
	In         *float64          `json:"in"`
	Out        *float64          `json:"out"`
	HashIDs    []float64         `json:"hash_ids"`
	InputTypes []string          `json:"input_types"`
	Stop       string            `json:"stop"`
	ThinkTime  *float64          `json:"think_time"`
	APITime    *float64          `json:"api_time"`
	AgentID    string            `json:"agent_id"`
	SubType    string            `json:"subagent_type"`
	DurationMS *float64          `json:"duration_ms"`
	Requests   []json.RawMessage `json:"requests"`
}

// agentxReader carries the file and its block size through the tree.
type agentxReader struct {
	path  string
	data  []byte
	block int
	fresh int32 // made-up ids, below any of the trace's own
	turns int
}

func readAgentX(path string, data []byte) (*Session, error) {
	var doc agentxDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonFileError(path, data, err)
	}
	r := &agentxReader{path: path, data: data, block: 64, fresh: -2}
	if doc.BlockSize != nil {
		b := *doc.BlockSize
		if b != math.Trunc(b) || b < 1 || b > 1<<16 {
			return nil, r.errAt("block_size", "must be a whole number of tokens from 1 to 65536")
		}
		r.block = int(b)
	}
	if len(doc.Requests) == 0 {
		return nil, r.errAt("requests", "no request: an AgentX trace lists its requests")
	}
	root, err := r.agent(doc.Requests, "requests", 0)
	if err != nil {
		return nil, err
	}
	name := path
	if doc.ID != "" {
		name = path + "#" + doc.ID
	}
	return &Session{Name: name, BlockSize: r.block, Root: root, Turns: countTurns(root)}, nil
}

func (r *agentxReader) errAt(jsonPath, msg string) error {
	return &FileError{File: r.path, Msg: jsonPath + ": " + msg}
}

// jsonFileError places a JSON error at its line and column.
func jsonFileError(path string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := lineOf(data, se.Offset-1) // the offset is past the offending byte
		return &FileError{File: path, Line: line, Msg: fmt.Sprintf("column %d: %v", col, err)}
	case errors.As(err, &te):
		line, col := lineOf(data, te.Offset)
		return &FileError{File: path, Line: line, Msg: fmt.Sprintf("column %d: %s must be %s, not %s", col, te.Field, te.Type, te.Value)}
	}
	return &FileError{File: path, Msg: err.Error()}
}

// agent reads one list of requests (the root's or a sub-agent's) at JSON path at.
func (r *agentxReader) agent(items []json.RawMessage, at string, depth int) (*Agent, error) {
	if depth > maxSubagentDepth {
		return nil, r.errAt(at, fmt.Sprintf("sub-agents nested deeper than %d", maxSubagentDepth))
	}
	a := &Agent{Depth: depth}
	var turns []*Turn
	var prev *agentxItem // the agent's previous turn
	var open []*SubAgent // sub-agents started since the previous turn
	var openAt []float64 // their recorded ends on the agent's clock (s)
	for i, raw := range items {
		p := fmt.Sprintf("%s[%d]", at, i)
		var it agentxItem
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(&it); err != nil {
			return nil, r.errAt(p, "not a request object: "+err.Error())
		}
		if it.T == nil || *it.T < 0 || math.IsInf(*it.T, 0) || math.IsNaN(*it.T) {
			return nil, r.errAt(p+".t", "must be a number of seconds, at least 0")
		}
		origin := 0.0 // the end of the agent's previous turn, on its clock
		if prev != nil {
			origin = *prev.T + val(prev.APITime)
		}
		if it.Type == "subagent" {
			sub, end, err := r.subagent(&it, p, depth)
			if err != nil {
				return nil, err
			}
			sub.Start = secs(*it.T - origin)
			sub.End = secs(end - origin)
			open, openAt = append(open, sub), append(openAt, end)
			a.Steps = append(a.Steps, Step{Sub: sub})
			continue
		}
		t, err := r.turn(&it, p)
		if err != nil {
			return nil, err
		}
		t.Gap = r.gap(&it, prev, origin, openAt)
		for k, s := range open {
			s.Background = openAt[k] > *it.T+1e-3
		}
		open, openAt = nil, nil
		a.Steps = append(a.Steps, Step{Turn: t})
		turns = append(turns, t)
		prev = &it
	}
	for _, s := range open { // started after the agent's last turn: the session waits for them
		s.Background = false
	}
	setTails(turns, func() int32 { r.fresh--; return r.fresh })
	return a, nil
}

// subagent reads a sub-agent entry; end is its recorded end on the parent's clock: its start
// plus duration_ms, else the end of its last turn.
func (r *agentxReader) subagent(it *agentxItem, p string, depth int) (*SubAgent, float64, error) {
	if len(it.Requests) == 0 {
		return nil, 0, r.errAt(p+".requests", "a sub-agent lists its requests")
	}
	a, err := r.agent(it.Requests, p+".requests", depth+1)
	if err != nil {
		return nil, 0, err
	}
	a.ID, a.Type = it.AgentID, it.SubType
	end := *it.T
	if it.DurationMS != nil && *it.DurationMS >= 0 {
		end += *it.DurationMS / 1000
	} else {
		var last agentxItem
		if json.Unmarshal(it.Requests[len(it.Requests)-1], &last) == nil && last.T != nil {
			end += *last.T + val(last.APITime)
		}
	}
	return &SubAgent{Agent: a}, end, nil
}

// turn reads one request's lengths and blocks.
func (r *agentxReader) turn(it *agentxItem, p string) (*Turn, error) {
	t := &Turn{Stop: it.Stop, Where: r.path + ": " + p}
	for _, f := range []struct {
		name  string
		v     *float64
		least float64
		dst   *int
	}{{"in", it.In, 1, &t.In}, {"out", it.Out, 0, &t.Out}} {
		if f.v == nil || *f.v != math.Trunc(*f.v) || *f.v < f.least || *f.v > config.MaxLengthTokens {
			return nil, r.errAt(p+"."+f.name, fmt.Sprintf("must be a whole number of tokens from %v to %d", f.least, config.MaxLengthTokens))
		}
		*f.dst = int(*f.v)
	}
	for k, h := range it.HashIDs {
		if h < 0 || h != math.Trunc(h) || h > math.MaxInt32 {
			return nil, r.errAt(fmt.Sprintf("%s.hash_ids[%d]", p, k), "must be a whole number from 0 to 2147483647")
		}
		t.Blocks = append(t.Blocks, int32(h))
	}
	if len(t.Blocks)*r.block > t.In {
		return nil, r.errAt(p+".hash_ids", fmt.Sprintf("%d full blocks of %d tokens are more than \"in\" (%d)", len(t.Blocks), r.block, t.In))
	}
	for _, ty := range it.InputTypes {
		if ty == "tool_result" {
			t.Tool = true
		}
	}
	return t, nil
}

// gap is the recorded wait before a turn: after foreground sub-agents, from the last one's
// end to the turn's start; else think_time, else the time from the previous turn's end (t +
// api_time) to this turn's t.
func (r *agentxReader) gap(it *agentxItem, prev *agentxItem, origin float64, subEnds []float64) time.Duration {
	last := -1.0
	for _, e := range subEnds {
		if e <= *it.T+1e-3 {
			last = max(last, e)
		}
	}
	switch {
	case last >= 0:
		return secs(*it.T - last)
	case prev == nil:
		return 0
	case it.ThinkTime != nil && *it.ThinkTime >= 0:
		return secs(*it.ThinkTime)
	}
	return secs(*it.T - origin)
}

func val(p *float64) float64 {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return 0
	}
	return *p
}

// secs is s seconds as a duration, never negative.
func secs(s float64) time.Duration {
	if !(s > 0) {
		return 0
	}
	return time.Duration(math.Round(s * float64(time.Second)))
}
