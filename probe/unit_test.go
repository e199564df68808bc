package probe

import (
	"net/http"
	"testing"
	"time"

	"tokscope/sample"

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
func decodeAll(raws ...string) sample.Sample {
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
	if s.ResponseID != "a" || s.Tokens != 10 || s.Source != sample.SourceUsage || s.ReasoningTokens != 5 {
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
