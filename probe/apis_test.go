package probe

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
	"tokscope/workload"
)

// Each API's request: its path, its name for max_tokens, stream: true, the usage option only
// where the API has it, ignore_eos/min_tokens only where servers take them, extra_body
// merged (Ollama's options merged with num_predict), and the key in the API's header.
func TestAPIRequestShapes(t *testing.T) {
	t.Setenv(testKeyEnv, testKey)
	w := workload.Request{Messages: []workload.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "hi"}},
		MaxTokens: 33, MinTokens: 33}
	for _, api := range []string{config.APICompletions, config.APIResponses, config.APIAnthropic, config.APIOllama} {
		t.Run(api, func(t *testing.T) {
			g := newGT(t, fixed(script{events: []event{{ms(1), doneEvent}}}))
			c := NewClient(testEndpoint(g.Server, func(ep *config.Endpoint) {
				ep.API, ep.APIKeyEnv = api, testKeyEnv
				ep.ExtraBody = map[string]any{"temperature": 0, "options": map[string]any{"temperature": 0}}
			}))
			t.Cleanup(c.CloseIdleConnections)
			c.SendLive(t.Context(), w, Live{})
			req := g.requests()[0]
			b, h := req.body, req.header
			if b["stream"] != true || b["model"] != "m" || b["temperature"] != 0.0 {
				t.Errorf("body %v", b)
			}
			_, usageOpt := b["stream_options"]
			_, eos := b["ignore_eos"]
			_, minTokens := b["min_tokens"]
			wantOpenAI := api == config.APICompletions
			if usageOpt != wantOpenAI || eos != wantOpenAI || minTokens != wantOpenAI {
				t.Errorf("stream_options %v, ignore_eos %v, min_tokens %v: want them %v", usageOpt, eos, minTokens, wantOpenAI)
			}
			auth := "Bearer " + testKey
			switch api {
			case config.APICompletions:
				if b["prompt"] != "sys\n\nhi" || b["max_tokens"] != 33.0 || b["min_tokens"] != 33.0 || req.path != "/v1/completions" {
					t.Errorf("%s %v", req.path, b)
				}
			case config.APIResponses:
				in, _ := b["input"].([]any)
				if len(in) != 2 || b["max_output_tokens"] != 33.0 || b["max_tokens"] != nil || req.path != "/v1/responses" {
					t.Errorf("%s %v", req.path, b)
				}
			case config.APIAnthropic:
				msgs, _ := b["messages"].([]any)
				if b["system"] != "sys" || len(msgs) != 1 || b["max_tokens"] != 33.0 || req.path != "/v1/messages" {
					t.Errorf("%s %v", req.path, b)
				}
				if h.Get("X-Api-Key") != testKey || h.Get("Anthropic-Version") != "2023-06-01" {
					t.Errorf("headers %v", h)
				}
				auth = ""
			case config.APIOllama:
				opts, _ := b["options"].(map[string]any)
				msgs, _ := b["messages"].([]any)
				if opts["num_predict"] != 33.0 || opts["temperature"] != 0.0 || len(msgs) != 2 || b["max_tokens"] != nil ||
					req.path != "/v1/api/chat" && req.path != "/api/chat" {
					t.Errorf("%s %v", req.path, b)
				}
			}
			if h.Get("Authorization") != auth {
				t.Errorf("Authorization %q, want %q", h.Get("Authorization"), auth)
			}
		})
	}
}

func sse(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

const (
	anthStart = `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":3,"cache_read_input_tokens":5,"cache_creation_input_tokens":2,"output_tokens":1}}}`
	anthText  = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" hi"}}`
	respText  = `{"type":"response.output_text.delta","delta":" hi"}`
)

// Errors inside each API's stream end it as stream_error with the server's message; the
// APIs' normal ends (response.incomplete at max_output_tokens) are not errors.
func TestAPIStreamEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, api string
		events    []string
		outcome   sample.Outcome
		kind, msg string
		finish    string
	}{
		{"anthropic overloaded", config.APIAnthropic, []string{sse("message_start", anthStart), sse("content_block_delta", anthText),
			sse("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
			sample.OutcomeError, sample.ErrStreamError, "error inside the stream: Overloaded (type overloaded_error)", ""},
		{"anthropic cut", config.APIAnthropic, []string{sse("message_start", anthStart), sse("content_block_delta", anthText)},
			sample.OutcomeTruncated, "", "stream ended without finish_reason", ""},
		{"responses failed", config.APIResponses, []string{sse("response.output_text.delta", respText),
			sse("response.failed", `{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}`)},
			sample.OutcomeError, sample.ErrStreamError, "error inside the stream: boom (code server_error)", ""},
		{"responses error", config.APIResponses, []string{sse("response.output_text.delta", respText),
			sse("error", `{"type":"error","code":"rate_limit_exceeded","message":"slow down","param":null}`)},
			sample.OutcomeError, sample.ErrStreamError, "error inside the stream: slow down (code rate_limit_exceeded)", ""},
		{"responses incomplete at the limit", config.APIResponses, []string{sse("response.output_text.delta", respText),
			sse("response.incomplete", `{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":4,"output_tokens":1}}}`)},
			sample.OutcomeOK, "", "", "length"},
		{"responses incomplete by a filter", config.APIResponses, []string{sse("response.output_text.delta", respText),
			sse("response.incomplete", `{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"content_filter"}}}`)},
			sample.OutcomeOK, "", "", "content_filter"},
		{"ollama error line", config.APIOllama, []string{`{"message":{"role":"assistant","content":"a"},"done":false}` + "\n",
			`{"error":"an error was encountered while running the model: unexpected EOF"}` + "\n"},
			sample.OutcomeError, sample.ErrStreamError, "error inside the stream: an error was encountered while running the model: unexpected EOF", ""},
		{"ollama cut", config.APIOllama, []string{`{"message":{"role":"assistant","content":"a"},"done":false}` + "\n"},
			sample.OutcomeTruncated, "", "stream ended without finish_reason", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var evs []event
			for i, e := range tc.events {
				evs = append(evs, event{ms(float64(5 * (i + 1))), e})
			}
			ct := "text/event-stream"
			if tc.api == config.APIOllama {
				ct = "application/x-ndjson"
			}
			s, _, _ := measure(t, script{contentType: ct, events: evs}, func(ep *config.Endpoint) { ep.API = tc.api })
			outcome(t, s, tc.outcome, tc.kind)
			if s.ErrorMessage != tc.msg || s.FinishReason != tc.finish {
				t.Errorf("message %q finish %q, want %q %q", s.ErrorMessage, s.FinishReason, tc.msg, tc.finish)
			}
			if tc.api == config.APIAnthropic && (s.PromptTokens != 10 || s.CachedTokens != 5) {
				t.Errorf("prompt %d cached %d, want 3+5+2 and 5 from message_start", s.PromptTokens, s.CachedTokens)
			}
		})
	}
}

// Anthropic's ping is no event: it sets no first event, is no chunk, and does not keep a
// stalled stream alive.
func TestAnthropicPing(t *testing.T) {
	t.Parallel()
	ping := sse("ping", `{"type": "ping"}`)
	evs := []event{{ms(5), ping}, {ms(10), sse("message_start", anthStart)}}
	for i := range 12 {
		evs = append(evs, event{ms(50 + 50*float64(i)), ping})
	}
	s, _, _ := measure(t, script{events: evs}, func(ep *config.Endpoint) {
		ep.API = config.APIAnthropic
		ep.Stall = 300 * time.Millisecond
	})
	outcome(t, s, sample.OutcomeError, sample.ErrStall)
	if len(s.Chunks) != 1 || s.FirstEvent < ms(10) {
		t.Errorf("%d chunks, first event %v: pings counted", len(s.Chunks), s.FirstEvent)
	}
}

// A 529 overloaded_error backs off like a 429, honouring retry-after; Anthropic's
// rate-limit headers read like x-ratelimit-*.
func TestAnthropicOverloaded(t *testing.T) {
	t.Parallel()
	s, _, _ := measure(t, script{status: 529, contentType: "application/json",
		header: map[string]string{"Retry-After": "7", "Anthropic-Ratelimit-Requests-Remaining": "0", "Anthropic-Ratelimit-Tokens-Remaining": "1200"},
		body:   `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		func(ep *config.Endpoint) { ep.API = config.APIAnthropic })
	outcome(t, s, sample.OutcomeError, "http_529")
	if !strings.HasPrefix(s.ErrorMessage, "529") || !strings.HasSuffix(s.ErrorMessage, ": Overloaded (type overloaded_error)") {
		t.Errorf("message %q", s.ErrorMessage)
	}
	if s.RetryAfter != 7*time.Second || s.RateLimitRemainingRequests != 0 || s.RateLimitRemainingTokens != 1200 {
		t.Errorf("retry-after %v, remaining %d requests %d tokens", s.RetryAfter, s.RateLimitRemainingRequests, s.RateLimitRemainingTokens)
	}
	if !isRateLimited(&s) {
		t.Error("a 529 does not back off like a 429")
	}
}

// A key echoed inside any API's error event never reaches the message.
func TestAPIErrorEventsNeverLeakKey(t *testing.T) {
	t.Setenv(testKeyEnv, testKey)
	for api, ev := range map[string]string{
		config.APICompletions: "data: " + `{"error":{"message":"bad key ` + testKey + `"}}` + "\n\n",
		config.APIResponses:   sse("response.failed", `{"type":"response.failed","response":{"error":{"code":"x","message":"bad key `+testKey+`"}}}`),
		config.APIAnthropic:   sse("error", `{"type":"error","error":{"type":"authentication_error","message":"bad key `+testKey+`"}}`),
		config.APIOllama:      `{"error":"bad key ` + testKey + `"}` + "\n",
	} {
		s, _, _ := measure(t, script{events: []event{{ms(1), ev}}}, func(ep *config.Endpoint) { ep.API, ep.APIKeyEnv = api, testKeyEnv })
		outcome(t, s, sample.OutcomeError, sample.ErrStreamError)
		if strings.Contains(s.ErrorMessage, testKey[3:]) || !strings.Contains(s.ErrorMessage, "[redacted]") {
			t.Errorf("%s: %q", api, s.ErrorMessage)
		}
	}
}

// anthropicQuick is a short Anthropic stream: n text deltas gap apart, then its end.
func anthropicQuick(n int, gap time.Duration) script {
	evs := []event{{gap, sse("message_start", anthStart)}}
	for i := range n {
		evs = append(evs, event{time.Duration(i+2) * gap, sse("content_block_delta", anthText)})
	}
	end := time.Duration(n+2) * gap
	evs = append(evs, event{end, sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":`+strconv.Itoa(n)+`}}`)},
		event{end, sse("message_stop", `{"type":"message_stop"}`)})
	return script{events: evs}
}

// Anthropic's 529 overloaded_error makes a Runner back off as a 429 does, for retry-after.
func TestRunner529RetryAfter(t *testing.T) {
	g := newGT(t, func(n int) script {
		if n == 2 {
			return script{status: 529, header: map[string]string{"Retry-After": "1"}, contentType: "application/json",
				body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}
		}
		return anthropicQuick(2, ms(5))
	})
	ep := testEndpoint(g.Server, func(ep *config.Endpoint) { ep.API = config.APIAnthropic })
	r := NewRunner([]config.Endpoint{ep}, Options{Warmup: 1, Requests: 3})
	dones, all := collectAll(t, r, context.Background())
	retriedAfterOneSecond(t, g, all)
	kinds := map[string]int{}
	for _, d := range dones {
		kinds[d.Sample.ErrorKind]++
	}
	if kinds["http_529"] != 1 || kinds[""] != 3 {
		t.Errorf("kinds %v", kinds)
	}
}
