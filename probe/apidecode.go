package probe

import (
	"encoding/json"
	"errors"
)

// The decoders of the APIs other than chat. Each reads one event (an SSE data payload, or an
// NDJSON line) into a tolerant struct of its own and maps it onto the chat decoder's fields —
// d.w's one choice (content, reasoning, finish reason), d.usage, d.w.Error — so that measure,
// countUsage, emitText, mustStop and finalize apply every definition once for all APIs
// (docs/apis.md, "Wire protocols"):
//
//	completions  choices[].text is answer text; usage as chat (an all-zero usage on every chunk,
//	             as Ollama sends, is a placeholder, not a count)
//	responses    response.output_text.delta / refusal.delta answer, reasoning_text.delta and
//	             reasoning_summary_text.delta reasoning; response.completed / incomplete end it
//	             with usage; response.failed and error are errors
//	anthropic    content_block_delta text_delta answer, thinking_delta reasoning; message_start
//	             has the prompt, message_delta the stop_reason and the (cumulative) usage;
//	             message_stop ends it; error is an error; ping is no event at all
//	ollama       message.content answer, message.thinking reasoning; the done line has
//	             eval_count, prompt_eval_count and done_reason; {"error": …} is an error

// respEvent is one Responses API event.
type respEvent struct {
	Type     string          `json:"type"`
	Delta    string          `json:"delta"`
	Message  string          `json:"message"` // an "error" event's
	Code     json.RawMessage `json:"code"`
	Response *respBody       `json:"response"`
	Timings  *wireTimings    `json:"timings"` // llama.cpp, on response.completed
}

type respBody struct {
	ID         string     `json:"id"`
	Status     string     `json:"status"`
	Usage      *respUsage `json:"usage"`
	Error      *wireError `json:"error"`
	Incomplete *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

type respUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	InputDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// anthEvent is one Anthropic Messages event.
type anthEvent struct {
	Type    string     `json:"type"`
	Message *anthMsg   `json:"message"`
	Delta   anthDelta  `json:"delta"`
	Usage   *anthUsage `json:"usage"`
	Error   *wireError `json:"error"`
}

type anthMsg struct {
	ID    string    `json:"id"`
	Usage anthUsage `json:"usage"`
}

type anthDelta struct {
	Type       string `json:"type"`
	Text       string `json:"text"`
	Thinking   string `json:"thinking"`
	StopReason string `json:"stop_reason"`
}

// anthUsage: -1 = absent (set before each decode).
type anthUsage struct {
	InputTokens   int `json:"input_tokens"`
	CacheRead     int `json:"cache_read_input_tokens"`
	CacheCreation int `json:"cache_creation_input_tokens"`
	OutputTokens  int `json:"output_tokens"`
}

var absentAnthUsage = anthUsage{-1, -1, -1, -1}

// ollamaLine is one line of Ollama's /api/chat stream.
type ollamaLine struct {
	Message struct {
		Content  string `json:"content"`
		Thinking string `json:"thinking"`
	} `json:"message"`
	Done            bool   `json:"done"`
	DoneReason      string `json:"done_reason"`
	EvalCount       int    `json:"eval_count"`        // -1 = absent
	PromptEvalCount int    `json:"prompt_eval_count"` // -1 = absent
	// The server's clock, in nanoseconds (-1 = absent).
	LoadDuration       int64      `json:"load_duration"`
	PromptEvalDuration int64      `json:"prompt_eval_duration"`
	EvalDuration       int64      `json:"eval_duration"`
	Error              *wireError `json:"error"`
}

// apiState is what a non-chat decoder keeps between events.
type apiState struct {
	resp   respEvent
	anth   anthEvent
	anthM  anthMsg
	anthU  anthUsage
	ollama ollamaLine
	// Anthropic's prompt from message_start, until a message_delta says otherwise.
	prompt, cached int
	promptSeen     bool
}

// decodeEvent decodes raw for d's API into d.w and d.usage. ok=false: not JSON at all (kept
// for the message); skip: not an event that counts (Anthropic's ping).
func (d *decoder) decodeEvent(raw []byte) (ok, skip bool) {
	switch d.api {
	case apiChat:
		return d.decodeChunk(raw), false
	case apiCompletions:
		ok = d.decodeChunk(raw)
		if u := &d.usage; ok && u.CompletionTokens == 0 && u.PromptTokens == 0 {
			u.CompletionTokens = -1 // Ollama's placeholder on every chunk
		}
		return ok, false
	}
	d.resetEvent()
	var err error
	switch d.api {
	case apiResponses:
		d.a.resp = respEvent{}
		if err = d.decodeInto(raw, &d.a.resp); tolerable(err) {
			d.responsesEvent()
		}
	case apiAnthropic:
		d.a.anth = anthEvent{Message: &d.a.anthM, Usage: &d.a.anthU}
		d.a.anthM = anthMsg{Usage: absentAnthUsage}
		d.a.anthU = absentAnthUsage
		if err = d.decodeInto(raw, &d.a.anth); tolerable(err) {
			if d.a.anth.Type == "ping" {
				return true, true
			}
			d.anthropicEvent()
		}
	case apiOllama:
		d.a.ollama = ollamaLine{EvalCount: -1, PromptEvalCount: -1, LoadDuration: -1,
			PromptEvalDuration: -1, EvalDuration: -1}
		if err = d.decodeInto(raw, &d.a.ollama); tolerable(err) {
			d.ollamaEvent()
		}
	}
	if !tolerable(err) {
		if d.badChunk == "" {
			d.badChunk = clip(string(raw), tailKeep) // readable() shortens it after redact
		}
		return false, false
	}
	return true, false
}

// tolerable: no error, or only a field of the wrong type (the rest of the event decoded).
// The target is declared after the nil check: it escapes, and would cost an allocation on
// every event.
func tolerable(err error) bool {
	if err == nil {
		return true
	}
	var typeErr *json.UnmarshalTypeError
	return errors.As(err, &typeErr)
}

// resetEvent empties d.w to one choice and no usage or error.
func (d *decoder) resetEvent() {
	if cap(d.w.Choices) == 0 {
		d.w.Choices = make([]wireChoice, 1)
	}
	d.w.Choices = d.w.Choices[:1]
	d.w.Choices[0] = wireChoice{}
	d.usage = wireUsage{CompletionTokens: -1}
	d.usage.PromptDetails.CachedTokens = -1
	d.w.Usage = &d.usage
	d.w.Error, d.w.Timings, d.w.Metrics = nil, nil, nil
}

func (d *decoder) responsesEvent() {
	e, ch := &d.a.resp, &d.w.Choices[0]
	d.w.Timings = e.Timings
	switch e.Type {
	case "response.output_text.delta", "response.refusal.delta":
		ch.Delta.Content = e.Delta
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		ch.Delta.Reasoning = e.Delta
	case "response.completed", "response.incomplete":
		d.ended = true
		ch.FinishReason = "stop"
		if r := e.Response; r != nil {
			if r.Incomplete != nil || e.Type == "response.incomplete" {
				ch.FinishReason = incompleteReason(r)
			}
			d.responsesUsage(r.Usage)
		}
	case "response.failed":
		d.w.Error = &wireError{Message: "response failed"}
		if r := e.Response; r != nil && r.Error != nil {
			d.w.Error = r.Error
		}
	case "error":
		d.w.Error = &wireError{Message: e.Message, Code: rawText(e.Code)}
		if e.Message == "" {
			d.w.Error.Message = "error event"
		}
	}
	if r := e.Response; r != nil && d.s.ResponseID == "" {
		d.s.ResponseID = r.ID
	}
}

// incompleteReason is a response.incomplete's finish reason in chat's words: reaching
// max_output_tokens is "length" (an answer cut at its limit, as OpenAI ends them), a
// content filter "content_filter".
func incompleteReason(r *respBody) string {
	reason := ""
	if r.Incomplete != nil {
		reason = r.Incomplete.Reason
	}
	switch reason {
	case "max_output_tokens", "":
		return "length"
	}
	return reason
}

func (d *decoder) responsesUsage(u *respUsage) {
	if u == nil {
		return
	}
	d.usage.PromptTokens = u.InputTokens
	d.usage.CompletionTokens = max(u.OutputTokens, 0)
	if u.InputDetails != nil {
		d.usage.PromptDetails.CachedTokens = u.InputDetails.CachedTokens
	}
	d.usage.Details.ReasoningTokens = u.OutputDetails.ReasoningTokens
}

func (d *decoder) anthropicEvent() {
	e, ch := &d.a.anth, &d.w.Choices[0]
	switch e.Type {
	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			ch.Delta.Content = e.Delta.Text
		case "thinking_delta":
			ch.Delta.Reasoning = e.Delta.Thinking
		}
	case "message_start":
		if d.s.ResponseID == "" {
			d.s.ResponseID = d.a.anthM.ID
		}
		d.anthropicPrompt(&d.a.anthM.Usage)
	case "message_delta":
		ch.FinishReason = e.Delta.StopReason
		if u := &d.a.anthU; u.OutputTokens >= 0 {
			// Usage in message_delta is cumulative and may restate the prompt (Ollama does,
			// and Anthropic's current API): the later figures win.
			d.anthropicPrompt(u)
			d.usage.CompletionTokens = u.OutputTokens
			d.usage.PromptTokens = d.a.prompt
			d.usage.PromptDetails.CachedTokens = d.a.cached
		}
	case "message_stop":
		d.ended = true
	case "error":
		d.w.Error = e.Error
		if d.w.Error == nil {
			d.w.Error = &wireError{Message: "error event"}
		}
	}
}

// anthropicPrompt: prompt = input + cache_read + cache_creation, cached = cache_read (absent
// stays -1); from the event that states input_tokens.
func (d *decoder) anthropicPrompt(u *anthUsage) {
	if u.InputTokens < 0 {
		return
	}
	d.a.promptSeen = true
	d.a.prompt = u.InputTokens + max(u.CacheRead, 0) + max(u.CacheCreation, 0)
	d.a.cached = max(u.CacheRead, -1)
}

func (d *decoder) ollamaEvent() {
	e, ch := &d.a.ollama, &d.w.Choices[0]
	ch.Delta.Content, ch.Delta.Reasoning = e.Message.Content, e.Message.Thinking
	if e.Error != nil {
		d.w.Error = e.Error
		return
	}
	if !e.Done {
		return
	}
	d.ended = true
	ch.FinishReason = e.DoneReason
	if ch.FinishReason == "" {
		ch.FinishReason = "stop"
	}
	d.s.Server = ollamaTiming(e.LoadDuration, e.PromptEvalDuration, e.EvalDuration,
		int64(e.EvalCount), int64(e.PromptEvalCount))
	if e.EvalCount >= 0 {
		d.usage.CompletionTokens = e.EvalCount
		// The whole prompt, cached or not: Ollama 0.17.4 counted 1841 for a repeated prompt whose
		// prompt_eval_duration fell from 1.8 s to 2.4 ms. So nothing says what its cache served.
		d.usage.PromptTokens = max(e.PromptEvalCount, 0)
	}
}
