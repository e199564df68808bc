package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"tokscope/sample"

	"tokscope/workload"
)

// wireChunk is a tolerant view of one chat.completion.chunk: it reads the fields every
// OpenAI-compatible server agrees on plus the ones go-openai drops (delta.reasoning, the
// chunk-level error of OpenRouter). A field of an unexpected type is skipped, not fatal.
type wireChunk struct {
	ID      firstID      `json:"id"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	Error   *wireError   `json:"error"`
	// The server's own clock (servertiming.go): llama.cpp's on the last chunk, vLLM's when asked.
	Timings *wireTimings `json:"timings"`
	Metrics *wireMetrics `json:"metrics"`
}

type wireChoice struct {
	Delta        wireDelta `json:"delta"`
	Text         string    `json:"text"` // legacy completions: answer text
	FinishReason string    `json:"finish_reason"`
}

type wireDelta struct {
	Content          string `json:"content"`
	ReasoningContent string `json:"reasoning_content"` // DeepSeek, vLLM < 0.10, SGLang
	Reasoning        string `json:"reasoning"`         // Ollama, OpenRouter, newer vLLM
	Refusal          string `json:"refusal"`
}

type wireUsage struct {
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

// wireError is an error object ({"message", "code", "type"}) or a bare string.
type wireError struct {
	Message, Code, Type string
}

func (e *wireError) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &e.Message)
	}
	var o struct {
		Message json.RawMessage `json:"message"`
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		e.Message = clip(string(b), tailKeep) // readable() shortens it after redact
		return nil
	}
	e.Message, e.Code, e.Type = rawText(o.Message), rawText(o.Code), o.Type
	if e.Message == "" {
		e.Message = clip(string(b), tailKeep) // readable() shortens it after redact
	}
	return nil
}

// rawText renders a JSON string, number or array of strings as plain text.
func rawText(b json.RawMessage) string {
	if len(b) == 0 || string(b) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		return s
	}
	var ss []string
	if json.Unmarshal(b, &ss) == nil {
		return strings.Join(ss, ", ")
	}
	return string(b)
}

func (e *wireError) text() string {
	msg := e.Message
	if msg == "" {
		msg = "error"
	}
	if e.Code != "" {
		msg += " (code " + e.Code + ")"
	} else if e.Type != "" {
		msg += " (type " + e.Type + ")"
	}
	return msg
}

// decoder turns raw chunks into the Sample's chunks, instants and token counts.
type decoder struct {
	s       *sample.Sample
	onDelta func(sample.Delta)
	t0      time.Time

	api   wireAPI
	w     wireChunk
	usage wireUsage // w.Usage points here before each decode: no allocation per chunk
	a     apiState  // the other APIs' events (apidecode.go)
	ended bool      // the API's last event came (response.completed, message_stop, done)
	skip  bool      // the last raw event does not count (Anthropic's ping)

	// One json.Decoder for the whole stream: unlike json.Unmarshal it keeps its scanner and
	// error-context stacks, which were most of the per-chunk allocations.
	rd       bytes.Reader
	dec      *json.Decoder
	consumed int64 // bytes handed to dec so far

	content, reasoning strings.Builder
	tokenChunks        int
	reasoningChunks    int
	usageSeen          bool
	last               wireUsage // the latest usage the server sent
	cumulative         int       // completion_tokens at the previous usage
	usageOnTokenChunks int       // > 1 means per-chunk (continuous) usage

	finishReason string
	streamErr    string
	badChunk     string

	answerChunks int // chunks with content: bounded by overrunChunks(max_tokens)
	maxTokens    int

	// Live progress (progress.go's rules): nil onProgress sends none.
	onProgress func(*sample.Progress)
	prog       sample.Progress // reused: the callback gets a pointer valid during the call
	lastSent   time.Duration   // arrival offset of the last Progress sent; Absent before
	perChunk   float64         // the endpoint's learned tokens per chunk; 0 until one finished
	estTokens  int             // tokenizer count of content[:estC] and reasoning[:estR]
	estC, estR int
	estChunks  int // token chunks counted in estTokens
}

// overrunChunks is how many answer chunks a stream may carry before reading stops: a server
// that ignores max_tokens (or streams garbage forever) would otherwise hold the request until
// its timeout and grow the Sample without bound. 4× leaves room for servers that split a
// token over chunks; reasoning is not counted, because some providers exclude it from
// max_tokens. 0 (no bound) without a max_tokens.
func overrunChunks(maxTokens int) int {
	if maxTokens <= 0 {
		return 0
	}
	return 4*maxTokens + 16
}

// init prepares d for one stream; maxTokens sizes the chunk slice (one chunk per token,
// plus role, finish and usage chunks) so that it rarely grows.
func (d *decoder) init(s *sample.Sample, onDelta func(sample.Delta), maxTokens int) {
	d.s, d.onDelta = s, onDelta
	d.maxTokens = maxTokens
	d.lastSent = sample.Absent
	s.Chunks = make([]sample.Chunk, 0, min(max(maxTokens+4, 16), 4096))
}

// add accounts one raw data chunk that arrived at offset at; stop reports that the stream
// carried an error and reading further is pointless.
func (d *decoder) add(at time.Duration, raw []byte) (stop bool) {
	s := d.s
	ok, skip := d.decodeEvent(raw)
	if d.skip = skip; skip {
		return false
	}
	if s.FirstEvent < 0 {
		s.FirstEvent = at
	}
	if !ok {
		s.Chunks = append(s.Chunks, sample.Chunk{At: at})
		return false
	}
	if s.ResponseID == "" {
		s.ResponseID = d.w.ID.v
	}
	d.takeServerTiming()
	c := d.measure(at)
	d.countUsage(&c)
	s.Chunks = append(s.Chunks, c)
	if c.TokenBearing() {
		d.emitText(at)
		d.progress(at)
	}
	if c.Content > 0 {
		d.answerChunks++
	}
	return d.mustStop() || d.ended
}

// decodeChunk decodes raw into d.w, resetting what the previous chunk left there. It is false
// when the chunk is not JSON at all (the first such chunk is kept for the error message); a
// field of the wrong type still yields the rest of the chunk.
func (d *decoder) decodeChunk(raw []byte) bool {
	clear(d.w.Choices)
	d.w.Choices = d.w.Choices[:0]
	d.usage = wireUsage{CompletionTokens: -1} // stays -1 when the chunk has no usage
	d.usage.PromptDetails.CachedTokens = -1
	d.w.Usage = &d.usage
	d.w.Error, d.w.Timings, d.w.Metrics = nil, nil, nil
	err := d.decodeInto(raw, &d.w)
	var typeErr *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &typeErr) {
		if d.badChunk == "" {
			d.badChunk = clip(string(raw), tailKeep) // readable() shortens it after redact
		}
		return false
	}
	return true
}

// measure sizes the decoded chunk's text and updates the instants it marks (first token,
// last token, first answer) and the finish reason.
func (d *decoder) measure(at time.Duration) sample.Chunk {
	s := d.s
	c := sample.Chunk{At: at}
	for i := range d.w.Choices {
		ch := &d.w.Choices[i]
		c.Content += len(ch.Delta.Content) + len(ch.Delta.Refusal) + len(ch.Text)
		c.Reasoning += len(reasoningText(&ch.Delta))
		if ch.FinishReason != "" {
			d.finishReason = ch.FinishReason
		}
	}
	if c.TokenBearing() {
		d.tokenChunks++
		if s.FirstToken < 0 {
			s.FirstToken = at
		}
		s.LastToken = at
	}
	if c.Reasoning > 0 {
		d.reasoningChunks++
	}
	if c.Content > 0 && s.FirstAnswer < 0 {
		s.FirstAnswer = at
	}
	return c
}

// countUsage takes the chunk's usage, if any: the latest totals, and the chunk's own token
// count when the server reports cumulative usage on token-bearing chunks.
func (d *decoder) countUsage(c *sample.Chunk) {
	if d.w.Usage == nil || d.usage.CompletionTokens < 0 {
		return
	}
	d.usageSeen = true
	d.last = d.usage
	if c.TokenBearing() {
		d.usageOnTokenChunks++
	}
	if d.usageOnTokenChunks > 0 {
		c.Tokens = max(0, d.usage.CompletionTokens-d.cumulative)
	}
	d.cumulative = d.usage.CompletionTokens
}

// emitText keeps the chunk's text (for the estimate) and sends it as Delta events; the
// chunk's token count goes with its first piece once per-chunk usage is established.
func (d *decoder) emitText(at time.Duration) {
	tokens := 0
	if d.usageOnTokenChunks > 1 {
		tokens = d.s.Chunks[len(d.s.Chunks)-1].Tokens
	}
	for i := range d.w.Choices {
		dl := &d.w.Choices[i].Delta
		if r := reasoningText(dl); r != "" {
			d.reasoning.WriteString(r)
			d.emit(at, r, true, tokens)
			tokens = 0
		}
		for _, t := range [3]string{dl.Content, dl.Refusal, d.w.Choices[i].Text} {
			if t != "" {
				d.content.WriteString(t)
				d.emit(at, t, false, tokens)
				tokens = 0
			}
		}
	}
}

// mustStop says whether reading must end after this chunk: an error inside the stream, or a
// server that ignores max_tokens (then streamErr says why).
func (d *decoder) mustStop() bool {
	switch {
	case d.w.Error != nil:
		d.streamErr = "error inside the stream: " + d.w.Error.text()
		return true
	case d.finishReason == "error":
		d.streamErr = "error inside the stream: finish_reason \"error\""
		return true
	case d.maxTokens > 0 && d.answerChunks > overrunChunks(d.maxTokens):
		if d.finishReason == "" {
			d.streamErr = "no finish_reason after " + strconv.Itoa(d.answerChunks) + " answer chunks with max_tokens " +
				strconv.Itoa(d.maxTokens) + ": the server ignores max_tokens; stopped reading"
		}
		return true
	}
	return false
}

// decodeInto decodes one chunk into v (d.w, or another API's event struct).
func (d *decoder) decodeInto(raw []byte, v any) error {
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

// reasoningText prefers reasoning_content: servers in transition send both with the same text.
func reasoningText(dl *wireDelta) string {
	if dl.ReasoningContent != "" {
		return dl.ReasoningContent
	}
	return dl.Reasoning
}

func (d *decoder) emit(at time.Duration, text string, reasoning bool, tokens int) {
	if d.onDelta != nil {
		d.onDelta(sample.Delta{At: d.t0.Add(at), Text: text, Reasoning: reasoning, Tokens: tokens})
	}
}

// finalize decides N and its source (docs/metrics.md order: usage, estimate, chunks) and the
// reasoning share.
func (d *decoder) finalize() {
	s := d.s
	if d.usageOnTokenChunks < 2 {
		// A single usage on a token chunk is the final total, not a per-chunk count.
		for i := range s.Chunks {
			s.Chunks[i].Tokens = 0
		}
	}
	switch {
	case d.usageSeen:
		s.PromptTokens = d.last.PromptTokens
		s.CachedTokens = max(d.last.PromptDetails.CachedTokens, -1)
	case d.a.promptSeen: // Anthropic's message_start, without the message_delta
		s.PromptTokens, s.CachedTokens = d.a.prompt, d.a.cached
	}
	// Tokenizing costs ~1 µs per token: only when the server's usage does not settle it.
	var estC, estR int
	estOK, estimated := false, false
	estimate := func() bool {
		if !estimated {
			estimated = true
			var okC, okR bool
			estC, okC = estimateTokens(d.content.String())
			estR, okR = estimateTokens(d.reasoning.String())
			estOK = okC && okR && estC+estR > 0
		}
		return estOK
	}
	switch {
	case d.usageSeen && (d.last.CompletionTokens > 0 || d.tokenChunks == 0):
		s.Tokens, s.Source = d.last.CompletionTokens, sample.SourceUsage
	case d.tokenChunks > 0 && estimate():
		s.Tokens, s.Source = estC+estR, sample.SourceEstimate
	default:
		s.Tokens, s.Source = d.tokenChunks, sample.SourceChunks
	}

	switch {
	case d.usageSeen && d.last.Details.ReasoningTokens > 0:
		s.ReasoningTokens = d.last.Details.ReasoningTokens
	case d.reasoningChunks == 0:
		s.ReasoningTokens = 0
	case s.Source == sample.SourceEstimate:
		s.ReasoningTokens = estR
	case s.Source == sample.SourceUsage && estimate():
		// The server gave only the total: split it in the proportion of the estimates.
		s.ReasoningTokens = int(math.Round(float64(s.Tokens) * float64(estR) / float64(estC+estR)))
	case s.Source == sample.SourceUsage:
		s.ReasoningTokens = int(math.Round(float64(s.Tokens) * float64(d.reasoningChunks) / float64(d.tokenChunks)))
	default:
		s.ReasoningTokens = d.reasoningChunks
	}
	s.ReasoningTokens = min(s.ReasoningTokens, s.Tokens)
}

// estimateTokens counts text's tokens offline; ok=false when no tokenizer is available.
// A variable so that tests can take the estimate away and see the chunk-count fallback.
var estimateTokens = func(text string) (int, bool) {
	if text == "" {
		return 0, true
	}
	n, err := workload.CountTokens(text)
	return n, err == nil
}
