package sim

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// The messages of a request as each API writes them, tool calls and results included, read
// into one shape: a message is a role and its parts (text, a tool call, a tool's result).
// The prompt's tokens are those of every part (prefix.go); a tool call's name and arguments
// count as the chat template's text, a result's content as text.
//
//	chat       {"role":"assistant","tool_calls":[{"id","function":{"name","arguments":"…"}}]},
//	           {"role":"tool","tool_call_id","content"}
//	ollama     the same, "arguments" an object and no ids
//	anthropic  content blocks {"type":"tool_use","id","name","input"} and
//	           {"type":"tool_result","tool_use_id","content": a string or text blocks}
//	responses  input items {"type":"function_call","call_id","name","arguments"} and
//	           {"type":"function_call_output","call_id","output"}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string, or an array of parts (text, tool_use, tool_result)

	ToolCalls  []toolCall `json:"tool_calls"`   // chat, ollama
	ToolCallID string     `json:"tool_call_id"` // chat's role "tool"

	// A Responses input item that is not a message: function_call or function_call_output.
	Type      string          `json:"type"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

type toolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // chat: a JSON string; ollama: an object
	} `json:"function"`
}

// Part kinds of a message as the simulator received it (Seen).
const (
	PartText       = "text"
	PartToolCall   = "tool_call"
	PartToolResult = "tool_result"
)

// part is one piece of a message: text, a tool call (its name and arguments) or a tool's
// result (its content).
type part struct {
	kind   string
	callID string
	name   string
	text   string
}

// role is the message's role; a Responses function_call is the assistant's, its output the
// tool's.
func (m chatMessage) role() string {
	switch m.Type {
	case "function_call":
		return "assistant"
	case "function_call_output":
		return "tool"
	}
	return m.Role
}

// parts reads the message's content and tool structures.
func (m chatMessage) parts() []part {
	switch m.Type {
	case "function_call":
		return []part{{kind: PartToolCall, callID: m.CallID, name: m.Name, text: rawText(m.Arguments)}}
	case "function_call_output":
		return []part{{kind: PartToolResult, callID: m.CallID, text: rawText(m.Output)}}
	}
	var out []part
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		if s != "" || len(m.ToolCalls) == 0 {
			out = append(out, part{kind: PartText, text: s})
		}
		if m.Role == "tool" && len(out) == 1 {
			out[0].kind, out[0].callID = PartToolResult, m.ToolCallID
		}
	} else {
		out = blockParts(m.Content)
	}
	for _, tc := range m.ToolCalls {
		out = append(out, part{kind: PartToolCall, callID: tc.ID, name: tc.Function.Name, text: rawText(tc.Function.Arguments)})
	}
	return out
}

// blockParts reads an array of content parts: text parts (any type with a "text"), Anthropic
// tool_use and tool_result blocks.
func blockParts(content json.RawMessage) []part {
	var blocks []struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return nil
	}
	out := make([]part, 0, len(blocks))
	for _, b := range blocks {
		switch b.Type {
		case "tool_use":
			out = append(out, part{kind: PartToolCall, callID: b.ID, name: b.Name, text: rawText(b.Input)})
		case "tool_result":
			var texts []string
			for _, p := range blockParts(b.Content) {
				texts = append(texts, p.text)
			}
			if len(texts) == 0 {
				texts = []string{rawText(b.Content)}
			}
			out = append(out, part{kind: PartToolResult, callID: b.ToolUseID, text: strings.Join(texts, "\n")})
		default:
			out = append(out, part{kind: PartText, text: b.Text})
		}
	}
	return out
}

// rawText is a JSON string's value, else the JSON itself ("" for null or nothing).
func rawText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// Tokenizers a profile may count prompts with (Profile.Tokenizer).
const (
	TokenizerWords  = "words"       // one token per whitespace-separated word (the default)
	TokenizerCl100k = "cl100k_base" // OpenAI's cl100k_base, tokscope's offline tokenizer
)

var loadCl100k = sync.OnceValues(func() (tokenizer.Codec, error) { return tokenizer.Get(tokenizer.Cl100kBase) })

// tokenFunc calls fn with each token of a text, as bytes to hash.
type tokenFunc func(text string, fn func(tok []byte))

// tokensOf is the tokenizer of a profile (its name checked by Profile.normalized).
func tokensOf(name string) tokenFunc {
	if name != TokenizerCl100k {
		return func(text string, fn func([]byte)) {
			for _, w := range strings.Fields(text) {
				fn([]byte(w))
			}
		}
	}
	return func(text string, fn func([]byte)) {
		c, err := loadCl100k()
		if err != nil {
			return
		}
		ids, _, _ := c.Encode(text)
		var b [4]byte
		for _, id := range ids {
			b[0], b[1], b[2], b[3] = byte(id), byte(id>>8), byte(id>>16), byte(id>>24)
			fn(b[:])
		}
	}
}
