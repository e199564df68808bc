package workload

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tokscope/config"
)

const sessDir = "testdata/sessions/"

func loadPool(t *testing.T, spec, format string) *SessionPool {
	t.Helper()
	p, err := LoadSessions(spec, format)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// turnsOf lists an agent's own turns, in order.
func turnsOf(a *Agent) (out []*Turn) {
	for _, st := range a.Steps {
		if st.Turn != nil {
			out = append(out, st.Turn)
		}
	}
	return out
}

func subsOf(a *Agent) (out []*SubAgent) {
	for _, st := range a.Steps {
		if st.Sub != nil {
			out = append(out, st.Sub)
		}
	}
	return out
}

// The three readers on the formats' own published examples, each detected from its content.
func TestSessionsReadPublishedExamples(t *testing.T) {
	p := loadPool(t, sessDir+"agentx_trace_0026.json", "")
	if p.Format != FormatAgentX || len(p.Sessions) != 1 || p.Turns != 3 || p.Sessions[0].BlockSize != 64 {
		t.Fatalf("agentx 0026: format %q, %d sessions, %d turns", p.Format, len(p.Sessions), p.Turns)
	}
	ts := turnsOf(p.Sessions[0].Root)
	if ts[0].In != 15291 || ts[0].Out != 2282 || len(ts[0].Blocks) != 238 || ts[1].Gap != 48*time.Second || ts[1].Stop != "tool_use" {
		t.Errorf("agentx 0026 turns: %+v / %+v", *ts[0], *ts[1])
	}

	p = loadPool(t, sessDir+"agentx_trace_0291_cut.json", "")
	s := p.Sessions[0]
	if s.Turns != 6+5+7 || len(turnsOf(s.Root)) != 6 {
		t.Fatalf("agentx 0291: %d turns, %d of the root", s.Turns, len(turnsOf(s.Root)))
	}
	subs := subsOf(s.Root)
	if len(subs) != 2 || subs[0].Agent.ID != "agent_001" || subs[0].Agent.Depth != 1 || subs[0].Background || !subs[1].Background {
		t.Fatalf("sub-agents: %+v %+v", subs[0], subs[1])
	}
	// The parent's turn after them waits from agent_001's end (1148.013 + 46.656 s) to 1209 s.
	after := turnsOf(s.Root)[4]
	if d := after.Gap - 14331*time.Millisecond; d < -time.Millisecond || d > time.Millisecond || !after.Tool {
		t.Errorf("gap after the sub-agents %v (tool %v), want 14.331 s", after.Gap, after.Tool)
	}
	if subs[0].Start < 47*time.Second || subs[0].Start > 48*time.Second { // 1148.013 − (1085 + 15.64)
		t.Errorf("agent_001 starts %v after the parent's turn", subs[0].Start)
	}

	p = loadPool(t, sessDir+"tracelab_round_trace.jsonl", "")
	if p.Format != FormatTraceLab || len(p.Sessions) != 2 || p.Turns != 19 {
		t.Fatalf("tracelab: %q %d sessions %d turns", p.Format, len(p.Sessions), p.Turns)
	}
	ts = turnsOf(p.Sessions[0].Root)
	if ts[1].Gap != 49*time.Millisecond || ts[2].Gap != 12688*time.Millisecond || !ts[2].Tool || ts[5].Tool {
		t.Errorf("tracelab gaps %v %v tool %v %v", ts[1].Gap, ts[2].Gap, ts[2].Tool, ts[5].Tool)
	}
	// Round 1 keeps floor(29380/64) = 459 blocks of round 0's 504.
	if len(ts[0].Blocks) != 32272/64 || !prefixOf(ts[0].Blocks[:459], ts[1].Blocks) || ts[1].Blocks[459] == ts[0].Blocks[459] {
		t.Errorf("tracelab round 1 does not keep exactly the first 459 blocks of round 0")
	}

	p = loadPool(t, sessDir+"aa_mini_library_01.jsonl", "")
	if p.Format != FormatAA || p.Turns != 6 {
		t.Fatalf("aa: %q %d turns", p.Format, p.Turns)
	}
	ts = turnsOf(p.Sessions[0].Root)
	if ts[1].Gap != 50*time.Millisecond || !ts[1].Tool || ts[0].Out != 256 || len(ts[5].Messages) != 17 {
		t.Errorf("aa turn 2: gap %v tool %v out %d, last turn %d messages", ts[1].Gap, ts[1].Tool, ts[0].Out, len(ts[5].Messages))
	}
	if len(ts[1].Blocks) == 0 || !prefixOf(ts[0].Blocks, ts[1].Blocks) {
		t.Errorf("aa: turn 2 does not begin with turn 1's blocks: %v / %v", ts[0].Blocks, ts[1].Blocks)
	}

	// A directory is a pool of all its files.
	p = loadPool(t, sessDir, "")
	if len(p.Sessions) != 1+1+2+1 {
		t.Errorf("the directory holds %d sessions, want 5", len(p.Sessions))
	}
}

// A bad file is refused whole, with its file:line (JSONL) or its JSON path (AgentX).
func TestSessionsBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := `{"session_id":"a","round_index":0,"input_tokens_total":100,"prefix_tokens":0,"newly_append_tokens":100,"output_tokens":5}`
	cases := []struct {
		name, body, format, want string
	}{
		{"x.json", `{"block_size":64,"requests":[{"t":0,"in":100,"out":5},{"t":1,"in":-3,"out":5}]}`, "", "x.json: requests[1].in: must be a whole number"},
		{"y.json", `{"requests":[{"t":0,"in":100,"out":5,"hash_ids":[1,2]}]}`, "", `requests[0].hash_ids: 2 full blocks of 64 tokens are more than "in" (100)`},
		{"z.json", `{"requests":[{"t":0,"type":"subagent","requests":[{"t":0,"in":1,"out":"many"}]}]}`, "", "z.json: requests[0].requests[0]: not a request object"},
		{"s.json", "{\"requests\":\n[{\"t\":0,\n\"in\":1,,}]}", "", "s.json:3: column 8"},
		{"t.jsonl", good + "\n\n" + `{"session_id":"a","round_index":1,"input_tokens_total":100,"prefix_tokens":200,"newly_append_tokens":0,"output_tokens":5}`, "", `t.jsonl:3: "prefix_tokens" (200) is more than`},
		{"u.jsonl", good + "\n" + good, "", "u.jsonl:2: round_index 0 of session \"a\" after round 0"},
		{"v.jsonl", `{"conversation_id":"c","messages":[{"role":"robot","content":"hi"}],"target_output_tokens":5}`, "", `v.jsonl:1: messages[0]: role "robot"`},
		{"m.jsonl", `{"timestamp":0,"input_length":10,"output_length":2}`, "", "Mooncake trace"},
		{"f.jsonl", good, "agentx", "f.jsonl"},
	}
	for _, c := range cases {
		_, err := LoadSessions(write(c.name, c.body), c.format)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to say %q", c.name, err, c.want)
		}
	}
	if _, err := LoadSessions(filepath.Join(dir, "nothing*.json"), ""); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("an empty glob: %v", err)
	}
	if _, err := LoadSessions(sessDir, "mooncake"); err == nil || !strings.Contains(err.Error(), "agentx, tracelab, aa") {
		t.Errorf("an unknown format: %v", err)
	}
}

func sessionWorkload(t *testing.T, pool *SessionPool, cache string, o SessionOptions) *Workload {
	t.Helper()
	w, err := New(config.Endpoint{Name: "e", Cache: cache}, Options{RunID: "123456789"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.UseSessions(pool, o); err != nil {
		t.Fatal(err)
	}
	return w
}

func commonTokens(t *testing.T, a, b string) int {
	t.Helper()
	c, err := Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	x, _, _ := c.Encode(a)
	y, _, _ := c.Encode(b)
	n := 0
	for n < len(x) && n < len(y) && x[n] == y[n] {
		n++
	}
	return n
}

// Every turn of a published AgentX trace has exactly its recorded length in the offline
// tokenizer, and its recorded output; a context that grows keeps its text, so a perfect
// prefix cache serves all of the previous prompt.
func TestSessionsPromptsExact(t *testing.T) {
	pool := loadPool(t, sessDir+"agentx_trace_0026.json", "")
	w := sessionWorkload(t, pool, config.CacheBust, SessionOptions{})
	run := w.NewSessionRun()
	ts := turnsOf(run.S.Root)
	var reqs []Request
	for i, tr := range ts {
		req := run.Request(tr, SessionTurn{ID: 1, Turn: i + 1}, nil)
		if req.PromptTokens != tr.In || req.MaxTokens != tr.Out || req.MinTokens != tr.Out {
			t.Errorf("turn %d: %d prompt tokens, max %d (recorded %d, %d)", i+1, req.PromptTokens, req.MaxTokens, tr.In, tr.Out)
		}
		reqs = append(reqs, req)
	}
	if got := reqs[0].Session.IdealCached; got != 0 {
		t.Errorf("the first turn's ideal cached prefix is %d, want 0", got)
	}
	// Turn 2 holds turn 1's 238 blocks and, as its block 239, turn 1's 59-token tail.
	if got := reqs[1].Session.IdealCached; got != ts[0].In {
		t.Errorf("turn 2's ideal cached prefix is %d, want all of turn 1 (%d)", got, ts[0].In)
	}
	if n := commonTokens(t, reqs[0].Messages[0].Content, reqs[1].Messages[0].Content); n < ts[0].In-1 {
		t.Errorf("turn 2 shares %d tokens of text with turn 1 (%d long)", n, ts[0].In)
	}
	// Another replay of the same session shares nothing with this one.
	again := w.NewSessionRun().Request(ts[0], SessionTurn{ID: 2, Turn: 1}, nil)
	if n := commonTokens(t, reqs[0].Messages[0].Content, again.Messages[0].Content); n >= 64 || again.Session.IdealCached != 0 {
		t.Errorf("a second replay shares %d tokens (ideal %d) with the first", n, again.Session.IdealCached)
	}
}

// Two turns whose hash ids share a leading run of k share exactly k blocks of text: at least
// k·64 tokens, and less than (k+1)·64.
func TestSessionsBlocksShareExactly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.json")
	body := `{"block_size":64,"requests":[` +
		`{"t":0,"in":300,"out":4,"hash_ids":[1,2,3,4]},` +
		`{"t":1,"in":330,"out":4,"hash_ids":[1,2,3,9,10]},` +
		`{"t":2,"in":200,"out":4,"hash_ids":[7,2,3]},` +
		`{"t":3,"in":300,"out":4,"hash_ids":[1,2,3,4]}]}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	w := sessionWorkload(t, loadPool(t, path, ""), config.CacheReuse, SessionOptions{})
	run := w.NewSessionRun()
	ts := turnsOf(run.S.Root)
	var texts []string
	var ideal []int
	for i, tr := range ts {
		req := run.Request(tr, SessionTurn{Turn: i + 1}, nil)
		if req.PromptTokens != tr.In {
			t.Errorf("turn %d: %d tokens, want %d", i+1, req.PromptTokens, tr.In)
		}
		texts = append(texts, req.Messages[0].Content)
		ideal = append(ideal, req.Session.IdealCached)
	}
	for _, c := range []struct{ a, b, k int }{{0, 1, 3}, {0, 2, 0}, {1, 2, 0}, {0, 3, 4}} {
		n := commonTokens(t, texts[c.a], texts[c.b])
		if n < c.k*64 || n >= (c.k+1)*64 {
			t.Errorf("turns %d and %d share %d tokens, want %d blocks (%d to %d)", c.a+1, c.b+1, n, c.k, c.k*64, (c.k+1)*64-1)
		}
	}
	// Turn 4 repeats turn 1's ids; the 44 tokens past them are new text in both.
	if want := []int{0, 3 * 64, 0, 4 * 64}; ideal[0] != want[0] || ideal[1] != want[1] || ideal[2] != want[2] || ideal[3] != want[3] {
		t.Errorf("ideal cached %v, want %v", ideal, want)
	}
}

func TestSessionsGapPolicy(t *testing.T) {
	cases := []struct {
		spec string
		cap  time.Duration
		in   time.Duration
		want time.Duration
	}{
		{"recorded", DefaultGapCap, 3 * time.Second, 3 * time.Second},
		{"recorded", DefaultGapCap, 264 * time.Second, 10 * time.Second},
		{"none", DefaultGapCap, 3 * time.Second, 0},
		{"scaled:0.5", 0, 30 * time.Second, 15 * time.Second},
	}
	for _, c := range cases {
		p, err := ParseToolTime(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		p.Cap = c.cap
		if got := p.Wait(c.in); got != c.want {
			t.Errorf("%s cap %v: %v waits %v, want %v", c.spec, c.cap, c.in, got, c.want)
		}
	}
	for _, bad := range []string{"scaled:", "scaled:-1", "fast"} {
		if _, err := ParseToolTime(bad); err == nil {
			t.Errorf("--tool-time %q accepted", bad)
		}
	}
}

// Every turn of every published example (sub-agents' included) is built to its recorded
// length exactly, and TraceLab's ideal cached prefix is what the round keeps of the last.
func TestSessionsEveryTurnExact(t *testing.T) {
	w := sessionWorkload(t, loadPool(t, sessDir, ""), config.CacheBust, SessionOptions{})
	for range w.Sessions().Sessions {
		run := w.NewSessionRun()
		var walk func(a *Agent)
		walk = func(a *Agent) {
			for i, tr := range turnsOf(a) {
				req := run.Request(tr, SessionTurn{Turn: i + 1}, nil)
				if tr.Messages == nil && req.PromptTokens != tr.In {
					t.Errorf("%s: %d tokens, want %d", tr.Where, req.PromptTokens, tr.In)
				}
				if run.S.Format == FormatTraceLab && i > 0 {
					prev := turnsOf(a)[i-1]
					if want := min(len(tr.Blocks), prefixLen(prev.Blocks, tr.Blocks)) * 64; req.Session.IdealCached < want {
						t.Errorf("%s: ideal %d, want at least %d", tr.Where, req.Session.IdealCached, want)
					}
				}
			}
			for _, s := range subsOf(a) {
				walk(s.Agent)
			}
		}
		walk(run.S.Root)
	}
}

func prefixLen(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// A context's turns are threaded: a tool-result turn that continues the last is the last
// turn's messages, an assistant tool call and a tool message with the new text; the texts
// together are the turn's text exactly. --tool-messages text sends one user message.
func TestSessionsToolThreading(t *testing.T) {
	pool := loadPool(t, sessDir+"agentx_trace_0026.json", "")
	w := sessionWorkload(t, pool, config.CacheReuse, SessionOptions{})
	run := w.NewSessionRun()
	th := NewThread()
	ts := turnsOf(run.S.Root)
	var all []Request
	for i, tr := range ts {
		all = append(all, run.Request(tr, SessionTurn{Turn: i + 1}, th))
	}
	plain := sessionWorkload(t, pool, config.CacheReuse, SessionOptions{}).NewSessionRun()
	for i, req := range all {
		var joined strings.Builder
		for _, m := range req.Messages {
			joined.WriteString(m.Content)
		}
		if want := plain.Request(ts[i], SessionTurn{Turn: i + 1}, nil).Messages[0].Content; joined.String() != want {
			t.Errorf("turn %d: its messages' texts are not the turn's text", i+1)
		}
	}
	// Turn 3's input is a tool's result (turn 2 stopped on tool_use): turn 2's messages, then
	// the call and its result.
	m := all[2].Messages
	if len(m) != len(all[1].Messages)+2 || m[len(m)-2].Role != "assistant" || len(m[len(m)-2].ToolCalls) != 1 ||
		m[len(m)-1].Role != "tool" || m[len(m)-1].ToolCallID != m[len(m)-2].ToolCalls[0].ID {
		t.Fatalf("turn 3 messages: %+v", roles(m))
	}
	if !ts[2].Tool || ts[1].Tool {
		t.Fatalf("recorded input types: turn 2 tool %v, turn 3 tool %v", ts[1].Tool, ts[2].Tool)
	}
	if len(all[1].Messages) != 2 || all[1].Messages[1].Role != "user" {
		t.Errorf("turn 2 (new user text) messages: %v", roles(all[1].Messages))
	}
	text := sessionWorkload(t, pool, config.CacheReuse, SessionOptions{ToolMessages: ToolMessagesText}).NewSessionRun()
	if got := text.Request(ts[2], SessionTurn{Turn: 3}, NewThread()).Messages; len(got) != 1 || got[0].Role != "user" {
		t.Errorf("--tool-messages text: %v", roles(got))
	}
	// AA: the recorded tool calls and results, as such; as text under --tool-messages text.
	aa := loadPool(t, sessDir+"aa_mini_library_01.jsonl", "")
	last := turnsOf(aa.Sessions[0].Root)[5]
	got := sessionWorkload(t, aa, config.CacheReuse, SessionOptions{}).NewSessionRun().Request(last, SessionTurn{Turn: 6}, nil).Messages
	if got[2].Role != "assistant" || got[2].ToolCalls[0].Name != "search_catalog" || got[3].Role != "tool" || got[3].ToolCallID != "aa_mini_call_1" {
		t.Errorf("aa messages: %v", roles(got))
	}
	got = sessionWorkload(t, aa, config.CacheReuse, SessionOptions{ToolMessages: ToolMessagesText}).NewSessionRun().Request(last, SessionTurn{Turn: 6}, nil).Messages
	if got[3].Role != "user" || !strings.HasPrefix(got[3].Content, "[tool result aa_mini_call_1] ") || len(got[2].ToolCalls) != 0 {
		t.Errorf("aa as text: %v", roles(got))
	}
}

func roles(m []Message) []string {
	var out []string
	for _, x := range m {
		out = append(out, fmt.Sprintf("%s(%d calls, %q)", x.Role, len(x.ToolCalls), x.ToolCallID))
	}
	return out
}

// --sessions-scale shrinks shared runs in proportion: turns sharing 459 of 504 blocks share
// about 459·F of theirs, not all of a short prefix.
func TestSessionsScaleKeepsProportions(t *testing.T) {
	pool := loadPool(t, sessDir+"tracelab_round_trace.jsonl", "")
	w := sessionWorkload(t, pool, config.CacheBust, SessionOptions{Scale: 0.1})
	run := w.NewSessionRun()
	ts := turnsOf(run.S.Root)
	a := run.Request(ts[0], SessionTurn{Turn: 1}, nil)
	b := run.Request(ts[1], SessionTurn{Turn: 2}, nil)
	if want := int(math.Round(3227.2)); a.PromptTokens != want {
		t.Errorf("round 1 scaled: %d tokens, want %d", a.PromptTokens, want)
	}
	// Round 2 keeps 459 of round 1's blocks: scaled, blocks j < 45.9 → 46 of 50.
	if got := b.Session.IdealCached; got != 46*64 {
		t.Errorf("scaled round 2: ideal %d, want %d (46 blocks)", got, 46*64)
	}
}

// --session-start random: each replay starts at a root turn drawn from the seed and its
// number (the same seed, the same starts; first is every replay's first turn), counts the
// turns from there, sub-agents after it included, and its first prompt is the whole context
// so far, none of it in the ideal cache.
func TestSessionsRandomStart(t *testing.T) {
	pool := loadPool(t, "testdata/sessions/agentx_trace_0291_cut.json", "")
	starts := func(seed uint64, start string) (out []int) {
		w, err := New(config.Endpoint{Name: "e", Cache: config.CacheBust}, Options{Seed: seed, RunID: "1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.UseSessions(pool, SessionOptions{Start: start, Scale: 0.01}); err != nil {
			t.Fatal(err)
		}
		for range 12 {
			run := w.NewSessionRun()
			steps := run.Steps()
			if countTurns(&Agent{Steps: steps}) != run.Turns() || steps[0].Turn == nil {
				t.Fatalf("a replay of %d steps says %d turns, or starts with a sub-agent", len(steps), run.Turns())
			}
			req := run.Request(steps[0].Turn, SessionTurn{Turn: 1}, NewThread())
			if want := int(math.Round(float64(steps[0].Turn.In) * 0.01)); req.PromptTokens != want || req.Session.IdealCached != 0 || len(req.Messages) != 1 {
				t.Errorf("first prompt %d tokens in %d messages, ideal %d; want the context so far, %d tokens in one, nothing cached",
					req.PromptTokens, len(req.Messages), req.Session.IdealCached, want)
			}
			if req.Session.SessionTurns != run.Turns() {
				t.Errorf("the turn says its session has %d turns, the replay sends %d", req.Session.SessionTurns, run.Turns())
			}
			out = append(out, run.Turns())
		}
		return out
	}
	first := starts(1, "")
	for _, n := range first {
		if n != 18 {
			t.Fatalf("from the first turn: %v turns, want 18 each", first)
		}
	}
	a, b, c := starts(1, SessionStartRandom), starts(1, SessionStartRandom), starts(2, SessionStartRandom)
	if !slices.Equal(a, b) {
		t.Errorf("the same seed started at %v, then %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 both started at %v", a)
	}
	distinct := map[int]bool{}
	for _, n := range a {
		distinct[n] = true
	}
	if len(distinct) < 3 {
		t.Errorf("12 replays started at only %d places (%v)", len(distinct), a)
	}
}
