package probe

import (
	"bytes"
	"testing"
	"time"

	"tokscope/sample"
)

// FuzzChunkDecode feeds arbitrary chunk payloads (the bytes after "data: ", one per line of
// the input) to the stream decoder, as SendLive does. It must never panic, and:
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
		d.init(&s, func(dl sample.Delta) {
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

		checkFuzzSample(t, &d, &s, apiChat, raws[:added], maxTokens) // the invariants of every API
		for i, c := range s.Chunks {
			if c.At != time.Duration(i+1)*time.Millisecond {
				t.Fatalf("chunk %d at %v, added at %v", i, c.At, time.Duration(i+1)*time.Millisecond)
			}
		}
		switch s.Source {
		case sample.SourceUsage, sample.SourceEstimate, sample.SourceChunks:
		default:
			t.Fatalf("source %q", s.Source)
		}
	})
}
