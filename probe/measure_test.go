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

	"tokscope/apiwire"
	"tokscope/sample"
)

// TestMeasureInvariants holds the measurement of every API's stream to the invariants apiwire's
// fuzz targets hold its decoding to, one level up: each real capture, whole and cut at every
// event, read by the line reader and measured by the decoder as SendLive does: chunks in order
// with non-negative counts (each one's bytes as a fresh decoder measures that event alone), N,
// its source and the reasoning share consistent, the instants ordered, the overrun bound kept
// (TestOverrunStopsReading reaches it), and every message a failure would show one short line
// of valid UTF-8.
func TestMeasureInvariants(t *testing.T) {
	t.Parallel()
	for _, c := range captureCases() {
		body, err := os.ReadFile(filepath.Join(captureDir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		ep := testEP()
		ep.API = c.api
		lines := bytes.SplitAfter(body, []byte("\n"))
		for cut := 1; cut <= len(lines); cut++ {
			measureChecked(t, c.file, apiwire.Of(ep), bytes.Join(lines[:cut], nil))
		}
	}
}

// measureChecked measures one body and checks it (checkMeasured).
func measureChecked(t *testing.T, name string, api apiwire.API, body []byte) {
	t.Helper()
	const maxTokens = 3
	s := newSample(testEP())
	var d decoder
	d.init(&s, func(dl sample.Delta) {
		if dl.Text == "" {
			t.Fatalf("%s: empty delta", name)
		}
	}, maxTokens)
	d.wire.API, d.t0 = api, time.Now()
	stream := apiwire.NewLineStream(io.NopCloser(bytes.NewReader(body)), api.NDJSON())
	var events [][]byte
	for i := 1; ; i++ {
		raw, err := stream.Recv()
		if err != nil {
			break
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
	checkMeasured(t, name, &d, &s, api, events, maxTokens)
}

func checkMeasured(t *testing.T, name string, d *decoder, s *sample.Sample, api apiwire.API, events [][]byte, maxTokens int) {
	t.Helper()
	if len(s.Chunks) != len(events) {
		t.Fatalf("%s: %d chunks recorded for %d events", name, len(s.Chunks), len(events))
	}
	tokenChunks := 0
	for i, c := range s.Chunks {
		if i > 0 && c.At <= s.Chunks[i-1].At || c.Content < 0 || c.Reasoning < 0 || c.Tokens < 0 {
			t.Fatalf("%s: chunk %d: %+v", name, i, c)
		}
		if c.TokenBearing() {
			tokenChunks++
		}
		var fresh decoder
		fs := newSample(testEP())
		fresh.init(&fs, nil, 0)
		fresh.wire.API = api
		fresh.add(time.Millisecond, events[i])
		if fc := fs.Chunks[0]; fc.Content != c.Content || fc.Reasoning != c.Reasoning {
			t.Fatalf("%s: event %d %q: %d/%d content/reasoning bytes in the stream, %d/%d alone",
				name, i, events[i], c.Content, c.Reasoning, fc.Content, fc.Reasoning)
		}
	}
	if (tokenChunks > 0) != (s.FirstToken >= 0) || (tokenChunks > 0) != (s.LastToken >= 0) {
		t.Fatalf("%s: %d token chunks, first %v last %v", name, tokenChunks, s.FirstToken, s.LastToken)
	}
	if s.FirstToken > s.LastToken || (s.FirstAnswer >= 0 && s.FirstAnswer < s.FirstToken) || s.FirstEvent > s.FirstToken && s.FirstToken >= 0 {
		t.Fatalf("%s: instants event %v token %v answer %v last %v", name, s.FirstEvent, s.FirstToken, s.FirstAnswer, s.LastToken)
	}
	if s.Tokens < 0 || s.ReasoningTokens < 0 || s.ReasoningTokens > s.Tokens || s.CachedTokens < -1 {
		t.Fatalf("%s: N %d reasoning %d cached %d", name, s.Tokens, s.ReasoningTokens, s.CachedTokens)
	}
	if s.Source == sample.SourceChunks && s.Tokens != tokenChunks {
		t.Fatalf("%s: chunk-count N %d for %d token chunks", name, s.Tokens, tokenChunks)
	}
	if d.answerChunks > overrunChunks(maxTokens)+1 {
		t.Fatalf("%s: read %d answer chunks past the overrun bound %d", name, d.answerChunks, overrunChunks(maxTokens))
	}
	for _, msg := range []string{d.streamErr, d.wire.BadChunk(), s.ResponseID} {
		m := readable(redactFor(msg, testEP()))
		if !utf8.ValidString(m) || utf8.RuneCountInString(m) > maxMessage || strings.ContainsAny(m, "\n\r\x00\x1b") {
			t.Fatalf("%s: message %q", name, m)
		}
	}
}
