package apiwire

import (
	"bytes"
	"encoding/json"
	"errors"

	"tokscope/sample"
)

// The decoders of the APIs other than chat. Each reads one event (an SSE data payload, or an
// NDJSON line) into a tolerant struct of its own and maps it onto chat's fields — one choice
// (content, reasoning, finish reason), the usage, the error — so that probe's measurement
// (instants, N, the reasoning share, the outcome) applies every definition once for all APIs
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
	Error      *Error     `json:"error"`
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
	Error   *Error     `json:"error"`
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
	LoadDuration       int64  `json:"load_duration"`
	PromptEvalDuration int64  `json:"prompt_eval_duration"`
	EvalDuration       int64  `json:"eval_duration"`
	Error              *Error `json:"error"`
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

// Decoder reads the events of one response, one at a time, into chat's fields: after
// Decode, Choices, Usage, Err and Server say what the event carried, in every API's case. It
// reuses its structs and one json.Decoder from event to event, so that decoding allocates
// almost nothing per chunk. The zero value decodes chat; set API first for another. Not safe
// for concurrent use: one per stream.
type Decoder struct {
	API API

	w      chatChunk
	usage  Usage                // w.Usage points here before each decode: no allocation per chunk
	a      apiState             // the other APIs' events
	id     string               // the response's id from a non-chat event (chat's: w.ID)
	server *sample.ServerTiming // the server's clock this event carried
	ended  bool                 // the API's last event came (response.completed, message_stop, done)
	bad    string               // the first event that was not JSON, clipped

	// One json.Decoder for the whole stream: unlike json.Unmarshal it keeps its scanner and
	// error-context stacks, which were most of the per-chunk allocations.
	rd       bytes.Reader
	dec      *json.Decoder
	consumed int64 // bytes handed to dec so far
}

// Decode decodes raw, one event (an SSE data payload or an NDJSON line), for d's API. ok is
// false when the event is not JSON at all (BadChunk keeps the first such); a field of the wrong
// type still yields the rest of it. skip: not an event that counts (Anthropic's ping): no
// chunk, no first event, no reset of a stall timer.
func (d *Decoder) Decode(raw []byte) (ok, skip bool) {
	d.server = nil
	ok, skip = d.decodeEvent(raw)
	if ok && !skip {
		d.takeServerTiming()
	}
	return ok, skip
}

// Choices are the event's choices (other APIs: one).
func (d *Decoder) Choices() []Choice { return d.w.Choices }

// Usage is the token counts the event carried, nil when it carried none.
func (d *Decoder) Usage() *Usage {
	if d.w.Usage == nil || d.usage.CompletionTokens < 0 {
		return nil
	}
	return &d.usage
}

// Err is the error the event carried (an error object, an error event), nil when none.
func (d *Decoder) Err() *Error { return d.w.Error }

// Server is the server's clock the event carried (llama.cpp's timings, vLLM's metrics,
// Ollama's durations), nil when none.
func (d *Decoder) Server() *sample.ServerTiming { return d.server }

// ID is the response's id: the first one an event of the stream named, "" before.
func (d *Decoder) ID() string {
	if d.id != "" {
		return d.id
	}
	return d.w.ID.v
}

// Ended says that the API's last event came (response.completed or incomplete, message_stop,
// Ollama's done line); chat's end is [DONE], which the line reader takes.
func (d *Decoder) Ended() bool { return d.ended }

// BadChunk is the first event that was not JSON, clipped to Keep bytes; "" when none.
func (d *Decoder) BadChunk() string { return d.bad }

// Prompt is the prompt and cached tokens an Anthropic message_start stated (cached -1 when
// absent), ok false when none did: a stream cut before its message_delta still has them.
func (d *Decoder) Prompt() (prompt, cached int, ok bool) {
	return d.a.prompt, d.a.cached, d.a.promptSeen
}

// decodeEvent decodes raw for d's API into d.w and d.usage.
func (d *Decoder) decodeEvent(raw []byte) (ok, skip bool) {
	switch d.API {
	case Chat:
		return d.decodeChunk(raw), false
	case Completions:
		ok = d.decodeChunk(raw)
		if u := &d.usage; ok && u.CompletionTokens == 0 && u.PromptTokens == 0 {
			u.CompletionTokens = -1 // Ollama's placeholder on every chunk
		}
		return ok, false
	}
	d.resetEvent()
	var err error
	switch d.API {
	case Responses:
		d.a.resp = respEvent{}
		if err = d.decodeInto(raw, &d.a.resp); tolerable(err) {
			d.responsesEvent()
		}
	case Anthropic:
		d.a.anth = anthEvent{Message: &d.a.anthM, Usage: &d.a.anthU}
		d.a.anthM = anthMsg{Usage: absentAnthUsage}
		d.a.anthU = absentAnthUsage
		if err = d.decodeInto(raw, &d.a.anth); tolerable(err) {
			if d.a.anth.Type == "ping" {
				return true, true
			}
			d.anthropicEvent()
		}
	case Ollama:
		d.a.ollama = ollamaLine{EvalCount: -1, PromptEvalCount: -1, LoadDuration: -1,
			PromptEvalDuration: -1, EvalDuration: -1}
		if err = d.decodeInto(raw, &d.a.ollama); tolerable(err) {
			d.ollamaEvent()
		}
	}
	if !tolerable(err) {
		if d.bad == "" {
			d.bad = clip(string(raw), Keep) // the caller shortens it after redacting
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
func (d *Decoder) resetEvent() {
	if cap(d.w.Choices) == 0 {
		d.w.Choices = make([]Choice, 1)
	}
	d.w.Choices = d.w.Choices[:1]
	d.w.Choices[0] = Choice{}
	d.usage = Usage{CompletionTokens: -1}
	d.usage.PromptDetails.CachedTokens = -1
	d.w.Usage = &d.usage
	d.w.Error, d.w.Timings, d.w.Metrics = nil, nil, nil
}

func (d *Decoder) responsesEvent() {
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
		d.w.Error = &Error{Message: "response failed"}
		if r := e.Response; r != nil && r.Error != nil {
			d.w.Error = r.Error
		}
	case "error":
		d.w.Error = &Error{Message: e.Message, Code: rawText(e.Code)}
		if e.Message == "" {
			d.w.Error.Message = "error event"
		}
	}
	if r := e.Response; r != nil && d.id == "" {
		d.id = r.ID
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

func (d *Decoder) responsesUsage(u *respUsage) {
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

func (d *Decoder) anthropicEvent() {
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
		if d.id == "" {
			d.id = d.a.anthM.ID
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
			d.w.Error = &Error{Message: "error event"}
		}
	}
}

// anthropicPrompt: prompt = input + cache_read + cache_creation, cached = cache_read (absent
// stays -1); from the event that states input_tokens.
func (d *Decoder) anthropicPrompt(u *anthUsage) {
	if u.InputTokens < 0 {
		return
	}
	d.a.promptSeen = true
	d.a.prompt = u.InputTokens + max(u.CacheRead, 0) + max(u.CacheCreation, 0)
	d.a.cached = max(u.CacheRead, -1)
}

func (d *Decoder) ollamaEvent() {
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
	d.server = ollamaTiming(e.LoadDuration, e.PromptEvalDuration, e.EvalDuration,
		int64(e.EvalCount), int64(e.PromptEvalCount))
	if e.EvalCount >= 0 {
		d.usage.CompletionTokens = e.EvalCount
		// The whole prompt, cached or not: Ollama 0.17.4 counted 1841 for a repeated prompt whose
		// prompt_eval_duration fell from 1.8 s to 2.4 ms. So nothing says what its cache served.
		d.usage.PromptTokens = max(e.PromptEvalCount, 0)
	}
}

// decodeChunk decodes a chat chunk into d.w, resetting what the previous chunk left there. It
// is false when the chunk is not JSON at all (the first such chunk is kept for the message); a
// field of the wrong type still yields the rest of the chunk.
func (d *Decoder) decodeChunk(raw []byte) bool {
	clear(d.w.Choices)
	d.w.Choices = d.w.Choices[:0]
	d.usage = Usage{CompletionTokens: -1} // stays -1 when the chunk has no usage
	d.usage.PromptDetails.CachedTokens = -1
	d.w.Usage = &d.usage
	d.w.Error, d.w.Timings, d.w.Metrics = nil, nil, nil
	err := d.decodeInto(raw, &d.w)
	var typeErr *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &typeErr) {
		if d.bad == "" {
			d.bad = clip(string(raw), Keep) // the caller shortens it after redacting
		}
		return false
	}
	return true
}

// decodeInto decodes one event into v (d.w, or another API's event struct).
func (d *Decoder) decodeInto(raw []byte, v any) error {
	if d.dec == nil {
		d.dec = json.NewDecoder(&d.rd)
		d.consumed = 0
	}
	d.rd.Reset(raw)
	d.consumed += int64(len(raw))
	err := d.dec.Decode(v)
	if !tolerable(err) || d.dec.InputOffset() != d.consumed {
		// A syntax error sticks to a Decoder and trailing bytes would prefix the next chunk:
		// start afresh.
		d.dec = nil
		if err == nil {
			err = errors.New("trailing data after the chunk's JSON")
		}
	}
	return err
}
