package probe

import (
	"fmt"
	"strings"
	"testing"

	"tokscope/sample"

	"go.uber.org/goleak"

	"tokscope/config"
)

// Hostile answers stay bounded in every decoder, with chat's limits (bounds.go): an endless
// error body, an endless line, an endless reasoning phase (kept out of the chunk bound, cut by the byte bound) and
// an endless answer past max_tokens. Each runs beside a healthy endpoint, as TestFaultMatrix.
func TestAPIFaultMatrix(t *testing.T) {
	const hostileHeap = 96 << 20
	// The endless reasoning of each API is " think" 200 times, each byte a JSON escape
	// (\u0074 for t): the same text in six times the wire bytes, so that the 4 MiB the byte
	// bound lets through hold a sixth of the text to decode and tokenize (about 2 s instead of
	// 10 under -race on a loaded 2-core machine). What these cases prove is each decoder's path
	// for reasoning (out of the answer-chunk bound, into the byte bound); the cost of 4 MiB of
	// plain reasoning text is TestFaultMatrix's "endless reasoning-only stream".
	thinkEscaped := strings.Repeat(jsonEscaped(" think"), 200)
	type hostile struct {
		api, ctype, lineHead, reasoning, answer string
	}
	for _, h := range []hostile{
		{config.APICompletions, "text/event-stream", `data: {"choices":[{"text":"`, "",
			"data: " + `{"choices":[{"text":" word"}]}` + "\n\n"},
		{config.APIResponses, "text/event-stream", `data: {"type":"response.output_text.delta","delta":"`,
			sse("response.reasoning_text.delta", `{"type":"response.reasoning_text.delta","delta":"`+thinkEscaped+`"}`),
			sse("response.output_text.delta", respText)},
		{config.APIAnthropic, "text/event-stream", `event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","delta":{"type":"text_delta","text":"`,
			sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"`+thinkEscaped+`"}}`),
			sse("content_block_delta", anthText)},
		{config.APIOllama, "application/x-ndjson", `{"message":{"content":"`,
			`{"message":{"role":"assistant","content":"","thinking":"` + thinkEscaped + `"},"done":false}` + "\n",
			`{"message":{"role":"assistant","content":" word"},"done":false}` + "\n"},
	} {
		withAPI := func(ep config.Endpoint) config.Endpoint {
			ep.API = h.api
			if h.api == config.APIOllama {
				ep.BaseURL = strings.TrimSuffix(ep.BaseURL, "/v1")
			}
			return ep
		}
		cases := []faultCase{
			{name: h.api + "/endless error body", outcome: sample.OutcomeError, kind: "http_500", msg: []string{"500", "overloaded"},
				maxHeap: hostileHeap, endpoint: func(t *testing.T) config.Endpoint {
					return withAPI(serve(t, flood(500, "text/plain", "upstream overloaded: ", "x")))
				},
				check: errorBodyCut},
			{name: h.api + "/endless line", outcome: sample.OutcomeError, kind: sample.ErrStreamError, msg: []string{"SSE line longer than 4 MiB"},
				maxHeap: hostileHeap, endpoint: func(t *testing.T) config.Endpoint {
					return withAPI(serve(t, flood(200, h.ctype, h.lineHead, "x")))
				}},
			{name: h.api + "/endless answer", outcome: sample.OutcomeError, kind: sample.ErrStreamError, msg: []string{"answer chunks with max_tokens 8", "ignores max_tokens"},
				maxHeap: hostileHeap, endpoint: func(t *testing.T) config.Endpoint {
					return withAPI(serve(t, flood(200, h.ctype, "", h.answer)))
				}},
		}
		if h.reasoning != "" {
			cases = append(cases, faultCase{name: h.api + "/endless reasoning", outcome: sample.OutcomeError, kind: sample.ErrStreamError,
				msg: []string{"passed 4 MiB", "max_tokens 8"}, maxHeap: hostileHeap, samples: 1,
				endpoint: func(t *testing.T) config.Endpoint {
					return withAPI(serve(t, flood(200, h.ctype, "", h.reasoning)))
				},
				check: reasoningCut(8, h.reasoning)})
		}
		for _, fc := range cases {
			t.Run(fc.name, func(t *testing.T) {
				ignore := goleak.IgnoreCurrent()
				t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
				runFault(t, fc)
			})
		}
	}
}

// jsonEscaped writes every byte of the ASCII text s as a JSON \u escape.
func jsonEscaped(s string) string {
	var b strings.Builder
	for i := range len(s) {
		fmt.Fprintf(&b, `\u%04x`, s[i])
	}
	return b.String()
}
