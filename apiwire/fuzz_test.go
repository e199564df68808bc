package apiwire

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"tokscope/config"
	"tokscope/sample"
)

// One fuzz target per API, seeded with the real captures (testdata/captures) and, for chat,
// with the corpus in testdata/fuzz/FuzzChunkDecode (vLLM, continuous usage, reasoning, errors,
// garbage). A whole response body goes through the line reader and the decoder, as probe reads
// it. It must never panic, and (checkDecoded):
//   - no event passes the line bound;
//   - one json.Decoder serves the whole stream, yet each event decodes to what a fresh Decoder
//     finds in it alone: the same choices (answer and reasoning text, finish reason) and error;
//   - a usage carries a non-negative completion count, every figure of a server's clock is a
//     non-negative number or absent (-1);
//   - an event that is not JSON leaves a message (BadChunk) of at most Keep bytes.
//
// probe's measurement of the same streams (N, the instants, the overrun bound) is checked in
// probe (TestMeasureInvariants).

// FuzzChunkDecode: chat chunk payloads (the bytes after "data: "), one per line of the input,
// as go-openai hands them to the decoder.
func FuzzChunkDecode(f *testing.F) {
	f.Add([]byte(`{"id":"a","choices":[{"delta":{"role":"assistant","content":""}}]}` + "\n" +
		`{"choices":[{"delta":{"content":" hi"}}]}` + "\n" +
		`{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`))
	f.Fuzz(func(t *testing.T, input []byte) {
		var d Decoder
		for _, raw := range bytes.Split(input, []byte("\n")) {
			checkDecoded(t, &d, Chat, raw)
		}
	})
}

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
	a := Of(config.Endpoint{API: api})
	f.Fuzz(func(t *testing.T, body []byte) {
		d := Decoder{API: a}
		stream := NewLineStream(io.NopCloser(bytes.NewReader(body)), a.NDJSON())
		defer stream.Close()
		for {
			raw, err := stream.Recv()
			if err != nil {
				return
			}
			if len(raw) > MaxLine {
				t.Fatalf("an event of %d bytes passed the line bound", len(raw))
			}
			checkDecoded(t, &d, a, raw)
		}
	})
}

// checkDecoded decodes raw with d, the stream's decoder, and holds the result to the
// invariants above.
func checkDecoded(t *testing.T, d *Decoder, a API, raw []byte) {
	t.Helper()
	ok, skip := d.Decode(raw)
	fresh := Decoder{API: a}
	fok, fskip := fresh.Decode(bytes.Clone(raw))
	if ok != fok || skip != fskip {
		t.Fatalf("event %q: ok %v skip %v in the stream, %v %v alone", raw, ok, skip, fok, fskip)
	}
	if bad := d.BadChunk(); len(bad) > Keep+len("…") {
		t.Fatalf("kept %d bytes of an undecodable event", len(bad))
	}
	if !ok {
		if bad := d.BadChunk(); bad == "" && len(raw) > 0 {
			t.Fatalf("event %q: not decoded, and nothing kept to say so", raw)
		}
		return
	}
	if skip {
		return
	}
	if !reflect.DeepEqual(d.Choices(), fresh.Choices()) && !(len(d.Choices()) == 0 && len(fresh.Choices()) == 0) {
		t.Fatalf("event %q: choices %+v in the stream, %+v alone", raw, d.Choices(), fresh.Choices())
	}
	if e, fe := d.Err(), fresh.Err(); (e == nil) != (fe == nil) || e != nil && e.Text() != fe.Text() {
		t.Fatalf("event %q: error %+v in the stream, %+v alone", raw, e, fe)
	}
	if u := d.Usage(); u != nil && u.CompletionTokens < 0 {
		t.Fatalf("event %q: usage %+v", raw, *u)
	}
	if st := d.Server(); st != nil {
		v := reflect.ValueOf(*st)
		for i := range v.NumField() {
			if f, isFig := v.Field(i).Interface().(sample.Figure); isFig && f < 0 && f != -1 {
				t.Fatalf("event %q: server clock %s = %v", raw, v.Type().Field(i).Name, f)
			}
		}
	}
}
