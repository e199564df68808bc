package probe

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"tokscope/config"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(7 * time.Second).Format(http.TimeFormat)}}, 7 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {"86400"}}, maxRetryAfter},
		{http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
	} {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.h, got, tc.want)
		}
	}
}

// decodeAll runs raw chunks through the decoder the way SendLive does.
func decodeAll(raws ...string) Sample {
	s := newSample(testEP())
	var d decoder
	d.init(&s, nil, 0)
	for i, r := range raws {
		if d.add(time.Duration(i+1)*time.Millisecond, []byte(r)) {
			break
		}
	}
	d.finalize()
	s.FinishReason = d.finishReason
	if d.streamErr != "" {
		s.ErrorMessage = d.streamErr
	}
	return s
}

func TestDecoderTolerance(t *testing.T) {
	// Servers in transition send reasoning_content and reasoning with the same text: count once.
	s := decodeAll(
		`{"id":"a","choices":[{"delta":{"reasoning_content":" think","reasoning":" think"}}]}`,
		`{"id":"b","choices":[{"delta":{"content":" yes","reasoning":null}}]}`,
		`{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"completion_tokens":10,"prompt_tokens":3}}`,
	)
	if s.ResponseID != "a" || s.Tokens != 10 || s.Source != SourceUsage || s.ReasoningTokens != 5 {
		t.Errorf("id %q N %d (%s) reasoning %d", s.ResponseID, s.Tokens, s.Source, s.ReasoningTokens)
	}
	if s.Chunks[0].Reasoning != len(" think") {
		t.Errorf("reasoning bytes %d", s.Chunks[0].Reasoning)
	}

	// Wrong types, garbage and a bare-string error.
	s = decodeAll(
		`{"choices":[{"delta":{"content":" a","reasoning":{"odd":1}}}],"usage":"none"}`,
		`not json`,
		`{"choices":[{"delta":{"content":" b"}}]}{"trailing":1}`,
		`{"choices":[{"delta":{"content":" c"}}]}`,
		`{"error":"upstream gone"}`,
	)
	if len(s.Chunks) != 5 || s.Tokens != 2 || s.ErrorMessage != `error inside the stream: upstream gone` {
		t.Errorf("chunks %d N %d msg %q", len(s.Chunks), s.Tokens, s.ErrorMessage)
	}
}

func testEP() config.Endpoint { return config.Endpoint{Name: "u", Model: "m"} }

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
