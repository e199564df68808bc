package workload

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"

	"tokscope/config"
)

// Artificial Analysis agentperf-local replays (ArtificialAnalysis/aa-agentperf-local,
// agentperf_local/data/replays/*/traces/*.jsonl): one JSON line a turn with the real
// request, {"conversation_id", "conversation_idx", "messages": [OpenAI chat messages, with
// tool_calls and tool results], "tools", "target_output_tokens", "max_output_tokens",
// "simulated_tool_delay_ms_after"}. The prompt is the recorded messages; its blocks are the
// offline tokenizer's tokens of their text, in AABlockTokens-token pieces.

// AABlockTokens is the block size an AA turn's text is cut into for the ideal cache.
const AABlockTokens = 64

type aaLine struct {
	Conversation string          `json:"conversation_id"`
	Messages     json.RawMessage `json:"messages"`
	Target       *float64        `json:"target_output_tokens"`
	MaxOut       *float64        `json:"max_output_tokens"`
	DelayAfter   *float64        `json:"simulated_tool_delay_ms_after"`
	ToolsAfter   []any           `json:"recorded_tool_calls_after"`
}

type aaMessage struct {
	Role       string `json:"role"`
	Content    any    `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func readAA(path string, data []byte) ([]*Session, error) {
	type conv struct {
		turns    []*Turn
		prevTool bool
		delay    time.Duration
	}
	byConv := map[string]*conv{}
	var order []string
	for _, ln := range jsonLines(data) {
		var l aaLine
		if err := json.Unmarshal(ln.b, &l); err != nil {
			return nil, &FileError{File: path, Line: ln.n, Msg: "not an agentperf turn (one JSON object a line): " + err.Error()}
		}
		t, err := aaTurn(&l)
		if err != nil {
			return nil, &FileError{File: path, Line: ln.n, Msg: err.Error()}
		}
		t.Where = fmt.Sprintf("%s:%d", path, ln.n)
		c := byConv[l.Conversation]
		if c == nil {
			c = &conv{}
			byConv[l.Conversation] = c
			order = append(order, l.Conversation)
		} else {
			t.Gap, t.Tool = c.delay, c.prevTool
		}
		c.turns = append(c.turns, t)
		c.prevTool, c.delay = len(l.ToolsAfter) > 0, 0
		if l.DelayAfter != nil && *l.DelayAfter > 0 {
			c.delay = time.Duration(*l.DelayAfter * float64(time.Millisecond))
		}
	}
	if len(order) == 0 {
		return nil, &FileError{File: path, Msg: "no turn in it"}
	}
	var out []*Session
	for _, id := range order {
		c := byConv[id]
		root := &Agent{}
		for _, t := range c.turns {
			root.Steps = append(root.Steps, Step{Turn: t})
		}
		if err := aaBlocks(c.turns); err != nil {
			return nil, &FileError{File: path, Msg: err.Error()}
		}
		out = append(out, &Session{Name: path + "#" + id, BlockSize: AABlockTokens, Root: root, Turns: len(c.turns)})
	}
	return out, nil
}

// aaTurn checks one line and takes its messages (with their tool calls and results) and
// its output length.
func aaTurn(l *aaLine) (*Turn, error) {
	var msgs []aaMessage
	if len(l.Messages) == 0 || json.Unmarshal(l.Messages, &msgs) != nil || len(msgs) == 0 {
		return nil, fmt.Errorf(`"messages" must be a non-empty list of chat messages`)
	}
	out := l.Target
	if out == nil {
		out = l.MaxOut
	}
	if out == nil || *out != math.Trunc(*out) || *out < 1 || *out > config.MaxLengthTokens {
		return nil, fmt.Errorf(`"target_output_tokens" must be a whole number of tokens from 1 to %d`, config.MaxLengthTokens)
	}
	if l.DelayAfter != nil && (*l.DelayAfter < 0 || math.IsInf(*l.DelayAfter, 0)) {
		return nil, fmt.Errorf(`"simulated_tool_delay_ms_after" must be a number of milliseconds, at least 0`)
	}
	t := &Turn{Out: int(*out)}
	for k, m := range msgs {
		msg, err := aaMsg(m)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %v", k, err)
		}
		t.Messages = append(t.Messages, msg)
	}
	return t, nil
}

// aaMsg is a recorded message: its content (a string or text parts), its tool calls, the
// call a tool's result answers.
func aaMsg(m aaMessage) (Message, error) {
	var b strings.Builder
	switch c := m.Content.(type) {
	case nil:
	case string:
		b.WriteString(c)
	case []any:
		for _, p := range c {
			part, _ := p.(map[string]any)
			if s, ok := part["text"].(string); ok {
				b.WriteString(s)
			}
		}
	default:
		return Message{}, fmt.Errorf(`"content" must be a string or a list of text parts`)
	}
	switch m.Role {
	case "system", "user", "assistant", "tool":
	default:
		return Message{}, fmt.Errorf("role %q: give system, user, assistant or tool", m.Role)
	}
	msg := Message{Role: m.Role, Content: b.String(), ToolCallID: m.ToolCallID}
	for _, tc := range m.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if msg.Content == "" && len(msg.ToolCalls) == 0 {
		return Message{}, fmt.Errorf("a message with neither content nor tool calls")
	}
	if m.Role == "tool" && m.ToolCallID == "" {
		return Message{}, fmt.Errorf(`a tool message without "tool_call_id"`)
	}
	return msg, nil
}

// aaBlocks cuts each turn's text (its messages, one paragraph each, as the offline tokenizer
// reads them) into AABlockTokens-token blocks, one id per distinct run of blocks from the
// start: turns that begin with the same text share its blocks' ids.
func aaBlocks(turns []*Turn) error {
	c, err := loadCorpus()
	if err != nil {
		return fmt.Errorf("agentperf sessions need the offline tokenizer: %w", err)
	}
	ids := map[uint64]int32{}
	for k, t := range turns {
		var text strings.Builder
		for _, m := range asText(t.Messages) {
			text.WriteString(m.Role + ": " + m.Content + "\n\n")
		}
		toks, _, err := c.codec.Encode(text.String())
		if err != nil {
			return err
		}
		t.In = len(toks)
		h := fnv.New64a()
		for k := 0; k+AABlockTokens <= len(toks); k += AABlockTokens {
			for _, tok := range toks[k : k+AABlockTokens] {
				fmt.Fprintf(h, "%d,", tok)
			}
			key := h.Sum64()
			id, ok := ids[key]
			if !ok {
				id = int32(len(ids))
				ids[key] = id
			}
			t.Blocks = append(t.Blocks, id)
		}
		t.Tail = -2 - int32(k) // a tail of its own: an AA turn's text is its messages'
	}
	return nil
}
