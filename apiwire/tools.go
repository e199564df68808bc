package apiwire

import (
	"encoding/json"

	"tokscope/workload"
)

// Tool calls and results of agent sessions (workload.Message.ToolCalls, ToolCallID) in each
// API's own form. Chat's are go-openai's (tool_calls on the assistant message, role "tool"
// with tool_call_id: client.go); here Anthropic's tool_use and tool_result blocks, the
// Responses API's function_call and function_call_output items, and Ollama's tool_calls and
// role "tool". The legacy completions prompt has no such form: their texts go in as they are.

// arguments is a tool call's arguments as a JSON object ({} when they are not one).
func arguments(s string) json.RawMessage {
	var obj map[string]any
	if json.Unmarshal([]byte(s), &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

// anthropicMessage is m as a Messages API message: an assistant's tool calls are tool_use
// blocks after its text, a tool's result a user message with one tool_result block.
func anthropicMessage(m workload.Message) partsMsg {
	switch {
	case m.Role == "tool":
		return partsMsg{"user", []anthropicBlock{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content}}}
	case len(m.ToolCalls) == 0:
		return withParts(m, "text")
	}
	var blocks []anthropicBlock
	if t := messageText(m); t != "" {
		blocks = append(blocks, anthropicBlock{Type: "text", Text: t})
	}
	for _, tc := range m.ToolCalls {
		blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: arguments(tc.Arguments)})
	}
	return partsMsg{m.Role, blocks}
}

// responsesToolItems are m's Responses input items when it is a tool call or result; nil
// for any other message.
func responsesToolItems(m workload.Message) []any {
	type call struct {
		Type      string `json:"type"`
		CallID    string `json:"call_id"`
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments,omitempty"`
		Output    string `json:"output,omitempty"`
	}
	switch {
	case m.Role == "tool":
		return []any{call{Type: "function_call_output", CallID: m.ToolCallID, Output: m.Content}}
	case len(m.ToolCalls) == 0:
		return nil
	}
	var out []any
	if t := messageText(m); t != "" {
		out = append(out, withParts(m, "output_text"))
	}
	for _, tc := range m.ToolCalls {
		out = append(out, call{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: string(arguments(tc.Arguments))})
	}
	return out
}

// ollamaMessages are the messages of an Ollama /api/chat request: plain text content, an
// assistant's tool calls as tool_calls, a tool's result as role "tool".
func ollamaMessages(msgs []workload.Message) []any {
	type fn struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	type toolCall struct {
		Function fn `json:"function"`
	}
	type msg struct {
		Role      string     `json:"role"`
		Content   string     `json:"content"`
		ToolCalls []toolCall `json:"tool_calls,omitempty"`
	}
	out := make([]any, len(msgs))
	for i, m := range msgs {
		om := msg{Role: m.Role, Content: messageText(m)}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, toolCall{fn{tc.Name, arguments(tc.Arguments)}})
		}
		out[i] = om
	}
	return out
}
