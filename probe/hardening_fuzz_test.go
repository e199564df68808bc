package probe

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzChunkDecode feeds arbitrary chunk payloads (the bytes after "data: ", one per line of
// the input) to the stream decoder, as Do does. It must never panic, and:
//   - every chunk before a stop is recorded, in order, with non-negative byte counts;
//   - one json.Decoder serves the whole stream: each chunk's content and reasoning bytes equal
//     what a fresh decoder finds in that chunk alone (no state leaks from chunk to chunk);
//   - N, its source and the reasoning share are consistent, the instants ordered;
//   - the message a failure would show is one short line of valid UTF-8.
//
// Seeds: testdata/fuzz/FuzzChunkDecode (real server chunks, errors, garbage).
func FuzzChunkDecode(f *testing.F) {
	f.Add([]byte(`{"id":"a","choices":[{"delta":{"role":"assistant","content":""}}]}` + "\n" +
		`{"choices":[{"delta":{"content":" hi"}}]}` + "\n" +
		`{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`))
	f.Fuzz(func(t *testing.T, input []byte) {
		raws := bytes.Split(input, []byte("\n"))
		maxTokens := 8 // small, so that the overrun rule is reached too
		s := newSample(testEP())
		var d decoder
		d.init(&s, func(dl Delta) {
			if dl.Text == "" {
				t.Fatal("empty delta")
			}
		}, maxTokens)
		d.t0 = time.Now()
		added := 0
		for i, raw := range raws {
			added++
			if d.add(time.Duration(i+1)*time.Millisecond, raw) {
				break
			}
		}
		d.finalize()

		if len(s.Chunks) != added {
			t.Fatalf("%d chunks recorded for %d added", len(s.Chunks), added)
		}
		tokenChunks := 0
		for i, c := range s.Chunks {
			if c.At != time.Duration(i+1)*time.Millisecond || c.Content < 0 || c.Reasoning < 0 || c.Tokens < 0 {
				t.Fatalf("chunk %d: %+v", i, c)
			}
			if c.TokenBearing() {
				tokenChunks++
			}
			var fresh decoder
			fs := newSample(testEP())
			fresh.init(&fs, nil, 0)
			fresh.add(time.Millisecond, raws[i])
			if fc := fs.Chunks[0]; fc.Content != c.Content || fc.Reasoning != c.Reasoning {
				t.Fatalf("chunk %d %q: %d/%d content/reasoning bytes in the stream, %d/%d alone",
					i, raws[i], c.Content, c.Reasoning, fc.Content, fc.Reasoning)
			}
		}
		if (tokenChunks > 0) != (s.FirstToken >= 0) || (tokenChunks > 0) != (s.LastToken >= 0) {
			t.Fatalf("%d token chunks, first %v last %v", tokenChunks, s.FirstToken, s.LastToken)
		}
		if s.FirstToken > s.LastToken || (s.FirstAnswer >= 0 && s.FirstAnswer < s.FirstToken) || s.FirstEvent > s.FirstToken && s.FirstToken >= 0 {
			t.Fatalf("instants event %v token %v answer %v last %v", s.FirstEvent, s.FirstToken, s.FirstAnswer, s.LastToken)
		}
		if s.Tokens < 0 || s.ReasoningTokens < 0 || s.ReasoningTokens > s.Tokens {
			t.Fatalf("N %d reasoning %d", s.Tokens, s.ReasoningTokens)
		}
		switch s.Source {
		case SourceUsage, SourceEstimate:
		case SourceChunks:
			if s.Tokens != tokenChunks {
				t.Fatalf("chunk-count N %d for %d token chunks", s.Tokens, tokenChunks)
			}
		default:
			t.Fatalf("source %q", s.Source)
		}
		if d.answerChunks > overrunChunks(maxTokens)+1 {
			t.Fatalf("read %d answer chunks past the overrun bound %d", d.answerChunks, overrunChunks(maxTokens))
		}
		for _, msg := range []string{d.streamErr, d.badChunk} {
			m := readable(redactFor(msg, testEP()))
			if !utf8.ValidString(m) || utf8.RuneCountInString(m) > maxMessage || strings.ContainsAny(m, "\n\r\x00\x1b") {
				t.Fatalf("message %q", m)
			}
		}
	})
}
