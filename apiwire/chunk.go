package apiwire

import "encoding/json"

// chatChunk is a tolerant view of one chat.completion.chunk: it reads the fields every
// OpenAI-compatible server agrees on plus the ones go-openai drops (delta.reasoning, the
// chunk-level error of OpenRouter). A field of an unexpected type is skipped, not fatal. The
// other APIs' events are mapped onto it (decode.go), so it is every event in chat's terms.
type chatChunk struct {
	ID      firstID  `json:"id"`
	Choices []Choice `json:"choices"`
	Usage   *Usage   `json:"usage"`
	Error   *Error   `json:"error"`
	// The server's own clock (servertiming.go): llama.cpp's on the last chunk, vLLM's when asked.
	Timings *wireTimings `json:"timings"`
	Metrics *wireMetrics `json:"metrics"`
}

// Choice is one choice of an event: its answer and reasoning text and its finish reason (""
// until the last one).
type Choice struct {
	Delta        Delta  `json:"delta"`
	Text         string `json:"text"` // legacy completions: answer text
	FinishReason string `json:"finish_reason"`
}

// Delta is a choice's new text.
type Delta struct {
	Content          string `json:"content"`
	ReasoningContent string `json:"reasoning_content"` // DeepSeek, vLLM < 0.10, SGLang
	Reasoning        string `json:"reasoning"`         // Ollama, OpenRouter, newer vLLM
	Refusal          string `json:"refusal"`
}

// ReasoningText prefers reasoning_content: servers in transition send both with the same text.
func (dl *Delta) ReasoningText() string {
	if dl.ReasoningContent != "" {
		return dl.ReasoningContent
	}
	return dl.Reasoning
}

// Usage is the server's token counts as chat names them; every API's are mapped onto it.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	Details          struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptDetails struct {
		CachedTokens int `json:"cached_tokens"` // -1 before decoding: absent stays -1
	} `json:"prompt_tokens_details"`
}

// firstID keeps the first non-empty id and ignores the rest without allocating: every chunk
// repeats it, and only the first one is needed to correlate a request with the server.
type firstID struct{ v string }

func (f *firstID) UnmarshalJSON(b []byte) error {
	if f.v == "" && len(b) > 2 && b[0] == '"' {
		return json.Unmarshal(b, &f.v)
	}
	return nil
}

// Keep is how much of an undecodable event or error object is kept for its message: the
// caller redacts it and then shortens it to one line.
const Keep = 4096

// clip cuts s to n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
