package apiwire

import (
	"encoding/json"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"tokscope/config"
	"tokscope/workload"
)

// API is a wire protocol an endpoint may speak (docs/apis.md, "Wire protocols"). Chat's
// requests are go-openai's (package probe builds them); the others are encoded here (Encode).
// Every API's events are decoded here (Decoder) onto chat's fields, so that every metric keeps
// one definition.
type API int

// The APIs, by config.Endpoint.API.
const (
	Chat API = iota
	Completions
	Responses
	Anthropic
	Ollama
)

// Of is an endpoint's API; "" and unknown names are chat (config validates the name).
func Of(ep config.Endpoint) API {
	switch ep.API {
	case config.APICompletions:
		return Completions
	case config.APIResponses:
		return Responses
	case config.APIAnthropic:
		return Anthropic
	case config.APIOllama:
		return Ollama
	}
	return Chat
}

// String is the API's name in the configuration and the record (config.APIChat…).
func (a API) String() string {
	return [...]string{config.APIChat, config.APICompletions, config.APIResponses, config.APIAnthropic, config.APIOllama}[a]
}

// URL is where a request of this API goes: base URL + the API's path. Ollama's base is the
// server root; a base ending in /v1 (what discovery and the OpenAI-compatible API use) is
// taken for its root.
func (a API) URL(base string) string {
	base = strings.TrimRight(base, "/")
	switch a {
	case Completions:
		return base + "/completions"
	case Responses:
		return base + "/responses"
	case Anthropic:
		return base + "/messages"
	case Ollama:
		return strings.TrimSuffix(base, "/v1") + "/api/chat"
	}
	return base + "/chat/completions"
}

// ModelsURL lists the server's models: /models, or Ollama's /api/tags.
func (a API) ModelsURL(base string) string {
	base = strings.TrimRight(base, "/")
	if a == Ollama {
		return strings.TrimSuffix(base, "/v1") + "/api/tags"
	}
	return base + "/models"
}

// NDJSON: one JSON object a line (Ollama's native API) rather than SSE.
func (a API) NDJSON() bool { return a == Ollama }

// UsageOption: the API has stream_options.include_usage (probe forces it on every request).
func (a API) UsageOption() bool { return a == Chat || a == Completions }

// AnthropicVersion is the API version every Anthropic Messages request names.
const AnthropicVersion = "2023-06-01"

// SetAuth adds the endpoint's key to a request in its API's way: x-api-key and
// anthropic-version for Anthropic, a Bearer token for the others. A header the user set
// (headers:) wins.
func SetAuth(h http.Header, ep config.Endpoint, a API) {
	if a == Anthropic {
		if h.Get("Anthropic-Version") == "" {
			h.Set("Anthropic-Version", AnthropicVersion)
		}
		if key := ep.APIKey(); key != "" && h.Get("X-Api-Key") == "" {
			h.Set("X-Api-Key", key)
		}
		return
	}
	if key := ep.APIKey(); key != "" && h.Get("Authorization") == "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

// RequestFields are the body fields of one request that win over the endpoint's extra_body:
// ignore_eos and min_tokens for an exact output length, sent only to the APIs whose servers
// take them (vLLM, SGLang, llama.cpp on chat and completions; Anthropic's and OpenAI's
// Responses API refuse unknown fields, Ollama has no such option); and Ollama's options,
// where num_predict (max_tokens) is merged into the extra_body's own options.
func RequestFields(w workload.Request, ep config.Endpoint, a API) map[string]json.RawMessage {
	switch {
	case a == Ollama:
		opts := map[string]any{}
		if o, ok := ep.ExtraBody["options"].(map[string]any); ok {
			maps.Copy(opts, o)
		}
		if w.MaxTokens > 0 {
			opts["num_predict"] = w.MaxTokens
		}
		if len(opts) == 0 {
			return nil
		}
		b, err := json.Marshal(opts)
		if err != nil {
			return nil
		}
		return map[string]json.RawMessage{"options": b}
	case w.MinTokens <= 0 || (a != Chat && a != Completions):
		return nil
	}
	return map[string]json.RawMessage{
		"ignore_eos": json.RawMessage("true"),
		"min_tokens": json.RawMessage(strconv.Itoa(w.MinTokens)),
	}
}

// Encode builds the JSON body of a request of a non-chat API (chat's is go-openai's).
func (a API) Encode(model string, w workload.Request) ([]byte, error) {
	type limits struct {
		MaxTokens int `json:"max_tokens,omitempty"`
	}
	switch a {
	case Completions:
		return json.Marshal(struct {
			Model  string `json:"model"`
			Prompt string `json:"prompt"`
			limits
			Stream        bool            `json:"stream"`
			StreamOptions json.RawMessage `json:"stream_options"`
		}{model, completionsPrompt(w), limits{w.MaxTokens}, true, json.RawMessage(`{"include_usage":true}`)})
	case Responses:
		return json.Marshal(struct {
			Model           string `json:"model"`
			Input           []any  `json:"input"`
			MaxOutputTokens int    `json:"max_output_tokens,omitempty"`
			Stream          bool   `json:"stream"`
		}{model, responsesInput(w.Messages), w.MaxTokens, true})
	case Anthropic:
		system, msgs := anthropicMessages(w.Messages)
		return json.Marshal(struct {
			Model    string     `json:"model"`
			System   string     `json:"system,omitempty"`
			Messages []partsMsg `json:"messages"`
			limits
			Stream bool `json:"stream"`
		}{model, system, msgs, limits{w.MaxTokens}, true})
	}
	return json.Marshal(struct {
		Model    string `json:"model"`
		Messages []any  `json:"messages"`
		Stream   bool   `json:"stream"`
	}{model, ollamaMessages(w.Messages), true})
}

type textMsg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// partsMsg has a string content, or text parts when the workload sent parts.
type partsMsg struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type responsesMsg = partsMsg

// messageText is a message's text: its content, or its text parts joined.
func messageText(m workload.Message) string {
	if m.Parts != nil {
		return strings.Join(m.Parts, "")
	}
	return m.Content
}

// promptText is the legacy completions prompt: the messages' texts, one paragraph each.
func promptText(msgs []workload.Message) string {
	texts := make([]string, len(msgs))
	for i, m := range msgs {
		texts[i] = messageText(m)
	}
	return strings.Join(texts, "\n\n")
}

// completionsPrompt is the legacy prompt of a request: its messages' texts, one paragraph
// each; a conversation's turn (--turns) is a transcript instead (transcript).
func completionsPrompt(w workload.Request) string {
	if w.Turn > 0 {
		return transcript(w.Messages)
	}
	return promptText(w.Messages)
}

// transcript is a conversation as one completions prompt: the system text as a paragraph,
// each user message as "User: …", each reply after "Assistant:" exactly as it streamed, and a
// final "Assistant:" for the model to go on from. Turn k's prompt is turn k−1's followed by
// its reply and the new user message, so a prefix cache can serve all of the earlier turns.
func transcript(msgs []workload.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case "assistant":
			b.WriteString(messageText(m))
			b.WriteString("\n\n")
		case "user":
			b.WriteString("User: ")
			b.WriteString(messageText(m))
			b.WriteString("\n\nAssistant:")
		default:
			b.WriteString(messageText(m))
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

func withParts(m workload.Message, partType string) partsMsg {
	if m.Parts == nil {
		return partsMsg{m.Role, m.Content}
	}
	parts := make([]textPart, len(m.Parts))
	for i, t := range m.Parts {
		parts[i] = textPart{partType, t}
	}
	return partsMsg{m.Role, parts}
}

// responsesInput: user and system text parts are input_text, the assistant's output_text;
// tool calls and results are function_call and function_call_output items.
func responsesInput(msgs []workload.Message) []any {
	out := make([]any, 0, len(msgs))
	for _, m := range msgs {
		if items := responsesToolItems(m); items != nil {
			out = append(out, items...)
			continue
		}
		typ := "input_text"
		if m.Role == "assistant" {
			typ = "output_text"
		}
		out = append(out, withParts(m, typ))
	}
	return out
}

// anthropicMessages moves system messages to the top-level system text (the Messages API
// refuses the role inside messages).
func anthropicMessages(msgs []workload.Message) (string, []partsMsg) {
	var system []string
	out := make([]partsMsg, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, messageText(m))
			continue
		}
		out = append(out, anthropicMessage(m))
	}
	return strings.Join(system, "\n\n"), out
}
