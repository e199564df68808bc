package workload

import (
	"fmt"
	"strings"
)

// Tool messages of agent sessions. A context's turns are threaded (Thread): when a turn's
// text continues the previous turn's, its messages are the previous turn's followed by, for a
// tool's result (the recorded input is a tool_result), an assistant message with one tool
// call and a "tool" message answering it with the new text, else a user message with the new
// text; each API sends them in its own form (probe). The texts of the messages are the turn's
// text exactly, so the blocks stay shared as the hash ids say. With --tool-messages text
// every turn is one user message holding its whole text, and recorded tool calls and results
// (AA) are written out as text.

// Tool-message modes (--tool-messages).
const (
	ToolMessagesAPI  = "api"
	ToolMessagesText = "text"
)

// ToolMessageModes lists --tool-messages' values.
var ToolMessageModes = []string{ToolMessagesAPI, ToolMessagesText}

// Thread is one context's messages so far; NewThread gives each context its own. It is used
// by one goroutine at a time.
type Thread struct {
	prev  string
	msgs  []Message
	calls int
}

// NewThread starts the messages of a context.
func NewThread() *Thread { return &Thread{} }

// messages are a synthetic turn's messages for text, threaded on the context's last turn.
func (th *Thread) messages(text string, tool bool) []Message {
	var msgs []Message
	switch {
	case th == nil:
		return []Message{{Role: "user", Content: text}}
	case th.prev != "" && len(text) > len(th.prev) && strings.HasPrefix(text, th.prev):
		rest := text[len(th.prev):]
		msgs = append(msgs, th.msgs...)
		if tool {
			th.calls++
			id := fmt.Sprintf("call_%d", th.calls)
			msgs = append(msgs, Message{Role: "assistant", ToolCalls: []ToolCall{{ID: id, Name: "tool", Arguments: "{}"}}},
				Message{Role: "tool", ToolCallID: id, Content: rest})
		} else {
			msgs = append(msgs, Message{Role: "user", Content: rest})
		}
	default: // the first turn, or a context that did not grow (compacted): one message
		msgs = []Message{{Role: "user", Content: text}}
	}
	th.prev, th.msgs = text, msgs
	return msgs
}

// asText writes recorded tool calls and results out as text, for --tool-messages text: a
// tool's result becomes a user message.
func asText(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = Message{Role: m.Role, Content: m.Content, Parts: m.Parts}
		if m.Role == "tool" {
			out[i] = Message{Role: "user", Content: fmt.Sprintf("[tool result %s] %s", m.ToolCallID, m.Content)}
		}
		for _, tc := range m.ToolCalls {
			if out[i].Content != "" {
				out[i].Content += "\n"
			}
			out[i].Content += fmt.Sprintf("[tool call %s] %s(%s)", tc.ID, tc.Name, tc.Arguments)
		}
	}
	return out
}
