package sim

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Each API's tool calls and results are read as what they are (a call's name and arguments,
// a result's text), whatever their shape, and the request log keeps them; with the cl100k
// tokenizer the prompt counts cl100k tokens, and a repeated prompt's cached tokens are its
// whole blocks.
func TestSeenToolMessagesPerAPI(t *testing.T) {
	apis := []string{APIChat, APIOllama, APIAnthropic, APIResponses}
	var profiles []Profile
	for _, api := range apis { // a profile each: a cache each
		profiles = append(profiles, Profile{Name: api, TTFT: time.Millisecond, TokensPerSecond: 5000, PrefixCache: true,
			PrefixBlockTokens: 4, Tokenizer: TokenizerCl100k})
	}
	srv, err := Start(Options{LogRequests: true}, profiles...)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const result = "the tests passed"
	bodies := map[string]string{
		APIChat: `{"stream":true,"max_tokens":2,"messages":[{"role":"user","content":"run the tests"},` +
			`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"cmd\":\"go test\"}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"` + result + `"}]}`,
		APIOllama: `{"options":{"num_predict":2},"messages":[{"role":"user","content":"run the tests"},` +
			`{"role":"assistant","content":"","tool_calls":[{"function":{"name":"bash","arguments":{"cmd":"go test"}}}]},` +
			`{"role":"tool","content":"` + result + `"}]}`,
		APIAnthropic: `{"stream":true,"max_tokens":2,"messages":[{"role":"user","content":"run the tests"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"bash","input":{"cmd":"go test"}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"` + result + `"}]}]}`,
		APIResponses: `{"stream":true,"max_output_tokens":2,"input":[{"role":"user","content":"run the tests"},` +
			`{"type":"function_call","call_id":"c1","name":"bash","arguments":"{\"cmd\":\"go test\"}"},` +
			`{"type":"function_call_output","call_id":"c1","output":"` + result + `"}]}`,
	}
	for _, api := range apis {
		base := srv.BaseURLFor(api, api)
		path := map[string]string{APIChat: "/chat/completions", APIOllama: "/api/chat", APIAnthropic: "/messages", APIResponses: "/responses"}[api]
		for range 2 {
			resp, err := http.Post(base+path, "application/json", strings.NewReader(bodies[api]))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s: status %d", api, resp.StatusCode)
			}
		}
	}
	var seen []Seen
	for _, api := range apis {
		seen = append(seen, srv.Seen(api)...)
	}
	if len(seen) != 8 {
		t.Fatalf("%d requests logged, want 8", len(seen))
	}
	for i, s := range seen {
		api := s.API
		got := make([]string, 0, 3)
		for _, m := range s.Messages {
			for _, p := range m.Parts {
				got = append(got, fmt.Sprintf("%s:%s:%s:%d", m.Role, p.Kind, p.Name, p.Tokens))
			}
		}
		// cl100k: "run the tests" 3 tokens, {"cmd":"go test"} 6, "the tests passed" 3.
		resultRole := map[string]string{APIAnthropic: "user"}[api]
		if resultRole == "" {
			resultRole = "tool"
		}
		want := "user:text::3 assistant:tool_call:bash:6 " + resultRole + ":tool_result::3"
		if strings.Join(got, " ") != want {
			t.Errorf("%s: received %s, want %s", api, strings.Join(got, " "), want)
		}
		// 3 messages of 4 template tokens, the texts (6) and the call (bash: 1, arguments: 6).
		if s.PromptTokens != 12+6+7 || s.PromptText != 6 {
			t.Errorf("%s: prompt %d tokens (%d text), want 25 (6)", api, s.PromptTokens, s.PromptText)
		}
		wantCached := 0
		if i%2 == 1 {
			wantCached = 24 // the repeat: 6 whole blocks of 4, never the last token
		}
		if s.CachedTokens != wantCached || s.CachedBlocks != wantCached/4 || s.End.Before(s.Arrival) || s.End.IsZero() {
			t.Errorf("%s: cached %d (%d blocks), arrival %v end %v; want %d", api, s.CachedTokens, s.CachedBlocks, s.Arrival, s.End, wantCached)
		}
		if i%2 == 1 && s.CachedText != 5 { // the last block holds "passed": uncached
			t.Errorf("%s: %d of the cached tokens are text, want 5", api, s.CachedText)
		}
	}
}
