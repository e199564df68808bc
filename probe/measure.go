package probe

import (
	"math"
	"strconv"
	"strings"
	"time"

	"tokscope/apiwire"
	"tokscope/sample"

	"tokscope/workload"
)

// decoder measures one stream: the events apiwire decodes become the Sample's chunks, instants
// and token counts, its Delta and Progress events, and its N.
type decoder struct {
	s       *sample.Sample
	onDelta func(sample.Delta)
	t0      time.Time

	wire apiwire.Decoder // the API's events in chat's terms (set wire.API for another API)
	skip bool            // the last raw event does not count (Anthropic's ping)

	content, reasoning strings.Builder
	tokenChunks        int
	reasoningChunks    int
	usageSeen          bool
	last               apiwire.Usage // the latest usage the server sent
	cumulative         int           // completion_tokens at the previous usage
	usageOnTokenChunks int           // > 1 means per-chunk (continuous) usage

	finishReason string
	streamErr    string

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

	count tokenCounting // the client's offline token count and Progress interval (progress.go)
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
	d.count = tokenCounting{}.withDefaults()
	s.Chunks = make([]sample.Chunk, 0, min(max(maxTokens+4, 16), 4096))
}

// add accounts one raw data chunk that arrived at offset at; stop reports that the stream
// carried an error and reading further is pointless.
func (d *decoder) add(at time.Duration, raw []byte) (stop bool) {
	s := d.s
	ok, skip := d.wire.Decode(raw)
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
		s.ResponseID = d.wire.ID()
	}
	if t := d.wire.Server(); t != nil {
		s.Server = t // the last one wins: llama.cpp and vLLM send it once, on the last chunk
	}
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
	return d.mustStop() || d.wire.Ended()
}

// measure sizes the decoded chunk's text and updates the instants it marks (first token,
// last token, first answer) and the finish reason.
func (d *decoder) measure(at time.Duration) sample.Chunk {
	s := d.s
	c := sample.Chunk{At: at}
	choices := d.wire.Choices()
	for i := range choices {
		ch := &choices[i]
		c.Content += len(ch.Delta.Content) + len(ch.Delta.Refusal) + len(ch.Text)
		c.Reasoning += len(ch.Delta.ReasoningText())
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
	u := d.wire.Usage()
	if u == nil {
		return
	}
	d.usageSeen = true
	d.last = *u
	if c.TokenBearing() {
		d.usageOnTokenChunks++
	}
	if d.usageOnTokenChunks > 0 {
		c.Tokens = max(0, u.CompletionTokens-d.cumulative)
	}
	d.cumulative = u.CompletionTokens
}

// emitText keeps the chunk's text (for the estimate) and sends it as Delta events; the
// chunk's token count goes with its first piece once per-chunk usage is established.
func (d *decoder) emitText(at time.Duration) {
	tokens := 0
	if d.usageOnTokenChunks > 1 {
		tokens = d.s.Chunks[len(d.s.Chunks)-1].Tokens
	}
	choices := d.wire.Choices()
	for i := range choices {
		dl := &choices[i].Delta
		if r := dl.ReasoningText(); r != "" {
			d.reasoning.WriteString(r)
			d.emit(at, r, true, tokens)
			tokens = 0
		}
		for _, t := range [3]string{dl.Content, dl.Refusal, choices[i].Text} {
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
	switch err := d.wire.Err(); {
	case err != nil:
		d.streamErr = "error inside the stream: " + err.Text()
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
	default:
		if prompt, cached, ok := d.wire.Prompt(); ok { // Anthropic's message_start, without the message_delta
			s.PromptTokens, s.CachedTokens = prompt, cached
		}
	}
	// Tokenizing costs ~1 µs per token: only when the server's usage does not settle it.
	var estC, estR int
	estOK, estimated := false, false
	estimate := func() bool {
		if !estimated {
			estimated = true
			var okC, okR bool
			estC, okC = d.count.estimate(d.content.String())
			estR, okR = d.count.estimate(d.reasoning.String())
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

// countTokens is the offline token count of the product's clients (workload.CountTokens); ok
// is false when no tokenizer is available.
func countTokens(text string) (int, bool) {
	if text == "" {
		return 0, true
	}
	n, err := workload.CountTokens(text)
	return n, err == nil
}
