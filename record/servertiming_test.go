package record

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"tokscope/sample"
)

// The server's clock survives a record line exactly, absent figures as null, and a request
// that paid for loading the model is marked.
func TestServerTimingRoundTrip(t *testing.T) {
	llama := sample.NoServerTiming("llamacpp")
	llama.TTFTms, llama.DecodeMs, llama.DecodeTokens, llama.PromptTokens, llama.CachedTokens = 3.201, 1.162, 5, 1, 42
	llama.DraftN, llama.DraftAccepted = 12, 9
	ollama := sample.NoServerTiming("ollama")
	ollama.LoadMs, ollama.TTFTms, ollama.DecodeMs, ollama.DecodeTokens = 301.234567, 305.6789, 13.951762, 8
	for _, tc := range []struct {
		timing *sample.ServerTiming
		load   bool
		keys   []string
	}{
		{&llama, false, []string{`"source":"llamacpp"`, `"ttft_ms":3.201`, `"queue_ms":null`, `"decode_ms":1.162`,
			`"decode_tokens":5`, `"prompt_tokens":1`, `"cached_tokens":42`, `"draft_n":12`, `"draft_accepted":9`}},
		{&ollama, true, []string{`"source":"ollama"`, `"ttft_ms":305.6789`, `"load_ms":301.234567`, `"model_load":true`}},
	} {
		s := fullSample()
		s.Server = tc.timing
		line, err := marshalLine(ptr(FromSample(&s)))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range tc.keys {
			if !strings.Contains(string(line), k) {
				t.Errorf("record line lacks %s: %s", k, line)
			}
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		got := rec.Sample()
		if !reflect.DeepEqual(got.Server, tc.timing) || rec.ModelLoad != tc.load {
			t.Errorf("read back %+v (model load %v), want %+v (%v)", got.Server, rec.ModelLoad, tc.timing, tc.load)
		}
	}
	s := fullSample()
	line, _ := marshalLine(ptr(FromSample(&s)))
	if strings.Contains(string(line), "server_timing") {
		t.Errorf("server_timing written for a request without one: %s", line)
	}
}
