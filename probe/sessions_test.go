package probe

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
	"tokscope/sim"
	"tokscope/workload"
)

// sessionRun replays the sessions of spec against the simulator (block-level prefix cache)
// and returns the counted samples in the order they finished.
func sessionRun(t *testing.T, spec string, o workload.SessionOptions, n, requests int) []sample.Sample {
	t.Helper()
	p := sim.Profile{Name: "ag", Model: "m", TTFT: 3 * time.Millisecond, TokensPerSecond: 4000,
		PrefixCache: true, PrefixBlockTokens: 16, KVCacheTokens: 1 << 20, Seed: 5}
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ep := config.Endpoint{Name: "ag", BaseURL: srv.BaseURLFor("ag", config.APIChat), Model: "m", MaxTokens: 16,
		Concurrency: n, Timeout: 20 * time.Second, Stall: 10 * time.Second, Cache: config.CacheBust}
	ws, err := workload.ForEndpoints([]config.Endpoint{ep}, 1)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := workload.LoadSessions(spec, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws[0].UseSessions(pool, o); err != nil {
		t.Fatal(err)
	}
	r := NewRunner([]config.Endpoint{ep}, Options{Requests: requests, Workloads: ws})
	samples, _ := collectAll(t, r, t.Context())
	var out []sample.Sample
	for _, d := range samples {
		if !d.Sample.Warmup {
			out = append(out, d.Sample)
		}
	}
	return out
}

// A session with sub-agents: every turn is sent once, in its context's order; the first
// sub-agent's turns end before the parent's next turn begins (joined), the second runs on
// in the background (the trace shows it still running then); each turn leaves after its
// recorded gap under the policy, within a few ms; the ideal cache serves every later turn
// of a context whole or nearly, and the simulator's block cache serves some of it.
func TestSessionsReplaySubagents(t *testing.T) {
	gaps := workload.GapPolicy{Scale: 0.002, Cap: 10 * time.Second} // 48 s → 96 ms
	got := sessionRun(t, "../workload/testdata/sessions/agentx_trace_0291_cut.json",
		workload.SessionOptions{Gaps: gaps, Scale: 0.01}, 1, 18)
	if len(got) != 18 {
		t.Fatalf("%d turns sent, want the session's 18", len(got))
	}
	byCtx := map[uint64][]sample.Sample{}
	for _, s := range got {
		if s.Session == nil || s.Outcome != sample.OutcomeOK {
			t.Fatalf("sample %d: session %v outcome %s %s", s.Seq, s.Session, s.Outcome, s.ErrorMessage)
		}
		byCtx[s.Session.ID] = append(byCtx[s.Session.ID], s)
	}
	if len(byCtx) != 3 || len(byCtx[1]) != 6 || len(byCtx[2]) != 5 || len(byCtx[3]) != 7 {
		t.Fatalf("contexts %d, turns %d/%d/%d, want 3 contexts of 6, 5 and 7", len(byCtx), len(byCtx[1]), len(byCtx[2]), len(byCtx[3]))
	}
	for id, ss := range byCtx {
		sort.Slice(ss, func(i, j int) bool { return ss[i].Start.Before(ss[j].Start) })
		for k, s := range ss {
			if s.Session.Turn != k+1 {
				t.Errorf("context %d: turn %d sent as %d", id, s.Session.Turn, k+1)
			}
		}
		if id > 1 && (ss[0].Session.Parent != 1 || ss[0].Session.Depth != 1) {
			t.Errorf("sub-agent %d: parent %d depth %d", id, ss[0].Session.Parent, ss[0].Session.Depth)
		}
	}
	end := func(s sample.Sample) time.Time { return s.Start.Add(s.End) }
	parentNext := byCtx[1][4] // the parent's turn after the sub-agents
	if last := byCtx[2][4]; end(last).After(parentNext.Start) {
		t.Errorf("agent_001 ended %v after the parent's next turn began: not joined", end(last).Sub(parentNext.Start))
	}
	// Gaps: the wait before each turn of the parent is its recorded gap under the policy.
	pool, _ := workload.LoadSessions("../workload/testdata/sessions/agentx_trace_0291_cut.json", "")
	var want []time.Duration
	for _, st := range pool.Sessions[0].Root.Steps {
		if st.Turn != nil {
			want = append(want, gaps.Wait(st.Turn.Gap))
		}
	}
	// agent_002 runs in the background: the parent's next turn does not wait for it. That shows
	// when agent_002 ends after the parent is free to go on (agent_001's end plus the recorded
	// gap), as on a quiet machine: the parent must then go on before agent_002's end. (Under a
	// load of 7, agent_001 once ran long enough for agent_002 to end first: nothing to tell.)
	free := end(byCtx[2][4]).Add(want[4])
	if a2end := end(byCtx[3][6]); a2end.After(free.Add(50*time.Millisecond)) && !parentNext.Start.Before(a2end) {
		t.Errorf("the parent's next turn began %v after agent_002 (background) ended, though free %v before: it was waited for",
			parentNext.Start.Sub(a2end), a2end.Sub(free))
	}
	for k, s := range byCtx[1][1:] {
		if k+1 == 4 {
			continue // after the join: the recorded gap runs from agent_001's end
		}
		if d := s.Session.Gap - want[k+1]; d < 0 || d > 40*time.Millisecond {
			t.Errorf("parent turn %d left %v after the turn before, want %v", k+2, s.Session.Gap, want[k+1])
		}
	}
	for id, ss := range byCtx {
		for _, s := range ss[1:] {
			if s.Session.IdealCached < 64 { // every later turn keeps at least its context's first block
				t.Errorf("context %d turn %d: ideal %d, want at least a block", id, s.Session.Turn, s.Session.IdealCached)
			}
			if s.CachedTokens <= 0 {
				t.Errorf("context %d turn %d: the simulator served no cached prefix", id, s.Session.Turn)
			}
		}
	}
}

// -n 2 with a pool of one session: each lane replays it on its own, every replay a context
// of its own with its own text, and --requests counts turns (a session begun is finished).
func TestSessionsLanesTakeTheNext(t *testing.T) {
	got := sessionRun(t, "../workload/testdata/sessions/agentx_trace_0026.json",
		workload.SessionOptions{Gaps: workload.GapPolicy{None: true}, Scale: 0.01}, 2, 7)
	ctx := map[uint64]int{}
	for _, s := range got {
		ctx[s.Session.ID]++
		if s.Session.Turn == 1 && s.Session.IdealCached != 0 {
			t.Errorf("a first turn found %d tokens in the ideal cache: replays share text", s.Session.IdealCached)
		}
	}
	// 7 turns asked, 3 a session: three sessions are begun and finished, 9 turns.
	if len(got) != 9 || len(ctx) != 3 {
		t.Fatalf("%d turns in %d sessions, want 9 in 3", len(got), len(ctx))
	}
}

// The tool round trips of a session in each API's own form: the turn after a tool_use stop
// sends the call and its result as chat tool_calls + role "tool", Anthropic tool_use +
// tool_result blocks, Responses function_call + function_call_output items, Ollama
// tool_calls + role "tool"; the simulator answers every one.
func TestSessionsToolMessagesPerAPI(t *testing.T) {
	p := sim.Profile{Name: "tm", Model: "m", TTFT: 2 * time.Millisecond, TokensPerSecond: 4000, PrefixCache: true, Seed: 2}
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	for _, api := range sim.APIs {
		if api == config.APICompletions {
			continue // no message form: texts only
		}
		t.Run(api, func(t *testing.T) {
			tap, proxy := newBodyTap(t, srv.URL())
			base := srv.BaseURLFor("tm", api)
			ep := config.Endpoint{Name: api, BaseURL: proxy.URL + strings.TrimPrefix(base, srv.URL()), Model: "m", API: api,
				MaxTokens: 8, Concurrency: 1, Timeout: 10 * time.Second, Stall: 5 * time.Second, Cache: config.CacheBust}
			ws, err := workload.ForEndpoints([]config.Endpoint{ep}, 1)
			if err != nil {
				t.Fatal(err)
			}
			pool, err := workload.LoadSessions("../workload/testdata/sessions/agentx_trace_0026.json", "")
			if err != nil {
				t.Fatal(err)
			}
			if err := ws[0].UseSessions(pool, workload.SessionOptions{Gaps: workload.GapPolicy{None: true}, Scale: 0.01}); err != nil {
				t.Fatal(err)
			}
			r := NewRunner([]config.Endpoint{ep}, Options{Requests: 3, Workloads: ws})
			done, _ := collectAll(t, r, t.Context())
			for _, d := range done {
				if d.Sample.Outcome != sample.OutcomeOK {
					t.Fatalf("%s: %s %s", api, d.Sample.Outcome, d.Sample.ErrorMessage)
				}
			}
			tap.mu.Lock()
			bodies := tap.bodies
			tap.mu.Unlock()
			last, _ := json.Marshal(bodies[len(bodies)-1]) // turn 3: its input is a tool's result
			want := map[string][]string{
				config.APIChat:      {`"tool_calls":[{"function":{"arguments":"{}","name":"tool"},"id":"call_1","type":"function"}]`, `"role":"tool","tool_call_id":"call_1"`},
				config.APIAnthropic: {`{"id":"call_1","input":{},"name":"tool","type":"tool_use"}`, `"tool_use_id":"call_1","type":"tool_result"`},
				config.APIResponses: {`{"arguments":"{}","call_id":"call_1","name":"tool","type":"function_call"}`, `"call_id":"call_1","output":`, `"type":"function_call_output"`},
				config.APIOllama:    {`"tool_calls":[{"function":{"arguments":{},"name":"tool"}}]`, `"role":"tool"`},
			}[api]
			for _, w := range want {
				if !strings.Contains(string(last), w) {
					t.Errorf("%s: the tool-result turn's body lacks %s:\n%.600s", api, w, last)
				}
			}
		})
	}
}

// Pausing the endpoint holds a session between turns: no turn starts while it is paused,
// and the session goes on where it was when it resumes. Each turn carries its lane.
func TestSessionsPauseBetweenTurns(t *testing.T) {
	p := sim.Profile{Name: "pz", Model: "m", TTFT: 2 * time.Millisecond, TokensPerSecond: 4000, Seed: 4}
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ep := config.Endpoint{Name: "pz", BaseURL: srv.BaseURLFor("pz", config.APIChat), Model: "m", MaxTokens: 4,
		Concurrency: 1, Timeout: 10 * time.Second, Stall: 5 * time.Second}
	ws, _ := workload.ForEndpoints([]config.Endpoint{ep}, 1)
	pool, err := workload.LoadSessions("../workload/testdata/sessions/agentx_trace_0026.json", "")
	if err != nil {
		t.Fatal(err)
	}
	ws[0].UseSessions(pool, workload.SessionOptions{Gaps: workload.GapPolicy{Scale: 0.001}, Scale: 0.01}) // 48 s → 48 ms
	r := NewRunner([]config.Endpoint{ep}, Options{Requests: 3, Workloads: ws})
	errc := make(chan error, 1)
	go func() { errc <- r.Run(t.Context()) }()
	var pausedAt, resumedAt time.Time
	var starts []time.Time
	var lanes []int
	for ev := range r.Events() {
		switch e := ev.(type) {
		case *sample.Started:
			starts = append(starts, e.At)
		case *sample.Done:
			if e.Sample.Warmup {
				continue
			}
			lanes = append(lanes, e.Sample.Session.Lane)
			if e.Sample.Session.Turn == 1 {
				r.SetPaused(0, true)
				pausedAt = time.Now()
				time.AfterFunc(300*time.Millisecond, func() { resumedAt = time.Now(); r.SetPaused(0, false) })
			}
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(lanes) != 3 || lanes[0] != 1 || lanes[2] != 1 {
		t.Fatalf("turns done in lanes %v, want 3 in lane 1", lanes)
	}
	for _, s := range starts {
		if s.After(pausedAt) && s.Before(resumedAt) {
			t.Errorf("a turn started %v into the pause", s.Sub(pausedAt))
		}
	}
}

// --session-start random: every replay sends the turns it says it has (a session in
// progress is finished, sub-agents included), its first turn at once and as one message of
// the context so far, and --requests counts the turns sent.
func TestSessionsRandomStart(t *testing.T) {
	got := sessionRun(t, "../workload/testdata/sessions/agentx_trace_0291_cut.json",
		workload.SessionOptions{Gaps: workload.GapPolicy{Scale: 0.0005}, Scale: 0.01, Start: workload.SessionStartRandom}, 1, 20)
	byRoot := map[uint64][]sample.Sample{}
	for _, s := range got {
		byRoot[s.Session.Root] = append(byRoot[s.Session.Root], s)
	}
	sizes := map[int]bool{}
	for root, ss := range byRoot {
		if len(ss) != ss[0].Session.SessionTurns {
			t.Errorf("replay %d sent %d turns, says %d", root, len(ss), ss[0].Session.SessionTurns)
		}
		sizes[len(ss)] = true
		for _, s := range ss {
			if s.Session.ID == root && s.Session.Turn == 1 && s.Session.Gap != 0 {
				t.Errorf("replay %d: its first turn waited %v", root, s.Session.Gap)
			}
		}
	}
	if len(got) < 20 || len(sizes) < 2 {
		t.Errorf("%d turns in replays of sizes %v: want at least 20, replays started at different turns", len(got), sizes)
	}
}
