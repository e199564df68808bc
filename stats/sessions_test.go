package stats

import (
	"math"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/workload"
)

// sessionTurn is a finished turn of session root (context id), from start for dur.
func sessionTurn(t0 time.Time, id, root uint64, depth, turn, of int, start, dur time.Duration, ideal, prompt, cached int) *sample.Sample {
	return &sample.Sample{Endpoint: "e", Start: t0.Add(start), FirstToken: dur / 2, FirstAnswer: dur / 2, LastToken: dur, End: dur,
		Outcome: sample.OutcomeOK, Tokens: 10, PromptTokens: prompt, CachedTokens: cached,
		Session: &workload.SessionTurn{ID: id, Root: root, Depth: depth, Turn: turn, SessionTurns: of, IdealCached: ideal, PromptTokens: prompt}}
}

// Ideal and served hit rates side by side, a session complete when all its turns (its
// sub-agent's too) are in, its model time the union of its turns' spans, the rest tool time.
func TestSessionFigures(t *testing.T) {
	a := New([]config.Endpoint{{Name: "e"}})
	t0 := time.Now()
	s := time.Second
	a.Add(sessionTurn(t0, 1, 1, 0, 1, 3, 0, s, 0, 1000, 0))
	a.Add(sessionTurn(t0, 2, 1, 1, 1, 3, 2*s, 2*s, 500, 1000, 400)) // a sub-agent, 2–4 s
	st := a.Snapshot(t0.Add(time.Minute)).Endpoints[0].Sessions
	if st == nil || st.Completed != 0 {
		t.Fatalf("after 2 of 3 turns: %+v", st)
	}
	a.Add(sessionTurn(t0, 1, 1, 0, 2, 3, 3*s, 2*s, 1000, 2000, 1000)) // overlaps the sub-agent: 3–5 s
	st = a.Snapshot(t0.Add(time.Minute)).Endpoints[0].Sessions
	if st.Completed != 1 || st.Turns != 3 {
		t.Fatalf("completed %d turns %d, want 1 session of 3 turns", st.Completed, st.Turns)
	}
	if d := st.Duration.Max; math.Abs(d-5000) > 1 {
		t.Errorf("duration %v ms, want 5000", d)
	}
	if m := st.Model.Max; math.Abs(m-4000) > 1 { // 0–1 s and 2–5 s
		t.Errorf("model time %v ms, want 4000", m)
	}
	if tl := st.Tool.Max; math.Abs(tl-1000) > 1 {
		t.Errorf("tool time %v ms, want 1000", tl)
	}
	if *st.IdealHitRate != 1500.0/4000 || *st.ServedHitRate != 1400.0/4000 || math.Abs(*st.Efficiency-1400.0/1500) > 1e-12 {
		t.Errorf("ideal %v served %v efficiency %v", *st.IdealHitRate, *st.ServedHitRate, *st.Efficiency)
	}
	if st.FirstTTFT.Count != 1 || st.LaterTTFT.Count != 2 {
		t.Errorf("first-turn TTFTs %d, later %d; want 1 and 2", st.FirstTTFT.Count, st.LaterTTFT.Count)
	}
	if st.Invalid || st.Overflow != 0 {
		t.Errorf("no overflow, yet overflow %d invalid %v", st.Overflow, st.Invalid)
	}
	// One refused turn in 4 is an overflow, and over 1 %: the run is invalid.
	bad := sessionTurn(t0, 3, 3, 0, 1, 5, 6*s, s, 0, 100, 0)
	bad.Outcome, bad.ErrorKind = sample.OutcomeError, "http_400"
	bad.ErrorMessage = "400: the request exceeds the available context size, try increasing it"
	a.Add(bad)
	st = a.Snapshot(t0.Add(time.Minute)).Endpoints[0].Sessions
	if st.Overflow != 1 || !st.Invalid {
		t.Errorf("overflow %d invalid %v after a refused turn", st.Overflow, st.Invalid)
	}
	// A turn the context cut: it asked 10 tokens and ended for length after 6 (usage); one
	// that stopped early on its own ("stop"), or whose count is an estimate, is not.
	cut := sessionTurn(t0, 4, 4, 0, 1, 5, 7*s, s, 0, 100, 0)
	cut.OutputTarget, cut.Tokens, cut.FinishReason, cut.Source = 10, 6, "length", sample.SourceUsage
	early, guessed := *cut, *cut
	early.FinishReason = "stop"
	guessed.Source = sample.SourceEstimate
	for _, s := range []*sample.Sample{cut, &early, &guessed} {
		a.Add(s)
	}
	if st = a.Snapshot(t0.Add(time.Minute)).Endpoints[0].Sessions; st == nil || st.Overflow != 2 {
		t.Fatalf("after a turn cut by the context: %+v, want 2 overflows", st)
	}
	plain := New([]config.Endpoint{{Name: "e"}})
	plain.Add(&sample.Sample{Endpoint: "e", Start: t0, End: s, Outcome: sample.OutcomeOK})
	if plain.Snapshot(t0.Add(time.Minute)).Endpoints[0].Sessions != nil {
		t.Error("a run without sessions has session figures")
	}
}
