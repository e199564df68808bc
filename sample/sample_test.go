package sample

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"
)

// Counted and Failed split the probe's requests: a warm-up or an interactive request is
// neither; every other request is exactly one of the two.
func TestCountedAndFailed(t *testing.T) {
	for _, tc := range []struct {
		warmup          bool
		stream          uint64
		outcome         Outcome
		counted, failed bool
	}{
		{false, 0, OutcomeOK, true, false},
		{false, 0, OutcomeError, false, true},
		{false, 0, OutcomeTruncated, false, true},
		{true, 0, OutcomeOK, false, false},
		{true, 0, OutcomeError, false, false},
		{false, 2, OutcomeOK, false, false},
		{false, 2, OutcomeError, false, false},
	} {
		s := Sample{Warmup: tc.warmup, Stream: tc.stream, Outcome: tc.outcome}
		if s.Counted() != tc.counted || s.Failed() != tc.failed {
			t.Errorf("%+v: Counted %v Failed %v, want %v %v", tc, s.Counted(), s.Failed(), tc.counted, tc.failed)
		}
	}
}

// Gaps walks the token-bearing chunks only (role, usage and empty chunks are not tokens);
// ITLs and MaxGap are built on it.
func TestGapsSkipChunksWithoutText(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	cases := []struct {
		name   string
		chunks []Chunk
		gaps   []time.Duration
		max    time.Duration
		maxOK  bool
	}{
		{"none", nil, nil, Absent, false},
		{"one token", []Chunk{{At: ms(5)}, {At: ms(10), Content: 3}}, nil, Absent, false},
		{"role, tokens, usage", []Chunk{{At: ms(5)}, {At: ms(10), Content: 3}, {At: ms(14), Reasoning: 2},
			{At: ms(20)}, {At: ms(40), Content: 1}, {At: ms(41)}}, []time.Duration{ms(4), ms(26)}, ms(26), true},
	}
	for _, c := range cases {
		s := Sample{Chunks: c.chunks}
		if got := s.ITLs(); !slices.Equal(got, c.gaps) {
			t.Errorf("%s: ITLs %v, want %v", c.name, got, c.gaps)
		}
		if got, ok := s.MaxGap(); got != c.max || ok != c.maxOK {
			t.Errorf("%s: MaxGap %v %v, want %v %v", c.name, got, ok, c.max, c.maxOK)
		}
	}
}

func TestServerTimingFigures(t *testing.T) {
	t.Parallel()
	l := NoServerTiming("llamacpp")
	l.DecodeTokens, l.DecodeMs, l.DraftN, l.DraftAccepted = 5, 1.162, 10, 7
	if r, ok := l.DecodeRate(); !ok || math.Abs(r-3442.3407917383824) > 1e-9 {
		t.Errorf("llama.cpp decode rate %v %v", r, ok)
	}
	if a, ok := l.DraftAcceptance(); !ok || a != 0.7 {
		t.Errorf("draft acceptance %v %v", a, ok)
	}
	v := NoServerTiming("vllm")
	v.DecodeTPS, v.DecodeMs = 103.2, 1240.5
	if r, ok := v.DecodeRate(); !ok || r != 103.2 {
		t.Errorf("vLLM decode rate %v %v, want its own 103.2", r, ok)
	}
	if _, ok := v.DraftAcceptance(); ok {
		t.Error("draft acceptance without draft_n")
	}
	o := NoServerTiming("ollama")
	o.LoadMs, o.TTFTms = 300, 310
	if !o.ModelLoad() {
		t.Error("300 ms of a 310 ms TTFT loading the model: not marked")
	}
	o.LoadMs, o.TTFTms = 2.79, 3.3
	if o.ModelLoad() {
		t.Error("2.79 ms load marked as model load")
	}
}

// A server_timing object reads back as written, and a key that is missing, null or negative
// is an absent figure (-1), not a zero the server never said.
func TestServerTimingJSON(t *testing.T) {
	t.Parallel()
	st := NoServerTiming("llamacpp")
	st.TTFTms, st.DecodeTokens, st.DraftN = 3.201, 5, 0
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"source":"llamacpp","ttft_ms":3.201,"queue_ms":null,"decode_ms":null,"decode_tokens":5,"prompt_tokens":null,"cached_tokens":null,"draft_n":0,"draft_accepted":null,"decode_tps":null,"load_ms":null}`
	if string(b) != want {
		t.Fatalf("JSON\n %s\nwant\n %s", b, want)
	}
	var back ServerTiming
	if err := json.Unmarshal(b, &back); err != nil || back != st {
		t.Fatalf("read back %+v (%v), want %+v", back, err, st)
	}
	var short ServerTiming
	if err := json.Unmarshal([]byte(`{"source":"vllm","ttft_ms":61.5,"queue_ms":-3}`), &short); err != nil {
		t.Fatal(err)
	}
	wantShort := NoServerTiming("vllm")
	wantShort.TTFTms = 61.5
	if short != wantShort {
		t.Errorf("short object read as %+v, want %+v", short, wantShort)
	}
	if err := json.Unmarshal([]byte(`{"ttft_ms":"fast"}`), &short); err == nil {
		t.Error("a string figure read without an error")
	}
}
