package sim

import (
	"net/http"
	"strconv"
	"time"
)

// words is the simulated vocabulary: each " word" is exactly one token in both cl100k_base and
// o200k_base, alone and in sequence, so an offline token estimate of N words is N.
var words = [...]string{
	" the", " quick", " brown", " fox", " jumps", " over", " lazy", " dog", " and", " then", " runs",
	" far", " away", " from", " old", " river", " where", " small", " birds", " sing", " each",
	" morning", " under", " bright", " blue", " sky", " while", " people", " walk", " along",
	" quiet", " road", " to", " find", " good", " food", " in", " busy", " market", " near",
	" green", " hills", " they", " talk", " about", " new", " ideas", " for", " better", " world",
	" with", " clear", " water", " fresh", " air", " warm", " light", " long", " days", " happy",
	" children", " play", " games", " all", " year", " round",
}

// Text returns the text of tokens [first, first+n) of a simulated output: what a client
// reassembles from the reasoning_content (first = 0, n = reasoning tokens) or the content
// (first = reasoning tokens) of a response.
func Text(first, n int) string { return string(appendWords(nil, first, n)) }

func appendWords(b []byte, first, n int) []byte {
	for i := first; i < first+n; i++ {
		b = append(b, words[i%len(words)]...)
	}
	return b
}

// usage is an OpenAI usage object's figures.
type usage struct {
	prompt, cached, completion, reasoning int
	details                               bool // write prompt_tokens_details.cached_tokens
}

// appendUsage appends u as an OpenAI usage object.
func appendUsage(b []byte, u usage) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(u.prompt), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(u.completion), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.prompt+u.completion), 10)
	if u.details {
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(u.cached), 10)
		b = append(b, '}')
	}
	b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(u.reasoning), 10)
	return append(b, `}}`...)
}

// streamWriter writes SSE frames, flushing each one, and keeps the cumulative usage. The JSON
// is appended by hand: this is the benchmarks' hot path.
type streamWriter struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	head   []byte // `data: {"id":...,"object":...,"created":...,"model":...,"choices":`
	buf    []byte
	record *sendRecord // nil unless Options.TrackSends

	usage      usage // cumulative
	continuous bool  // every chunk carries the cumulative usage

	api             string    // the stream's API (apiframes.go)
	id, model       string    // the response id; the model as a JSON string
	phase           FrameKind // the kind of the open output block ("" none): Responses, Anthropic
	block, seq      int       // the open block's index; the next Responses sequence_number
	admitted, first time.Time // admission and the first token (Ollama's durations)
	// The server's own clock (servertiming.go): arrival, the last token, the model load;
	// whether the stream ends with llama.cpp's timings, vLLM's metrics.
	// scheduled: the backend's admission (a batch slot), before which the request queued.
	arrival, last, scheduled time.Time
	load                     time.Duration
	timings, metrics         bool
}

func (sw *streamWriter) role() error {
	b := append(sw.chunkStart(), `"role":"assistant"`...)
	return sw.send(sw.chunkEnd(b, ""), FrameRole, 0)
}

func (sw *streamWriter) tokens(kind FrameKind, first, n int) error {
	sw.usage.completion += n
	if now := time.Now(); sw.first.IsZero() {
		sw.first, sw.last = now, now
	} else {
		sw.last = now
	}
	field := `"content":"`
	if kind == FrameReasoning && sw.api != APICompletions { // legacy completions: all text is answer
		sw.usage.reasoning += n
		field = `"reasoning_content":"`
	}
	if sw.api != APIChat {
		return sw.apiTokens(kind, first, n)
	}
	b := append(sw.chunkStart(), field...)
	b = appendWords(b, first, n)
	b = append(b, '"')
	return sw.send(sw.chunkEnd(b, ""), kind, n)
}

// finish sends the finish chunk; last: the stream's last chunk, which carries the clock.
func (sw *streamWriter) finish(reason string, last bool) error {
	b := sw.chunkEnd(sw.chunkStart(), reason)
	if last {
		b = sw.withClock(b)
	}
	return sw.send(b, FrameFinish, 0)
}

func (sw *streamWriter) sendUsage() error {
	b := append(sw.buf[:0], sw.head...)
	b = append(b, `[],"usage":`...)
	b = appendUsage(b, sw.usage)
	return sw.send(sw.withClock(append(b, "}\n\n"...)), FrameUsage, 0)
}

func (sw *streamWriter) fail() error { return sw.apiFail() }

// end sends the stream's last frames: chat's finish chunk, usage chunk and [DONE], or the
// API's own ending.
func (sw *streamWriter) end(finish string, includeUsage bool) error {
	if sw.api != APIChat {
		return sw.apiEnd(finish, includeUsage)
	}
	if err := sw.finish(finish, !includeUsage); err != nil {
		return err
	}
	if includeUsage {
		if err := sw.sendUsage(); err != nil {
			return err
		}
	}
	return sw.done()
}

func (sw *streamWriter) done() error { return sw.write([]byte("data: [DONE]\n\n")) }

// comment sends a keep-alive: a comment, Anthropic's ping event; nothing on Ollama's NDJSON.
func (sw *streamWriter) comment() error {
	switch sw.api {
	case APIAnthropic:
		return sw.write([]byte("event: ping\ndata: {\"type\": \"ping\"}\n\n"))
	case APIOllama:
		return nil
	}
	return sw.write([]byte(": keep-alive\n\n"))
}

// chunkStart begins a chat.completion.chunk frame, up to the inside of "delta".
func (sw *streamWriter) chunkStart() []byte {
	b := append(sw.buf[:0], sw.head...)
	return append(b, `[{"index":0,"delta":{`...)
}

// chunkEnd closes the delta; finish "" means finish_reason null.
func (sw *streamWriter) chunkEnd(b []byte, finish string) []byte {
	b = append(b, `},"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendQuote(b, finish)
	}
	b = append(b, "}]"...)
	if sw.continuous {
		b = append(b, `,"usage":`...)
		b = appendUsage(b, sw.usage)
	}
	return append(b, "}\n\n"...)
}

// send writes and flushes one data frame, then records when it left.
func (sw *streamWriter) send(frame []byte, kind FrameKind, tokens int) error {
	sw.buf = frame[:0] // keep the grown buffer
	if err := sw.write(frame); err != nil {
		return err
	}
	if sw.record != nil {
		sw.record.add(Send{At: time.Now(), Kind: kind, Tokens: tokens})
	}
	return nil
}

func (sw *streamWriter) write(b []byte) error {
	if _, err := sw.w.Write(b); err != nil {
		return err
	}
	return sw.rc.Flush()
}
