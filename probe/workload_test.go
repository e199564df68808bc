package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
	"tokscope/workload"
)

// cacheServer is a scripted server that answers from what it received: prompt_tokens is the
// offline token count of the messages' text plus a fixed chat-template overhead, a prefix
// cache keyed by the first 40 bytes of the prompt reports all but the last token as cached
// on a repeat, the answer has min_tokens (else max_tokens) tokens, and the first token comes
// ttft after the request arrived.
type cacheServer struct {
	*httptest.Server
	ttft time.Duration

	mu       sync.Mutex
	bodies   []map[string]any
	contents []string
	usages   map[string][2]int // response id → prompt, cached tokens as sent
	seen     map[string]bool
}

const templateTokens = 7

func newCacheServer(t *testing.T, ttft time.Duration) *cacheServer {
	cs := &cacheServer{ttft: ttft, usages: map[string][2]int{}, seen: map[string]bool{}}
	cs.Server = httptest.NewServer(cs)
	t.Cleanup(cs.Close)
	return cs
}

func (cs *cacheServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	text := ""
	for _, m := range body["messages"].([]any) {
		switch c := m.(map[string]any)["content"].(type) {
		case string:
			text += c
		case []any:
			for _, p := range c {
				text += p.(map[string]any)["text"].(string)
			}
		}
	}
	n, _ := workload.CountTokens(text)
	prompt := n + templateTokens
	key := text[:min(40, len(text))]
	out := int(num(body["max_tokens"]))
	if v, ok := body["min_tokens"]; ok {
		out = int(num(v))
	}
	cs.mu.Lock()
	cached := 0
	if cs.seen[key] {
		cached = prompt - 1
	}
	cs.seen[key] = true
	id := fmt.Sprintf("chatcmpl-%d", len(cs.bodies))
	cs.bodies = append(cs.bodies, body)
	cs.contents = append(cs.contents, text)
	cs.usages[id] = [2]int{prompt, cached}
	cs.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	send := func(v map[string]any) {
		v["id"] = id
		b, _ := json.Marshal(v)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
		_ = rc.Flush()
	}
	choice := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(choice(map[string]any{"role": "assistant", "content": ""}, nil))
	time.Sleep(time.Until(arrival.Add(cs.ttft)))
	for range out {
		send(choice(map[string]any{"content": " x"}, nil))
	}
	send(choice(map[string]any{}, "length"))
	send(map[string]any{"choices": []any{}, "usage": map[string]any{
		"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out,
		"prompt_tokens_details": map[string]any{"cached_tokens": cached},
	}})
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// received returns what the server received so far, in arrival order.
func (cs *cacheServer) received() (bodies []map[string]any, contents []string, usages map[string][2]int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	usages = make(map[string][2]int, len(cs.usages))
	for k, v := range cs.usages {
		usages[k] = v
	}
	return append([]map[string]any(nil), cs.bodies...), append([]string(nil), cs.contents...), usages
}

func num(v any) float64 { f, _ := v.(float64); return f }

// runWorkload runs n counted requests of ep through a Runner with its workload.
func runWorkload(t *testing.T, ep config.Endpoint, n int) []sample.Sample {
	t.Helper()
	ws, err := workload.ForEndpoints([]config.Endpoint{ep}, 42)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner([]config.Endpoint{ep}, Options{Requests: n, Workloads: ws})
	var out []sample.Sample
	for _, d := range collect(t, r) {
		out = append(out, d.Sample)
	}
	if len(out) != n {
		t.Fatalf("%d samples, want %d", len(out), n)
	}
	return out
}

// TestWorkloadAsReceived: what the server received under --input-tokens, --output-tokens
// and each cache mode, and the Sample's figures against the usage it sent.
func TestWorkloadAsReceived(t *testing.T) {
	cs := newCacheServer(t, 40*time.Millisecond)
	ep := testEndpoint(cs.Server, func(e *config.Endpoint) {
		e.Concurrency, e.Interval = 3, 0
		e.InputTokens = config.TokenLength{N: 120, SD: 30}
		e.OutputTokens = config.TokenLength{N: 12, SD: 3}
		e.Cache = config.CacheBust
	})
	samples := runWorkload(t, ep, 12)

	bodies, contents, usages := cs.received()
	lengths := map[int]bool{}
	for i, c := range contents {
		n, _ := workload.CountTokens(c)
		lengths[n] = true
		if !strings.HasPrefix(c, "[tokscope ") || n < 11 || n > 120+6*30 {
			t.Errorf("request %d: %d tokens: %.50q", i, n, c)
		}
		for j := range i {
			if contents[j][:30] == c[:30] {
				t.Errorf("requests %d and %d share their first 30 bytes under bust", j, i)
			}
		}
		b := bodies[i]
		if b["ignore_eos"] != true || num(b["min_tokens"]) != num(b["max_tokens"]) || num(b["max_tokens"]) < 1 {
			t.Errorf("request %d body: ignore_eos %v min_tokens %v max_tokens %v", i, b["ignore_eos"], b["min_tokens"], b["max_tokens"])
		}
	}
	if len(lengths) < 5 {
		t.Errorf("only %d distinct prompt lengths in 12 draws of 120:30", len(lengths))
	}
	for _, s := range samples {
		u := usages[s.ResponseID]
		if s.PromptTokens != u[0] || s.CachedTokens != 0 || u[1] != 0 || s.Cache != config.CacheBust {
			t.Errorf("%s: prompt %d cached %d cache %q; server sent %v", s.ResponseID, s.PromptTokens, s.CachedTokens, s.Cache, u)
		}
		if reached, ok := s.ReachedTarget(); !ok || !reached || s.OutputTarget != s.Tokens {
			t.Errorf("%s: target %d tokens %d", s.ResponseID, s.OutputTarget, s.Tokens)
		}
		ttft, _ := s.TTFT()
		rate, ok := s.PrefillRate()
		want := float64(u[0]) / ttft.Seconds()
		if !ok || math.Abs(rate-want) > 1e-9*want || ttft < cs.ttft {
			t.Errorf("%s: prefill %.1f tok/s, want %.1f (TTFT %v)", s.ResponseID, rate, want, ttft)
		}
		// The TTFT the server scheduled bounds the prefill rate from above.
		if most := float64(u[0]) / cs.ttft.Seconds(); rate > most {
			t.Errorf("prefill %.1f above the scheduled %.1f", rate, most)
		}
	}

	// reuse, SD 0: identical prompts; from the second on the server's cache serves them.
	cs2 := newCacheServer(t, 20*time.Millisecond)
	ep2 := testEndpoint(cs2.Server, func(e *config.Endpoint) {
		e.Interval = 0
		e.InputTokens = config.TokenLength{N: 64}
		e.Cache = config.CacheReuse
	})
	samples = runWorkload(t, ep2, 4)
	bodies, contents, _ = cs2.received()
	for i, c := range contents {
		if c != contents[0] || strings.HasPrefix(c, "[tokscope") {
			t.Errorf("reuse request %d differs: %.40q", i, c)
		}
		if n, _ := workload.CountTokens(c); n != 64 {
			t.Errorf("reuse request %d has %d tokens, want 64", i, n)
		}
		if _, ok := bodies[i]["ignore_eos"]; ok || num(bodies[i]["max_tokens"]) != 64 {
			t.Errorf("without --output-tokens: body %v", bodies[i])
		}
	}
	for i, s := range samples {
		want := 0
		if i > 0 {
			want = 64 + templateTokens - 1
		}
		if s.Cache != config.CacheReuse || s.PromptTokens != 64+templateTokens || s.CachedTokens != want {
			t.Errorf("reuse sample %d: cache %q prompt %d cached %d, want cached %d", i, s.Cache, s.PromptTokens, s.CachedTokens, want)
		}
		if _, ok := s.ReachedTarget(); ok {
			t.Error("a target without --output-tokens")
		}
		ttft, _ := s.TTFT()
		if rate, ok := s.PrefillRate(); !ok || math.Abs(rate-float64(s.PromptTokens-want)/ttft.Seconds()) > 1e-6 {
			t.Errorf("reuse sample %d: prefill %.1f", i, rate)
		}
	}
}

// TestWorkloadPromptsFile: requests cycle through a prompts file in order, messages and text
// parts as written, each entry's max_tokens in the body.
func TestWorkloadPromptsFile(t *testing.T) {
	set, err := workload.Parse("p.jsonl", strings.NewReader(`{"prompt": "alpha", "max_tokens": 3}
{"messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": [{"type": "text", "text": "beta"}]}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	cs := newCacheServer(t, time.Millisecond)
	ep := testEndpoint(cs.Server, func(e *config.Endpoint) {
		e.Interval, e.Prompts, e.MaxTokens, e.Cache = 0, "p.jsonl", 5, config.CacheReuse
	})
	w, err := workload.New(ep, workload.Options{Prompts: set})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner([]config.Endpoint{ep}, Options{Requests: 3, Workloads: []*workload.Workload{w}})
	collect(t, r)
	bodies, _, _ := cs.received()
	want := []string{
		`[{"content":"alpha","role":"user"}] 3`,
		`[{"content":"sys","role":"system"},{"content":[{"text":"beta","type":"text"}],"role":"user"}] 5`,
		`[{"content":"alpha","role":"user"}] 3`,
	}
	for i, b := range bodies {
		m, _ := json.Marshal(b["messages"])
		if got := fmt.Sprintf("%s %v", m, b["max_tokens"]); got != want[i] {
			t.Errorf("request %d sent %s, want %s", i, got, want[i])
		}
	}
}

// TestRequestFieldsWinOverExtraBody: --output-tokens' fields replace extra_body's own
// ignore_eos and min_tokens; the rest of extra_body stays.
func TestRequestFieldsWinOverExtraBody(t *testing.T) {
	cs := newCacheServer(t, time.Millisecond)
	ep := testEndpoint(cs.Server, func(e *config.Endpoint) {
		e.ExtraBody = map[string]any{"ignore_eos": false, "min_tokens": 1, "temperature": 0}
	})
	w, err := workload.New(ep, workload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(ep)
	t.Cleanup(c.CloseIdleConnections)
	req := w.Next()
	req.MaxTokens, req.MinTokens = 20, 20
	s := c.SendLive(context.Background(), req, Live{})
	bodies, _, _ := cs.received()
	b := bodies[0]
	if b["ignore_eos"] != true || num(b["min_tokens"]) != 20 || num(b["max_tokens"]) != 20 || b["temperature"] != 0.0 {
		t.Errorf("body %v", b)
	}
	if s.OutputTarget != 20 || s.Tokens != 20 || s.Outcome != sample.OutcomeOK {
		t.Errorf("sample: target %d tokens %d outcome %s", s.OutputTarget, s.Tokens, s.Outcome)
	}
}

// TestCachedTokensAbsentIsNotZero: no prompt_tokens_details, or null, is -1; a reported 0
// is 0.
func TestCachedTokensAbsentIsNotZero(t *testing.T) {
	for _, tt := range []struct {
		usage string
		want  int
	}{
		{`{"prompt_tokens":9,"completion_tokens":1}`, -1},
		{`{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":null}`, -1},
		{`{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{}}`, -1},
		{`{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0}}`, 0},
		{`{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":8}}`, 8},
		{`{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":"x"}}`, -1},
	} {
		s := decodeAll(`{"choices":[{"delta":{"content":"a"}}]}`, `{"choices":[],"usage":`+tt.usage+`}`)
		if s.CachedTokens != tt.want || s.PromptTokens != 9 {
			t.Errorf("%s: cached %d prompt %d, want %d", tt.usage, s.CachedTokens, s.PromptTokens, tt.want)
		}
	}
	if s := decodeAll(`{"choices":[{"delta":{"content":"a"}}]}`); s.CachedTokens != -1 {
		t.Errorf("no usage: cached %d", s.CachedTokens)
	}
}

func TestPrefillRateAndE2E(t *testing.T) {
	s := newSample(testEP())
	s.FirstToken = 200 * time.Millisecond
	s.PromptTokens, s.CachedTokens = 1000, 600
	s.Chunks = []sample.Chunk{{At: 50 * time.Millisecond}, {At: 200 * time.Millisecond, Content: 1}, {At: 900 * time.Millisecond}}
	if r, ok := s.PrefillRate(); !ok || r != 2000 {
		t.Errorf("prefill %v %v, want 400 tokens / 0.2 s = 2000", r, ok)
	}
	if d, ok := s.E2E(); !ok || d != 900*time.Millisecond {
		t.Errorf("e2e %v %v", d, ok)
	}
	s.CachedTokens = -1
	if r, _ := s.PrefillRate(); r != 5000 {
		t.Errorf("unreported cache counts as 0: %v", r)
	}
	for _, mod := range []func(*sample.Sample){
		func(s *sample.Sample) { s.CachedTokens = 1000 },
		func(s *sample.Sample) { s.PromptTokens = 0 },
		func(s *sample.Sample) { s.FirstToken = sample.Absent },
	} {
		c := s
		mod(&c)
		if r, ok := c.PrefillRate(); ok {
			t.Errorf("prefill defined (%v) for %+v", r, c)
		}
	}
	empty := newSample(testEP())
	if _, ok := empty.E2E(); ok {
		t.Error("e2e without chunks")
	}
}

// TestRunnerBadPromptsFile: without a workload given, the Runner builds one; when its
// prompts file is bad, every request fails as a "request" error naming file:line, and the
// server receives nothing.
func TestRunnerBadPromptsFile(t *testing.T) {
	path := t.TempDir() + "/p.jsonl"
	if err := os.WriteFile(path, []byte("{\"prompt\": \"a\"}\n{\"promt\": \"b\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := newCacheServer(t, time.Millisecond)
	ep := testEndpoint(cs.Server, func(e *config.Endpoint) { e.Prompts, e.Interval = path, 0 })
	done := collect(t, NewRunner([]config.Endpoint{ep}, Options{Requests: 2}))
	for _, d := range done {
		// file:line:col and the did-you-mean first; the source line and its caret may follow.
		if s := d.Sample; s.ErrorKind != ErrRequest || !strings.HasPrefix(s.ErrorMessage, path+`:2:2: unknown key "promt"; did you mean "prompt"?`) {
			t.Errorf("sample: %s %q", s.ErrorKind, s.ErrorMessage)
		}
	}
	if bodies, _, _ := cs.received(); len(bodies) != 0 || len(done) != 2 {
		t.Errorf("%d requests sent, %d reported", len(bodies), len(done))
	}
}
