package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// post sends body to a profile's path and returns the status, content type and whole body.
func post(t *testing.T, url, body string) (int, string, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// Each API's stream has the framing and usage shapes of the captures (llama-server b10470,
// Ollama 0.17.4): events in order, reasoning before the answer, the API's end and usage.
func TestAPIStreams(t *testing.T) {
	s, err := Start(Options{}, Profile{Name: "p", TokensPerSecond: 2000, ReasoningTokens: 2, RoleChunk: true, PrefixCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msgs := `"messages":[{"role":"user","content":"hi there"}]`
	for _, tc := range []struct {
		api, path, body, ctype string
		want                   []string // in order
	}{
		{APICompletions, "/p/v1/completions", `{"prompt":"hi there","max_tokens":4,"stream":true,"stream_options":{"include_usage":true}}`, "text/event-stream",
			[]string{`"object":"text_completion"`, `"text":"` + Text(0, 1) + `"`, `"text":"` + Text(3, 1) + `"`, `"finish_reason":"length"`,
				`"choices":[],"usage":{"prompt_tokens":6,"completion_tokens":4,`, `"completion_tokens_details":{"reasoning_tokens":0}`, "data: [DONE]"}},
		{APIResponses, "/p/v1/responses", `{"input":"hi there","max_output_tokens":4,"stream":true}`, "text/event-stream",
			[]string{"event: response.created", "event: response.in_progress", `"type":"reasoning"`, "event: response.reasoning_text.delta",
				`"type":"message"`, `"delta":"` + Text(2, 1) + `"`, "event: response.incomplete", `"reason":"max_output_tokens"`,
				`"usage":{"input_tokens":6,"input_tokens_details":{"cached_tokens":0},"output_tokens":4,"output_tokens_details":{"reasoning_tokens":2}`}},
		{APIAnthropic, "/p/v1/messages", `{"system":"be brief",` + msgs + `,"max_tokens":4,"stream":true}`, "text/event-stream",
			[]string{"event: message_start", `"input_tokens":12`, "event: ping", `"content_block":{"type":"thinking"`, `"type":"thinking_delta","thinking":"` + Text(0, 1),
				"event: content_block_stop", `"content_block":{"type":"text"`, `"type":"text_delta","text":"` + Text(2, 1),
				`"stop_reason":"max_tokens"`, `"usage":{"input_tokens":12,"cache_read_input_tokens":0,"output_tokens":4}`, "event: message_stop"}},
		{APIOllama, "/p/api/chat", `{` + msgs + `,"options":{"num_predict":4}}`, "application/x-ndjson",
			[]string{`"thinking":"` + Text(0, 1), `"content":"` + Text(2, 1), `"done":true,"done_reason":"length"`, `"prompt_eval_count":6`, `"eval_count":4`}},
	} {
		status, ctype, body := post(t, s.URL()+tc.path, tc.body)
		if status != http.StatusOK || ctype != tc.ctype {
			t.Fatalf("%s: %d %s: %s", tc.api, status, ctype, body)
		}
		rest := body
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: %q missing or out of order in\n%s", tc.api, w, body)
				break
			}
			rest = rest[i+len(w):]
		}
		if tc.api == APIOllama {
			for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
				if !json.Valid([]byte(line)) {
					t.Errorf("ollama: not a JSON line: %q", line)
				}
			}
		}
	}
}

// Each API's errors have its shape; Ollama's /api/tags lists the model; stream: false is
// refused on the APIs that simulate streams only.
func TestAPIErrorsAndTags(t *testing.T) {
	s, err := Start(Options{}, Profile{Name: "p", Model: "m:latest", TokensPerSecond: 100, Rate429: 1, RetryAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for path, want := range map[string]string{
		"/p/v1/messages":  `{"type":"error","error":{"type":"rate_limit_error","message":"Rate limit reached (simulated)"}}`,
		"/p/api/chat":     `{"error":"Rate limit reached (simulated)"}`,
		"/p/v1/responses": `{"error":{"message":"Rate limit reached (simulated)","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
	} {
		status, _, body := post(t, s.URL()+path, `{"messages":[],"input":"x","stream":true}`)
		if status != http.StatusTooManyRequests || strings.TrimSpace(body) != want {
			t.Errorf("%s: %d %s", path, status, body)
		}
	}
	if status, _, body := post(t, s.URL()+"/p/v1/messages", `{"messages":[],"stream":false}`); status != http.StatusBadRequest ||
		!strings.Contains(body, "invalid_request_error") {
		t.Errorf("stream false: %d %s", status, body)
	}
	resp, err := http.Get(s.BaseURLFor("p", APIOllama) + "/api/tags")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tags struct{ Models []struct{ Name string } }
	if err := json.NewDecoder(resp.Body).Decode(&tags); err != nil || len(tags.Models) != 1 || tags.Models[0].Name != "m:latest" {
		t.Errorf("tags %+v %v", tags, err)
	}
}
