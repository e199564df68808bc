package probe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
)

// Tolerances honest for a loaded 2-core machine under -race: an instant may be late by up to
// lateBy (never early), a rate over a ≥ 1 s span within ±rateTol.
const (
	lateBy  = 40 * time.Millisecond
	rateTol = 0.15
)

// reporter takes the soft failures of a timing scenario: lateness that a starved machine
// (other processes' benchmarks on the same two cores) can cause.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

type softErrors []string

func (s *softErrors) Helper()                      {}
func (s *softErrors) Errorf(f string, args ...any) { *s = append(*s, fmt.Sprintf(f, args...)) }

// timed runs a timing scenario up to 3 times: when only lateness failed, it is retried (a
// descheduled process measures late, never early); any other failure is reported at once.
func timed(t *testing.T, scenario func(late reporter)) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		var soft softErrors
		scenario(&soft)
		if len(soft) == 0 || t.Failed() {
			return
		}
		if attempt == 3 {
			for _, e := range soft {
				t.Error(e)
			}
			return
		}
		t.Logf("attempt %d measured late (busy machine?): %v", attempt, soft)
	}
}

// instant asserts that a measured instant is never before the scheduled one (hard) and not
// much after (soft).
func instant(t *testing.T, late reporter, name string, got time.Duration, ok bool, want time.Duration) {
	t.Helper()
	if !ok || got < 0 {
		t.Errorf("%s: absent, want %v", name, want)
		return
	}
	if got < want {
		t.Errorf("%s = %v, before the scheduled %v", name, got, want)
	}
	if got > want+lateBy {
		late.Errorf("%s = %v, want in [%v, %v]", name, got, want, want+lateBy)
	}
}

func rate(t *testing.T, late reporter, name string, got float64, ok bool, want float64) {
	t.Helper()
	if !ok {
		t.Errorf("%s undefined, want %.2f", name, want)
		return
	}
	if math.Abs(got-want) > rateTol*want {
		late.Errorf("%s = %.2f, want %.2f ±%.0f%%", name, got, want, rateTol*100)
	}
}

func span(late reporter, name string, got, lo, hi time.Duration) {
	late.Helper()
	if got < lo || got > hi {
		late.Errorf("%s = %v, want in [%v, %v]", name, got, lo, hi)
	}
}

func outcome(t *testing.T, s sample.Sample, want sample.Outcome, kind string) {
	t.Helper()
	if s.Outcome != want || s.ErrorKind != kind {
		t.Fatalf("outcome = %s/%q (%s), want %s/%q", s.Outcome, s.ErrorKind, s.ErrorMessage, want, kind)
	}
}

// A reasoning model: headers late, a role-only chunk, 20 reasoning chunks at 20 ms, the first
// answer at 700 ms, 40 answer chunks at 20 ms with one 220 ms gap, then finish and usage.
func TestReasoningStreamMetrics(t *testing.T) {
	t.Parallel()
	var evs []event
	evs = append(evs, event{ms(100), roleChunk()})
	for i := range 20 {
		evs = append(evs, event{ms(200 + 20*float64(i)), reasoningChunk(fmt.Sprintf(" r%d", i))})
	}
	for i := range 40 {
		at := 700 + 20*float64(i)
		if i >= 20 {
			at += 200
		}
		evs = append(evs, event{ms(at), contentChunk(fmt.Sprintf(" w%d", i))})
	}
	evs = append(evs,
		event{ms(1700), finishChunk("stop")},
		event{ms(1710), usageChunk(7, 60, 20)},
		event{ms(1710), doneEvent})
	timed(t, func(late reporter) {
		s, _, deltas := measure(t, script{headerDelay: ms(60), events: evs})

		outcome(t, s, sample.OutcomeOK, "")
		if s.FinishReason != "stop" || s.ResponseID != gtID {
			t.Errorf("finish %q id %q", s.FinishReason, s.ResponseID)
		}
		v, ok := s.TTFB()
		instant(t, late, "TTFB", v, ok, ms(60))
		v, ok = s.TTFEvent()
		instant(t, late, "first_event", v, ok, ms(100))
		v, ok = s.TTFT()
		instant(t, late, "TTFT", v, ok, ms(200))
		v, ok = s.TTFA()
		instant(t, late, "TTFA", v, ok, ms(700))
		instant(t, late, "last_token", s.LastToken, true, ms(1680))
		if s.Tokens != 60 || s.Source != sample.SourceUsage || s.PromptTokens != 7 {
			t.Errorf("N = %d (%s), prompt %d; want 60 (usage), 7", s.Tokens, s.Source, s.PromptTokens)
		}
		r, ok := s.DecodeRate()
		rate(t, late, "decode tok/s", r, ok, 59/1.480)
		tpot, ok := s.TPOT()
		rate(t, late, "TPOT ms", float64(tpot)/1e6, ok, 1480.0/59)
		r, ok = s.E2ERate()
		rate(t, late, "e2e tok/s", r, ok, 60/1.680)

		itl, ok := s.ITL()
		if !ok || itl.Count != 59 {
			t.Fatalf("ITL count %d ok %v", itl.Count, ok)
		}
		span(late, "ITL p50", itl.P50, ms(12), ms(32))
		span(late, "ITL p99", itl.P99, ms(180), ms(260))
		span(late, "ITL max", itl.Max, ms(180), ms(260))
		if tpc, ok := s.TokensPerChunk(); !ok || tpc != 1 {
			t.Errorf("tokens/chunk = %v", tpc)
		}

		p, ok := s.PhaseSplit()
		if !ok || p.ReasoningTokens != 20 || p.AnswerTokens != 40 {
			t.Fatalf("phases %+v ok %v", p, ok)
		}
		rate(t, late, "reasoning tok/s", p.ReasoningRate, p.ReasoningOK, 19/0.380)
		rate(t, late, "answer tok/s", p.AnswerRate, p.AnswerOK, 39/0.980)

		var nr, nc int
		var text strings.Builder
		for _, d := range deltas {
			if d.Reasoning {
				nr++
			} else {
				nc++
				text.WriteString(d.Text)
			}
			if d.At.Before(s.Start) {
				t.Errorf("delta before t0")
			}
		}
		if nr != 20 || nc != 40 || !strings.HasPrefix(text.String(), " w0 w1") {
			t.Errorf("deltas: %d reasoning, %d content, %q", nr, nc, text.String()[:12])
		}
		if s.Reused || s.Connect < 0 || s.Wrote < 0 || s.Wrote > s.Headers {
			t.Errorf("connection phases: reused %v connect %v wrote %v headers %v", s.Reused, s.Connect, s.Wrote, s.Headers)
		}
	})
}

// Ollama/OpenRouter "reasoning" field, multi-token chunks, no usage: N is the tokenizer
// estimate of the whole text and tokens/chunk shows the batching.
func TestMultiTokenChunksEstimate(t *testing.T) {
	t.Parallel()
	evs := []event{{ms(20), roleChunk()}}
	for i := range 10 {
		evs = append(evs, event{ms(50 + 10*float64(i)), chunk(map[string]any{"reasoning": " think think"}, nil, nil)})
	}
	// 30 answer chunks of " hello world" (2 cl100k tokens) every 50 ms from 200 ms.
	for i := range 30 {
		evs = append(evs, event{ms(200 + 50*float64(i)), contentChunk(" hello world")})
	}
	evs = append(evs, event{ms(1700), finishChunk("length")}, event{ms(1700), doneEvent})
	timed(t, func(late reporter) {
		s, _, _ := measure(t, script{events: evs})

		outcome(t, s, sample.OutcomeOK, "")
		if s.Source != sample.SourceEstimate || s.Tokens != 80 || s.ReasoningTokens != 20 {
			t.Fatalf("N = %d (%s), reasoning %d; want 80 (estimate), 20", s.Tokens, s.Source, s.ReasoningTokens)
		}
		v, ok := s.TTFT()
		instant(t, late, "TTFT", v, ok, ms(50))
		v, ok = s.TTFA()
		instant(t, late, "TTFA", v, ok, ms(200))
		if tpc, _ := s.TokensPerChunk(); tpc != 2 {
			t.Errorf("tokens/chunk = %v, want 2", tpc)
		}
		r, ok := s.DecodeRate()
		rate(t, late, "decode tok/s", r, ok, 79/1.600)
		p, _ := s.PhaseSplit()
		rate(t, late, "answer tok/s", p.AnswerRate, p.AnswerOK, 59/1.450)
	})
}

// Without a tokenizer, N falls back to the count of token-bearing chunks.
func TestChunkCountFallback(t *testing.T) {
	t.Parallel()
	evs := []event{{ms(10), roleChunk()}}
	for i := range 5 {
		evs = append(evs, event{ms(20 + float64(i)), contentChunk(" a b")})
	}
	evs = append(evs, event{ms(30), finishChunk("stop")}, event{ms(30), doneEvent})
	g := newGT(t, fixed(script{events: evs}))
	c := newClientWith(testEndpoint(g.Server), clientSetup{count: tokenCounting{estimate: func(string) (int, bool) { return 0, false }}})
	t.Cleanup(c.CloseIdleConnections)
	s := ask(t.Context(), c, "hi", Live{})
	if s.Tokens != 5 || s.Source != sample.SourceChunks {
		t.Fatalf("N = %d (%s), want 5 (chunks)", s.Tokens, s.Source)
	}
}

// vLLM continuous_usage_stats: cumulative usage on every chunk, 3 tokens per chunk, and the
// stream is cut (no finish_reason, no final usage): truncated, yet N comes from usage.
func TestContinuousUsageCutStream(t *testing.T) {
	t.Parallel()
	evs := []event{{ms(10), chunk(map[string]any{"role": "assistant"}, nil, map[string]any{"usage": usage(5, 0, 0)})}}
	for i := range 8 {
		evs = append(evs, event{ms(30 + 10*float64(i)), chunk(map[string]any{"content": " a b c"}, nil,
			map[string]any{"usage": usage(5, 3*(i+1), 0)})})
	}
	s, _, deltas := measure(t, script{events: evs, abort: true})

	outcome(t, s, sample.OutcomeTruncated, "")
	if s.Tokens != 24 || s.Source != sample.SourceUsage {
		t.Fatalf("N = %d (%s), want 24 (usage)", s.Tokens, s.Source)
	}
	for i, c := range s.Chunks[1:] {
		if c.Tokens != 3 {
			t.Errorf("chunk %d tokens = %d, want 3", i+1, c.Tokens)
		}
	}
	if tpc, _ := s.TokensPerChunk(); tpc != 3 {
		t.Errorf("tokens/chunk = %v", tpc)
	}
	if len(deltas) != 8 || deltas[0].Tokens != 0 || deltas[1].Tokens != 3 {
		t.Errorf("delta tokens: %d deltas, first %d second %d", len(deltas), deltas[0].Tokens, deltas[min(1, len(deltas)-1)].Tokens)
	}
}

// A final usage on the last content chunk is a total, not a per-chunk count.
func TestFinalUsageOnContentChunk(t *testing.T) {
	t.Parallel()
	evs := []event{
		{ms(10), contentChunk("a")}, {ms(20), contentChunk("b")},
		{ms(30), chunk(map[string]any{"content": "c"}, "stop", map[string]any{"usage": usage(1, 3, 0)})},
		{ms(30), doneEvent},
	}
	s, _, _ := measure(t, script{events: evs})
	outcome(t, s, sample.OutcomeOK, "")
	if s.Tokens != 3 || s.Source != sample.SourceUsage {
		t.Fatalf("N = %d (%s)", s.Tokens, s.Source)
	}
	for _, c := range s.Chunks {
		if c.Tokens != 0 {
			t.Errorf("chunk tokens %d, want 0 (no per-chunk usage)", c.Tokens)
		}
	}
}

// 450 keep-alive comments in a row (go-openai's default limit of 300 would kill the stream)
// neither end the request nor count as chunks.
func TestKeepAlivesDoNotEndStream(t *testing.T) {
	t.Parallel()
	evs := []event{{ms(10), roleChunk()}, {ms(20), contentChunk("a")}}
	for i := range 450 {
		evs = append(evs, event{ms(30 + 0.2*float64(i)), keepAlive})
	}
	evs = append(evs, event{ms(200), contentChunk("b")}, event{ms(210), finishChunk("stop")},
		event{ms(210), usageChunk(1, 2, 0)}, event{ms(210), doneEvent})
	timed(t, func(late reporter) {
		s, _, _ := measure(t, script{events: evs})
		outcome(t, s, sample.OutcomeOK, "")
		if len(s.Chunks) != 5 || s.Tokens != 2 {
			t.Errorf("chunks %d tokens %d", len(s.Chunks), s.Tokens)
		}
		itl, _ := s.ITL()
		span(late, "gap over keep-alives", itl.Max, ms(170), ms(180)+lateBy)
	})
}

// A mid-stream data: {"error": …} after keep-alive comments: go-openai's RecvRaw returns
// nil, nil; the message still reaches the sample.
func TestErrorEventAfterKeepAlives(t *testing.T) {
	t.Parallel()
	evs := []event{{ms(10), roleChunk()}, {ms(20), contentChunk("a")}}
	for i := range 400 {
		evs = append(evs, event{ms(30 + 0.1*float64(i)), keepAlive})
	}
	evs = append(evs, event{ms(100), data(map[string]any{"error": map[string]any{"message": "model overloaded", "code": "overloaded"}})})
	timed(t, func(late reporter) {
		s, _, _ := measure(t, script{events: evs, hold: ms(50)})
		outcome(t, s, sample.OutcomeError, sample.ErrStreamError)
		if !strings.Contains(s.ErrorMessage, "model overloaded") || !strings.Contains(s.ErrorMessage, "overloaded)") {
			t.Errorf("message %q", s.ErrorMessage)
		}
		instant(t, late, "end", s.End, true, ms(100))
	})
}

// The same error event with no comment before it: go-openai parses it into an error.
func TestErrorEventPlain(t *testing.T) {
	t.Parallel()
	evs := []event{{ms(10), roleChunk()}, {ms(20), contentChunk("a")},
		{ms(30), data(map[string]any{"error": map[string]any{"message": "boom", "type": "server_error"}})}}
	s, _, _ := measure(t, script{events: evs, hold: ms(20)})
	outcome(t, s, sample.OutcomeError, sample.ErrStreamError)
	if !strings.Contains(s.ErrorMessage, "boom") {
		t.Errorf("message %q", s.ErrorMessage)
	}
}

// OpenRouter reports a failure as a chunk with "error" and finish_reason "error".
func TestOpenRouterChunkError(t *testing.T) {
	t.Parallel()
	evs := []event{{ms(10), roleChunk()}, {ms(20), contentChunk(" a")}, {ms(30), contentChunk(" b")},
		{ms(40), chunk(map[string]any{"content": ""}, "error", map[string]any{
			"error": map[string]any{"code": 502, "message": "Provider disconnected"}})},
		{ms(40), doneEvent}}
	s, _, _ := measure(t, script{events: evs})
	outcome(t, s, sample.OutcomeError, sample.ErrStreamError)
	if !strings.Contains(s.ErrorMessage, "Provider disconnected") || !strings.Contains(s.ErrorMessage, "502") {
		t.Errorf("message %q", s.ErrorMessage)
	}
	if s.Tokens != 2 {
		t.Errorf("partial N = %d", s.Tokens)
	}
}

// finish_reason "error" alone is a stream error too.
func TestFinishReasonError(t *testing.T) {
	t.Parallel()
	evs := []event{{ms(10), contentChunk("a")}, {ms(20), finishChunk("error")}, {ms(20), doneEvent}}
	s, _, _ := measure(t, script{events: evs})
	outcome(t, s, sample.OutcomeError, sample.ErrStreamError)
}

// A stream that ends cleanly (or is dropped) without a finish_reason is truncated.
func TestCutStream(t *testing.T) {
	t.Parallel()
	evs := []event{{ms(10), roleChunk()}, {ms(20), contentChunk(" hello")}, {ms(30), contentChunk(" hello")}}
	for _, abort := range []bool{false, true} {
		s, _, _ := measure(t, script{events: evs, abort: abort})
		outcome(t, s, sample.OutcomeTruncated, "")
		if s.Tokens != 2 || s.Source != sample.SourceEstimate {
			t.Errorf("abort=%v: N = %d (%s)", abort, s.Tokens, s.Source)
		}
	}
	// [DONE] without a finish_reason is still truncated.
	s, _, _ := measure(t, script{events: append(evs, event{ms(40), doneEvent})})
	outcome(t, s, sample.OutcomeTruncated, "")
}

// No chunk for ep.Stall: a stall, ended by our timer long before the deadline.
func TestStall(t *testing.T) {
	t.Parallel()
	evs := []event{{ms(10), roleChunk()}, {ms(50), contentChunk(" a")}, {ms(100), contentChunk(" b")}, {ms(150), contentChunk(" c")}}
	timed(t, func(late reporter) {
		s, _, _ := measure(t, script{events: evs, hold: 5 * time.Second},
			func(ep *config.Endpoint) { ep.Stall = ms(300) })
		outcome(t, s, sample.OutcomeError, sample.ErrStall)
		instant(t, late, "end", s.End, true, ms(450))
		if s.Tokens != 3 || s.LastToken < ms(150) {
			t.Errorf("partial N = %d last %v", s.Tokens, s.LastToken)
		}
	})
}

// The stall timer also covers the wait for the headers.
func TestStallBeforeHeaders(t *testing.T) {
	t.Parallel()
	timed(t, func(late reporter) {
		s, _, _ := measure(t, script{headerDelay: 5 * time.Second}, func(ep *config.Endpoint) { ep.Stall = ms(200) })
		outcome(t, s, sample.OutcomeError, sample.ErrStall)
		instant(t, late, "end", s.End, true, ms(200))
	})
}

// ep.Timeout bounds the whole request, however steadily it streams.
func TestTimeout(t *testing.T) {
	t.Parallel()
	var evs []event
	for i := range 40 {
		evs = append(evs, event{ms(50 * float64(i+1)), contentChunk("a")})
	}
	timed(t, func(late reporter) {
		s, _, _ := measure(t, script{events: evs}, func(ep *config.Endpoint) { ep.Timeout = ms(400) })
		outcome(t, s, sample.OutcomeError, sample.ErrTimeout)
		instant(t, late, "end", s.End, true, ms(400))
	})
}

// The caller's context ending is "canceled", not a failure of the endpoint.
func TestCanceled(t *testing.T) {
	t.Parallel()
	g := newGT(t, fixed(script{events: []event{{ms(10), contentChunk("a")}}, hold: 5 * time.Second}))
	c := NewClient(testEndpoint(g.Server))
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(t.Context(), ms(150))
	defer cancel()
	s := ask(ctx, c, "hi", Live{})
	outcome(t, s, sample.OutcomeError, sample.ErrCanceled)
}

const testKeyEnv = "TOKSCOPE_PROBE_TEST_KEY"
const testKey = "sk-test-0123456789abcdef"

// HTTP errors: the status with the API's error code; Retry-After and rate-limit headers read
// even though go-openai drops headers on errors; the key never appears in the message, even
// when the server echoes it.
func TestHTTPErrors(t *testing.T) {
	t.Setenv(testKeyEnv, testKey)
	withKey := func(ep *config.Endpoint) { ep.APIKeyEnv = testKeyEnv }

	s, _, _ := measure(t, script{status: 401, contentType: "application/json",
		body: `{"error":{"message":"Incorrect API key provided: Bearer ` + testKey + ` (` + testKey + `)","type":"invalid_request_error","code":"invalid_api_key"}}`}, withKey)
	outcome(t, s, sample.OutcomeError, "http_401")
	if !strings.Contains(s.ErrorMessage, "invalid_api_key") || strings.Contains(s.ErrorMessage, testKey) || strings.Contains(s.ErrorMessage, "0123456789") {
		t.Errorf("401 message %q", s.ErrorMessage)
	}
	if s.HTTPStatus != 401 || s.FirstToken != sample.Absent {
		t.Errorf("status %d first token %v", s.HTTPStatus, s.FirstToken)
	}

	s, _, _ = measure(t, script{status: 500, contentType: "text/plain", body: "internal boom"}, withKey)
	outcome(t, s, sample.OutcomeError, "http_500")
	if !strings.Contains(s.ErrorMessage, "internal boom") {
		t.Errorf("500 message %q", s.ErrorMessage)
	}

	s, _, _ = measure(t, script{status: 429, contentType: "application/json",
		header: map[string]string{"Retry-After": "2", "X-Ratelimit-Remaining-Requests": "0", "X-Ratelimit-Remaining-Tokens": "1234"},
		body:   `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`})
	outcome(t, s, sample.OutcomeError, "http_429")
	if s.RetryAfter != 2*time.Second || s.RateLimitRemainingRequests != 0 || s.RateLimitRemainingTokens != 1234 {
		t.Errorf("retry-after %v remaining %d/%d", s.RetryAfter, s.RateLimitRemainingRequests, s.RateLimitRemainingTokens)
	}
	if !strings.Contains(s.ErrorMessage, "rate_limit_exceeded") {
		t.Errorf("429 message %q", s.ErrorMessage)
	}
}

// A server that ignores stream:true answers one JSON document: a stream error that says so.
func TestNonStreamingAnswer(t *testing.T) {
	t.Parallel()
	timed(t, func(late reporter) {
		s, _, _ := measure(t, script{contentType: "application/json", headerDelay: ms(30),
			body: `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`})
		outcome(t, s, sample.OutcomeError, sample.ErrStreamError)
		if !strings.Contains(s.ErrorMessage, "application/json") || !strings.Contains(s.ErrorMessage, "stream") {
			t.Errorf("message %q", s.ErrorMessage)
		}
		v, ok := s.TTFB()
		instant(t, late, "TTFB", v, ok, ms(30))
	})
}

// What the server receives: extra body fields go-openai cannot express, include_usage
// merged with the user's stream_options, headers with ${ENV}, the key.
func TestRequestShape(t *testing.T) {
	t.Setenv(testKeyEnv, testKey)
	t.Setenv("TOKSCOPE_PROBE_TEST_HDR", "hdr-value")
	evs := []event{{ms(5), contentChunk("a")}, {ms(5), finishChunk("stop")}, {ms(5), doneEvent}}
	s, g, _ := measure(t, script{events: evs}, func(ep *config.Endpoint) {
		ep.APIKeyEnv = testKeyEnv
		ep.MaxTokens = 33
		ep.Headers = map[string]string{"X-Tenant": "${TOKSCOPE_PROBE_TEST_HDR}", "X-Plain": "p$1"}
		ep.ExtraBody = map[string]any{"temperature": 0, "ignore_eos": true,
			"stream_options": map[string]any{"continuous_usage_stats": true}}
	})
	outcome(t, s, sample.OutcomeOK, "")
	req := g.requests()[0]
	b := req.body
	so, _ := b["stream_options"].(map[string]any)
	if b["temperature"] != 0.0 || b["ignore_eos"] != true || b["stream"] != true || b["max_tokens"] != 33.0 ||
		so["include_usage"] != true || so["continuous_usage_stats"] != true || b["model"] != "m" {
		t.Errorf("body %v", b)
	}
	if req.header.Get("Authorization") != "Bearer "+testKey || req.header.Get("X-Tenant") != "hdr-value" ||
		req.header.Get("X-Plain") != "p$1" || req.header.Get("Accept-Encoding") != "" {
		t.Errorf("headers %v", req.header)
	}

	// Without extra_body go-openai's own body is sent, and still asks for usage.
	s, g, _ = measure(t, script{events: evs})
	outcome(t, s, sample.OutcomeOK, "")
	so, _ = g.requests()[0].body["stream_options"].(map[string]any)
	if so["include_usage"] != true {
		t.Errorf("body %v", g.requests()[0].body)
	}
	if g.requests()[0].header.Get("Authorization") != "" {
		t.Errorf("no key configured, yet Authorization sent")
	}

	// Reasoning models reject max_tokens (and go-openai refuses to send it): the limit goes as
	// max_completion_tokens.
	s, g, _ = measure(t, script{events: evs}, func(ep *config.Endpoint) { ep.Model = "o3-mini" })
	outcome(t, s, sample.OutcomeOK, "")
	if b := g.requests()[0].body; b["max_completion_tokens"] != 64.0 || b["max_tokens"] != nil {
		t.Errorf("body %v", b)
	}
}

func TestTransportErrors(t *testing.T) {
	t.Parallel()
	one := func(ep config.Endpoint, setup clientSetup) sample.Sample {
		c := newClientWith(ep, setup)
		defer c.CloseIdleConnections()
		return ask(t.Context(), c, "hi", Live{})
	}
	base := config.Endpoint{Name: "x", Model: "m", Timeout: 10 * time.Second, Stall: 10 * time.Second, MaxTokens: 8}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ep := base
	ep.BaseURL = "http://" + addr + "/v1"
	s := one(ep, clientSetup{})
	outcome(t, s, sample.OutcomeError, sample.ErrConnect)

	// A resolver with no reachable DNS server: the lookup fails here, nothing leaves the machine.
	// It is the client's own: asked proves that no other resolver was.
	var asked atomic.Bool
	noDNS := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		asked.Store(true)
		return nil, errors.New("no DNS server in tests")
	}}
	ep.BaseURL = "http://tokscope-no-such-host.invalid/v1"
	s = one(ep, clientSetup{resolver: noDNS})
	if !asked.Load() {
		t.Error("the client did not ask its own resolver")
	}
	outcome(t, s, sample.OutcomeError, sample.ErrDNS)

	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(contentChunk("a") + finishChunk("stop") + doneEvent))
	}))
	defer tlsSrv.Close()
	ep.BaseURL = tlsSrv.URL + "/v1"
	s = one(ep, clientSetup{})
	outcome(t, s, sample.OutcomeError, sample.ErrTLS)
	ep.InsecureSkipVerify = true
	s = one(ep, clientSetup{})
	outcome(t, s, sample.OutcomeOK, "")
	if s.TLS <= 0 || s.Connect < 0 {
		t.Errorf("tls phase %v connect %v", s.TLS, s.Connect)
	}
}

// Keep-alive reuse at concurrency 8: after 8 concurrent warm-ups, no counted request opens a
// connection (the default transport reconnected most of them).
func TestConnectionReuseConcurrency8(t *testing.T) {
	t.Parallel()
	evs := []event{{ms(1), roleChunk()}, {ms(15), contentChunk("a")}, {ms(20), finishChunk("stop")}, {ms(20), doneEvent}}
	g := newGT(t, fixed(script{events: evs}))
	ep := testEndpoint(g.Server, func(ep *config.Endpoint) { ep.Concurrency = 8 })
	r := NewRunner([]config.Endpoint{ep}, Options{Warmup: 8, Requests: 80})
	done := collect(t, r)
	counted := 0
	for _, d := range done {
		if d.Sample.Warmup {
			continue
		}
		counted++
		if !d.Sample.Reused || d.Sample.Connect != sample.Absent {
			t.Errorf("seq %d: reused %v connect %v", d.Sample.Seq, d.Sample.Reused, d.Sample.Connect)
		}
	}
	if counted != 80 || g.conns.Load() != 8 {
		t.Errorf("counted %d, connections %d (want 80, 8)", counted, g.conns.Load())
	}
}
