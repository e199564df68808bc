package probe

import (
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
)

// The server's own clock in real llama-server and Ollama streams decodes to what the capture
// says, exactly (the JSON's decimal digits, Ollama's nanoseconds over 1e6).
func TestCaptureServerTiming(t *testing.T) {
	t.Parallel()
	llama := func(ttft, decode, n, prompt, cached sample.Figure) sample.ServerTiming {
		w := sample.NoServerTiming("llamacpp")
		w.TTFTms, w.DecodeMs, w.DecodeTokens, w.PromptTokens, w.CachedTokens = ttft, decode, n, prompt, cached
		return w
	}
	ollama := sample.NoServerTiming("ollama")
	ollama.LoadMs, ollama.TTFTms, ollama.DecodeMs = 2.793584, 2.793584+0.503359, 13.951762
	ollama.DecodeTokens, ollama.PromptTokens = 8, 4
	cases := []struct {
		file, api string
		want      *sample.ServerTiming
	}{
		{"llamacpp-b10470/chat-completions.sse", config.APIChat, ptr(llama(3.201, 1.162, 5, 1, 42))},
		{"llamacpp-b10470/completions.sse", config.APICompletions, ptr(llama(13.296, 4.877, 5, 5, 0))},
		{"llamacpp-b10470/responses.sse", config.APIResponses, ptr(llama(1.462, 1.138, 5, 42, 1))},
		{"llamacpp-b10470/anthropic-messages.sse", config.APIAnthropic, nil}, // none in this API
		{"ollama-0.17.4/api-chat.ndjson", config.APIOllama, &ollama},
		{"ollama-0.17.4/v1-chat-completions.sse", config.APIChat, nil},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			_, c := captureServer(t, tc.file, tc.api)
			s := ask(t.Context(), c, "hi", Live{})
			outcome(t, s, sample.OutcomeOK, "")
			switch {
			case tc.want == nil && s.Server != nil:
				t.Fatalf("server timing %+v, want none", *s.Server)
			case tc.want == nil:
				return
			case s.Server == nil:
				t.Fatalf("no server timing, want %+v", *tc.want)
			case *s.Server != *tc.want:
				t.Fatalf("server timing\n %+v\nwant\n %+v", *s.Server, *tc.want)
			}
			out, ok := s.OutsideMs()
			ttft, _ := s.TTFT()
			if !ok || out != float64(ttft)/1e6-float64(tc.want.TTFTms) {
				t.Errorf("outside %v (%v), want client TTFT %v − %v", out, ok, ttft, tc.want.TTFTms)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// include_metrics goes only to a server known to be vLLM, and only on chat and completions:
// another server, or vLLM before it was recognised, never receives the field.
func TestIncludeMetricsOnlyToVLLM(t *testing.T) {
	t.Parallel()
	for _, api := range []string{config.APIChat, config.APICompletions, config.APIResponses, config.APIAnthropic} {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			file := "llamacpp-b10470/chat-completions.sse"
			switch api {
			case config.APICompletions:
				file = "llamacpp-b10470/completions.sse"
			case config.APIResponses:
				file = "llamacpp-b10470/responses.sse"
			case config.APIAnthropic:
				file = "llamacpp-b10470/anthropic-messages.sse"
			}
			g, c := captureServer(t, file, api)
			outcome(t, ask(t.Context(), c, "hi", Live{}), sample.OutcomeOK, "")
			c.MarkVLLM()
			outcome(t, ask(t.Context(), c, "hi", Live{}), sample.OutcomeOK, "")
			reqs := g.requests()
			if _, sent := reqs[0].body["include_metrics"]; sent {
				t.Errorf("include_metrics sent to a server not known to be vLLM: %v", reqs[0].body)
			}
			v, sent := reqs[1].body["include_metrics"]
			wantSent := api == config.APIChat || api == config.APICompletions
			if sent != wantSent || (sent && v != true) {
				t.Errorf("known vLLM, %s: include_metrics %v (sent %v), want sent %v", api, v, sent, wantSent)
			}
		})
	}
}

// vLLM's metrics object on the last chunk decodes exactly; its own tokens_per_second is the
// server decode rate.
func TestVLLMMetricsDecode(t *testing.T) {
	t.Parallel()
	last := `data: {"id":"chatcmpl-v","choices":[],"usage":{"prompt_tokens":42,"completion_tokens":3,"total_tokens":45},` +
		`"metrics":{"time_to_first_token_ms":85.21,"generation_time_ms":1240.53,"queue_time_ms":12.34,"mean_itl_ms":9.1,"tokens_per_second":103.27}}` + "\n\n"
	evs := []event{
		{5 * time.Millisecond, `data: {"id":"chatcmpl-v","choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\n"},
		{10 * time.Millisecond, `data: {"id":"chatcmpl-v","choices":[{"index":0,"delta":{"content":"b"}}]}` + "\n\n"},
		{15 * time.Millisecond, `data: {"id":"chatcmpl-v","choices":[{"index":0,"delta":{"content":"c"},"finish_reason":"stop"}]}` + "\n\n"},
		{20 * time.Millisecond, last},
		{21 * time.Millisecond, "data: [DONE]\n\n"},
	}
	g := newGT(t, fixed(script{contentType: "text/event-stream", events: evs}))
	c := NewClient(testEndpoint(g.Server, func(*config.Endpoint) {}))
	t.Cleanup(c.CloseIdleConnections)
	s := ask(t.Context(), c, "hi", Live{})
	outcome(t, s, sample.OutcomeOK, "")
	want := sample.NoServerTiming("vllm")
	want.TTFTms, want.DecodeMs, want.QueueMs, want.DecodeTPS = 85.21, 1240.53, 12.34, 103.27
	if s.Server == nil || *s.Server != want {
		t.Fatalf("server timing %+v, want %+v", s.Server, want)
	}
	if r, ok := s.Server.DecodeRate(); !ok || r != 103.27 {
		t.Errorf("decode rate %v", r)
	}
}
