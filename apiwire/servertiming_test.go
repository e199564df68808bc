package apiwire

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"tokscope/sample"
)

// llama-server's timings over three turns of one conversation (the later turns partly from
// its prefix cache) read as the server wrote them: cache_n is the cached part, prompt_n the rest.
func TestMultiturnTimings(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "captures", "llamacpp-b10470", "multiturn-cache.json"))
	if err != nil {
		t.Fatal(err)
	}
	var turns []struct {
		Timings wireTimings `json:"timings"`
	}
	if err := json.Unmarshal(b, &turns); err != nil {
		t.Fatal(err)
	}
	want := [][4]sample.Figure{{2.038, 14, 52, 8.565}, {1.531, 72, 71, 6.133}, {1.527, 144, 74, 7.202}}
	if len(turns) != len(want) {
		t.Fatalf("%d turns", len(turns))
	}
	for i, tr := range turns {
		st := &tr.Timings.ServerTiming
		if got := [4]sample.Figure{st.TTFTms, st.CachedTokens, st.PromptTokens, st.DecodeMs}; got != want[i] || st.DecodeTokens != 20 {
			t.Errorf("turn %d: %v n %v, want %v n 20", i+1, got, st.DecodeTokens, want[i])
		}
	}
}

// A server's clock object is read by its keys: a figure that is not a non-negative number
// stays absent without losing the others, and a value that is not an object is the type
// error a chunk reader tolerates, with no clock.
func TestClockObjectTolerant(t *testing.T) {
	t.Parallel()
	var w wireTimings
	if err := json.Unmarshal([]byte(`{"prompt_ms":"3.2","predicted_ms":4.5,"cache_n":-1,"predicted_n":7,"extra":{}}`), &w); err != nil {
		t.Fatal(err)
	}
	want := sample.NoServerTiming("llamacpp")
	want.DecodeMs, want.DecodeTokens = 4.5, 7
	if w.ServerTiming != want {
		t.Errorf("read %+v, want %+v", w.ServerTiming, want)
	}
	var m wireMetrics
	err := json.Unmarshal([]byte(`5`), &m)
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) || m.Source != "" {
		t.Errorf("a number as metrics: %v, %+v; want a type error and no clock", err, m.ServerTiming)
	}
	var d Decoder
	if ok, _ := d.Decode([]byte(`{"choices":[],"metrics":{"time_to_first_token_ms":61.5,"queue_time_ms":2}}`)); !ok {
		t.Fatal("a chunk with a metrics object did not decode")
	}
	if st := d.Server(); st == nil || st.Source != "vllm" || st.TTFTms != 61.5 || st.QueueMs != 2 {
		t.Errorf("server clock %+v, want vLLM's TTFT 61.5 and queue 2", st)
	}
	if ok, _ := d.Decode([]byte(`{"choices":[],"metrics":[1]}`)); !ok || d.Server() != nil {
		t.Errorf("a garbled metrics object: decoded %v, server clock %+v; want the chunk and no clock", ok, d.Server())
	}
}
