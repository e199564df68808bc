package probe

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"tokscope/sample"

	"tokscope/config"
)

// One fuzz target per decoder of the APIs beside chat, seeded with the real captures: a whole
// response body goes through the line reader and the decoder, as SendLive reads it. It must
// never panic, and:
//   - every event that counts is recorded, in order, with non-negative byte counts; each
//     event's content and reasoning bytes equal what a fresh decoder finds in it alone;
//   - N, its source and the reasoning share are consistent, the instants ordered;
//   - an answer stops at the overrun bound, a line at maxSSELine;
//   - the message a failure would show is one short line of valid UTF-8.
func FuzzDecodeCompletions(f *testing.F) {
	fuzzAPI(f, config.APICompletions, "llamacpp-b10470/completions.sse", "ollama-0.17.4/v1-completions.sse")
}

func FuzzDecodeResponses(f *testing.F) {
	fuzzAPI(f, config.APIResponses, "llamacpp-b10470/responses.sse", "ollama-0.17.4/v1-responses.sse")
}

func FuzzDecodeAnthropic(f *testing.F) {
	fuzzAPI(f, config.APIAnthropic, "llamacpp-b10470/anthropic-messages.sse", "ollama-0.17.4/v1-messages.sse")
}

func FuzzDecodeOllama(f *testing.F) {
	fuzzAPI(f, config.APIOllama, "ollama-0.17.4/api-chat.ndjson", "ollama-0.17.4/api-generate.ndjson")
}

func fuzzAPI(f *testing.F, api string, captures ...string) {
	for _, c := range captures {
		b, err := os.ReadFile(filepath.Join("testdata", "captures", c))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"))
	f.Add([]byte(`{"error":"model 'nope' not found"}` + "\n"))
	ep := testEP()
	ep.API = api
	wire := apiOf(ep)
	f.Fuzz(func(t *testing.T, body []byte) {
		const maxTokens = 8 // small, so that the overrun rule is reached too
		s := newSample(ep)
		var d decoder
		d.init(&s, func(dl sample.Delta) {
			if dl.Text == "" {
				t.Fatal("empty delta")
			}
		}, maxTokens)
		d.api, d.t0 = wire, time.Now()
		stream := newLineStream(io.NopCloser(bytes.NewReader(body)), wire.ndjson())
		var events [][]byte
		for i := 1; ; i++ {
			raw, err := stream.recv()
			if err != nil {
				break
			}
			if len(raw) > maxSSELine {
				t.Fatalf("an event of %d bytes passed the line bound", len(raw))
			}
			stop := d.add(time.Duration(i)*time.Millisecond, raw)
			if !d.skip {
				events = append(events, bytes.Clone(raw))
			}
			if stop {
				break
			}
		}
		d.finalize()
		checkFuzzSample(t, &d, &s, wire, events, maxTokens)
	})
}

// checkFuzzSample holds a decoded stream to the invariants of every API (FuzzChunkDecode
// and the FuzzDecode targets): chunks in order with non-negative counts, each one's bytes as a fresh
// decoder finds them alone, N and the instants consistent, the overrun bound kept, and every
// message a failure would show one short line of valid UTF-8.
func checkFuzzSample(t *testing.T, d *decoder, s *sample.Sample, wire wireAPI, events [][]byte, maxTokens int) {
	if len(s.Chunks) != len(events) {
		t.Fatalf("%d chunks recorded for %d events", len(s.Chunks), len(events))
	}
	tokenChunks := 0
	for i, c := range s.Chunks {
		if i > 0 && c.At <= s.Chunks[i-1].At || c.Content < 0 || c.Reasoning < 0 || c.Tokens < 0 {
			t.Fatalf("chunk %d: %+v", i, c)
		}
		if c.TokenBearing() {
			tokenChunks++
		}
		var fresh decoder
		fs := newSample(testEP())
		fresh.init(&fs, nil, 0)
		fresh.api = wire
		fresh.add(time.Millisecond, events[i])
		if fc := fs.Chunks[0]; fc.Content != c.Content || fc.Reasoning != c.Reasoning {
			t.Fatalf("event %d %q: %d/%d content/reasoning bytes in the stream, %d/%d alone",
				i, events[i], c.Content, c.Reasoning, fc.Content, fc.Reasoning)
		}
	}
	if (tokenChunks > 0) != (s.FirstToken >= 0) || (tokenChunks > 0) != (s.LastToken >= 0) {
		t.Fatalf("%d token chunks, first %v last %v", tokenChunks, s.FirstToken, s.LastToken)
	}
	if s.FirstToken > s.LastToken || (s.FirstAnswer >= 0 && s.FirstAnswer < s.FirstToken) || s.FirstEvent > s.FirstToken && s.FirstToken >= 0 {
		t.Fatalf("instants event %v token %v answer %v last %v", s.FirstEvent, s.FirstToken, s.FirstAnswer, s.LastToken)
	}
	if s.Tokens < 0 || s.ReasoningTokens < 0 || s.ReasoningTokens > s.Tokens || s.CachedTokens < -1 {
		t.Fatalf("N %d reasoning %d cached %d", s.Tokens, s.ReasoningTokens, s.CachedTokens)
	}
	if s.Source == sample.SourceChunks && s.Tokens != tokenChunks {
		t.Fatalf("chunk-count N %d for %d token chunks", s.Tokens, tokenChunks)
	}
	if d.answerChunks > overrunChunks(maxTokens)+1 {
		t.Fatalf("read %d answer chunks past the overrun bound %d", d.answerChunks, overrunChunks(maxTokens))
	}
	for _, msg := range []string{d.streamErr, d.badChunk, s.ResponseID} {
		m := readable(redactFor(msg, testEP()))
		if !utf8.ValidString(m) || utf8.RuneCountInString(m) > maxMessage || strings.ContainsAny(m, "\n\r\x00\x1b") {
			t.Fatalf("message %q", m)
		}
	}
}
