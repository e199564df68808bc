package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
	"tokscope/sim"
	"tokscope/workload"
)

// bodyTap is a reverse proxy in front of the simulator that keeps every request body the
// simulator received, in arrival order.
type bodyTap struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func newBodyTap(t *testing.T, target string) (*bodyTap, *httptest.Server) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tap := &bodyTap{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		var body map[string]any
		if json.Unmarshal(raw, &body) == nil {
			tap.mu.Lock()
			tap.bodies = append(tap.bodies, body)
			tap.mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return tap, srv
}

// turnsOf are the texts a request body sent, one per message in order (completions: the
// whole prompt as one), with their roles.
func turnsOf(body map[string]any) (roles, texts []string) {
	if p, ok := body["prompt"].(string); ok {
		return []string{"prompt"}, []string{p}
	}
	if s, ok := body["system"].(string); ok {
		roles, texts = append(roles, "system"), append(texts, s)
	}
	list, _ := body["messages"].([]any)
	if in, ok := body["input"].([]any); ok {
		list = in
	}
	for _, m := range list {
		mm := m.(map[string]any)
		text, _ := mm["content"].(string)
		roles, texts = append(roles, mm["role"].(string)), append(texts, text)
	}
	return roles, texts
}

// TestConversationThreading: under --turns 3, every API's turn k carries the earlier turns'
// user messages and the replies exactly as tokscope received them (answer text, reasoning
// excluded), behind the shared prefix; the conversation's tag is its first turn's; and the
// simulator's prefix cache serves the later turns.
func TestConversationThreading(t *testing.T) {
	p := sim.Profile{Name: "cv", Model: "m", TTFT: 5 * time.Millisecond, TokensPerSecond: 2000, ReasoningTokens: 3,
		RoleChunk: true, PrefixCache: true, MaxTokens: 33, Seed: 3}
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	for _, api := range sim.APIs {
		t.Run(api, func(t *testing.T) {
			base := srv.BaseURLFor("cv", api)
			tap, proxy := newBodyTap(t, srv.URL())
			ep := config.Endpoint{Name: api, BaseURL: proxy.URL + strings.TrimPrefix(base, srv.URL()), Model: "m", API: api,
				MaxTokens: 33, Concurrency: 2, Timeout: 10 * time.Second, Stall: 5 * time.Second,
				InputTokens: config.TokenLength{N: 40}, Cache: config.CacheBust, Turns: 3, SharedPrefix: 48}
			checkThreading(t, tap, ep)
		})
	}
}

func checkThreading(t *testing.T, tap *bodyTap, ep config.Endpoint) {
	ws, err := workload.ForEndpoints([]config.Endpoint{ep}, 7)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner([]config.Endpoint{ep}, Options{Requests: 6, Workloads: ws, Deltas: true})
	_, events := collectAll(t, r, t.Context())
	if r.DroppedDeltas() != 0 {
		t.Fatalf("%d deltas dropped: the replies cannot be checked", r.DroppedDeltas())
	}
	answers := map[uint64]string{}
	byTurn := map[[2]uint64]sample.Sample{}
	for _, ev := range events {
		switch e := ev.(type) {
		case *sample.Delta:
			if !e.Reasoning {
				answers[e.Seq] += e.Text
			}
		case *sample.Done:
			if !e.Sample.Warmup {
				byTurn[[2]uint64{e.Sample.Conversation, uint64(e.Sample.Turn)}] = e.Sample
			}
		}
	}
	if len(byTurn) != 6 {
		t.Fatalf("%d counted requests by conversation and turn, want 6: %v", len(byTurn), byTurn)
	}
	for c := uint64(1); c <= 2; c++ {
		for k := uint64(1); k <= 3; k++ {
			s, ok := byTurn[[2]uint64{c, k}]
			if !ok || s.Outcome != sample.OutcomeOK {
				t.Fatalf("conversation %d turn %d: %+v", c, k, s.Outcome)
			}
			if ep.API == config.APIOllama {
				continue // prompt_eval_count is the whole prompt, cached or not: no cached count
			}
			if k > 1 && s.CachedTokens <= 0 {
				t.Errorf("conversation %d turn %d: cached %d of %d prompt tokens, want a cache hit", c, k, s.CachedTokens, s.PromptTokens)
			}
			// The simulator keeps the reply's blocks (as a server keeps the KV it generated):
			// re-sent exactly, the whole earlier turn is served, more than its prompt alone.
			if prev := byTurn[[2]uint64{c, k - 1}]; k > 1 && ep.API != config.APICompletions && s.CachedTokens <= prev.PromptTokens {
				t.Errorf("conversation %d turn %d: cached %d, not beyond the previous prompt's %d", c, k, s.CachedTokens, prev.PromptTokens)
			}
			if k > 1 && s.PromptTokens <= byTurn[[2]uint64{c, k - 1}].PromptTokens {
				t.Errorf("conversation %d turn %d: prompt %d not longer than the turn before", c, k, s.PromptTokens)
			}
		}
	}
	// Every counted body: find the turn it is by its history, and check its replies.
	tap.mu.Lock()
	bodies := tap.bodies
	tap.mu.Unlock()
	checked := 0
	for _, b := range bodies {
		roles, texts := turnsOf(b)
		if ep.API == config.APICompletions {
			checked += checkTranscript(t, texts[0], byTurn, answers)
			continue
		}
		if roles[0] != "system" || texts[0] == "" {
			t.Errorf("no shared prefix first: %v", roles)
		}
		var replies []string
		for i, role := range roles {
			if role == "assistant" {
				replies = append(replies, texts[i])
			}
		}
		if len(replies) == 0 {
			continue
		}
		checked += matchReplies(t, texts[1], replies, byTurn, answers)
	}
	if checked != 6 {
		t.Errorf("%d replies checked, want 6 (2 conversations × (1 + 2))", checked)
	}
}

// matchReplies finds the conversation whose first turn began with first and checks the body's
// replies against the answers streamed to its turns 1, 2, ….
func matchReplies(t *testing.T, first string, replies []string, byTurn map[[2]uint64]sample.Sample, answers map[uint64]string) int {
	t.Helper()
	if !strings.HasPrefix(first, "[tokscope ") {
		t.Errorf("the conversation's first message lost its tag: %.40q", first)
	}
	for c := uint64(1); c <= 2; c++ {
		for k, got := range replies {
			s := byTurn[[2]uint64{c, uint64(k + 1)}]
			if got == answers[s.Seq] && got != "" {
				if k == len(replies)-1 {
					return len(replies)
				}
				continue
			}
			if k > 0 {
				t.Errorf("conversation %d: reply %d sent %q, streamed %q", c, k+1, got, answers[s.Seq])
			}
			break
		}
	}
	t.Errorf("no conversation streamed the replies %q (first message %.40q)", replies, first)
	return 0
}

// checkTranscript checks a completions prompt: every earlier reply follows "Assistant:".
func checkTranscript(t *testing.T, prompt string, byTurn map[[2]uint64]sample.Sample, answers map[uint64]string) int {
	t.Helper()
	n := strings.Count(prompt, "User: ")
	if !strings.HasSuffix(prompt, "\n\nAssistant:") || n < 1 {
		t.Errorf("not a transcript: %.80q…", prompt)
		return 0
	}
	if !strings.Contains(prompt, "\n\nUser: [tokscope ") || strings.HasPrefix(prompt, "User: ") {
		t.Errorf("no shared prefix before the tagged first turn: %.80q…", prompt)
	}
	found := 0
	for k := uint64(1); k < uint64(n); k++ {
		for c := uint64(1); c <= 2; c++ {
			a := answers[byTurn[[2]uint64{c, k}].Seq]
			if a != "" && strings.Contains(prompt, "Assistant:"+a+"\n\nUser: ") {
				found++
				break
			}
		}
	}
	if found < n-1 {
		t.Errorf("transcript of %d turns carries %d of the earlier replies", n, found)
	}
	return found
}

// TestTraceSchedule: a trace replayed open loop sends request k at its timestamp (here at
// 4× speed), with its own lengths, whatever order the streams take the arrivals in; a trace
// faster than one stream shows its backlog as client queue.
func TestTraceSchedule(t *testing.T) {
	p := sim.Profile{Name: "tr", Model: "m", TTFT: 5 * time.Millisecond, TokensPerSecond: 2000, PrefixCache: true, Seed: 5}
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	var lines []string
	stamps := []int{0, 200, 400, 400, 600, 1000, 1040}
	for i, ms := range stamps {
		lines = append(lines, fmt.Sprintf(`{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [1, %d]}`, ms, 600+10*i, 2+i, 100+i))
	}
	path := t.TempDir() + "/t.jsonl"
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	tr, err := workload.LoadTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	ep := config.Endpoint{Name: "tr", BaseURL: srv.BaseURL("tr"), Model: "m", MaxTokens: 8, Concurrency: 4,
		Timeout: 10 * time.Second, Stall: 5 * time.Second, Cache: config.CacheBust}
	ws, err := workload.ForEndpoints([]config.Endpoint{ep}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws[0].UseTrace(tr); err != nil {
		t.Fatal(err)
	}
	sched := tr.Schedule(4)
	r := NewRunner([]config.Endpoint{ep}, Options{Requests: len(sched), Workloads: ws, Schedule: sched, QueueLimit: len(sched), Warmup: 1})
	var samples []sample.Sample
	for _, d := range collect(t, r) {
		if !d.Sample.Warmup {
			samples = append(samples, d.Sample)
		}
	}
	if len(samples) != len(stamps) {
		t.Fatalf("%d requests, want %d", len(samples), len(stamps))
	}
	var first time.Time
	for _, s := range samples {
		if first.IsZero() || s.Start.Add(-s.Queue).Before(first) {
			first = s.Start.Add(-s.Queue)
		}
	}
	// Tolerance: a few ms on a quiet machine; 50 ms for a loaded 2-core one under -race, where
	// a timer can fire tens of ms late. The failures it is for are far larger: a schedule not
	// sped up 4× puts the last requests 150-780 ms late.
	const tol = 50 * time.Millisecond
	seen := map[int]bool{}
	var worst time.Duration
	defer func() { t.Logf("worst send error (t0 − timestamp, queue included) %v", worst) }()
	for _, s := range samples {
		k := s.OutputTarget - 2 // output_length 2+k names the trace line
		if k < 0 || k >= len(stamps) || seen[k] {
			t.Fatalf("a request with output target %d", s.OutputTarget)
		}
		seen[k] = true
		want := first.Add(sched[k])
		if late := s.Start.Sub(want); late < -2*time.Millisecond || late > tol+s.Queue {
			t.Errorf("request %d sent %v after its timestamp (queue %v)", k, late, s.Queue)
		}
		worst = max(worst, s.Start.Sub(want).Abs())
		if arrival := s.Start.Add(-s.Queue); arrival.Sub(want).Abs() > tol {
			t.Errorf("request %d arrived %v from its timestamp", k, arrival.Sub(want))
		}
		if s.Tokens != 2+k {
			t.Errorf("request %d: output %d tokens, trace %d", k, s.Tokens, 2+k)
		}
		// Every line shares hash id 1: after the first, the simulator's cache serves that block.
		if k > 0 && s.CachedTokens <= 0 {
			t.Errorf("request %d: cached %d of %d prompt tokens, want the shared block", k, s.CachedTokens, s.PromptTokens)
		}
	}
}
