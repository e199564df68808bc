package promexport

import (
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/sample/sampletest"
	"tokscope/stats"
	"tokscope/workload"
)

// The session counters count every finished turn by outcome, the turns that overflowed the
// context (refused or cut by it) and the ideal over every turn, as the JSON "sessions" block
// does: the same samples give the aggregator's turns, overflow and ideal hit rate.
func TestSessionMetricsMatchTheSummary(t *testing.T) {
	eps := []config.Endpoint{{Name: "e", Model: "m"}}
	e, agg := New(eps), stats.New(eps)
	t0 := time.Unix(1000, 0)
	turn := func(seq uint64, with func(s *sample.Sample)) *sample.Sample {
		return sampletest.OK("e", "m", seq, t0).Chunks(3, 50*time.Millisecond, 10*time.Millisecond, 3).
			Tokens(3, sample.SourceUsage).With(func(s *sample.Sample) {
			s.PromptTokens = 100
			s.Session = &workload.SessionTurn{ID: 1, Root: 1, Lane: 1, Turn: int(seq), SessionTurns: 7, PromptTokens: 90, IdealCached: 10 * int(seq)}
			with(s)
		}).Ptr()
	}
	samples := []*sample.Sample{
		turn(1, func(s *sample.Sample) {}),
		turn(2, func(s *sample.Sample) { s.OutputTarget = 8; s.FinishReason = "length" }), // cut by the context: 3 of 8
		turn(3, func(s *sample.Sample) {
			s.Outcome, s.ErrorKind, s.ErrorMessage = sample.OutcomeError, "http_400", "400: This model's maximum context length is 4096 tokens"
		}),
		turn(4, func(s *sample.Sample) { s.Outcome, s.ErrorKind = sample.OutcomeError, "http_500" }),
		turn(5, func(s *sample.Sample) { s.Outcome = sample.OutcomeTruncated }),
		turn(6, func(s *sample.Sample) { s.Cut = true }),    // in flight at the end of the run: in neither
		turn(7, func(s *sample.Sample) { s.Warmup = true }), // a warm-up: in neither
	}
	for _, s := range samples {
		e.Observe(s)
		agg.Add(s)
	}
	fams, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				if l.GetName() == labelOutcome {
					key += "/" + l.GetValue()
				}
			}
			got[key] += m.GetCounter().GetValue()
		}
	}
	st := agg.Snapshot(t0.Add(time.Minute)).Endpoints[0].Sessions
	if st == nil {
		t.Fatal("no session figures")
	}
	turns := got["tokscope_session_turns_total/ok"] + got["tokscope_session_turns_total/error"] + got["tokscope_session_turns_total/truncated"]
	for key, want := range map[string]float64{
		"tokscope_session_turns_total/ok": 2, "tokscope_session_turns_total/error": 2, "tokscope_session_turns_total/truncated": 1,
		"tokscope_session_overflow_turns_total": 2, "tokscope_session_ideal_cached_tokens_total": 150,
		"tokscope_session_offline_prompt_tokens_total": 450,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
	if int(turns) != st.Turns || int(got["tokscope_session_overflow_turns_total"]) != st.Overflow {
		t.Errorf("Prometheus: %v turns, %v overflowed; the summary: %d and %d", turns, got["tokscope_session_overflow_turns_total"], st.Turns, st.Overflow)
	}
	if r := got["tokscope_session_ideal_cached_tokens_total"] / got["tokscope_session_offline_prompt_tokens_total"]; st.IdealHitRate == nil || r != *st.IdealHitRate {
		t.Errorf("Prometheus ideal hit rate %v, the summary's %v", r, st.IdealHitRate)
	}
}
