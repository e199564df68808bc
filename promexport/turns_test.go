package promexport

import (
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/sample/sampletest"
)

// TestTurnMetrics: the cache-hit counters hold the requests that reported both counts, and
// the turn histograms count first and later turns apart.
func TestTurnMetrics(t *testing.T) {
	e := New([]config.Endpoint{{Name: "e", Model: "m"}})
	t0 := time.Unix(1000, 0)
	for i, tr := range []struct{ turn, prompt, cached int }{{1, 66, 14}, {2, 143, 72}, {3, 218, 144}, {1, 500, -1}} {
		s := sampletest.OK("e", "m", uint64(i+1), t0).Chunks(3, 50*time.Millisecond, 10*time.Millisecond, 3).
			Tokens(3, sample.SourceUsage).With(func(s *sample.Sample) {
			s.Turn, s.PromptTokens, s.CachedTokens = tr.turn, tr.prompt, tr.cached
		}).Ptr()
		e.Observe(s)
	}
	fams, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			switch {
			case m.GetCounter() != nil:
				got[f.GetName()] += m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				for _, l := range m.GetLabel() {
					if l.GetName() == "turn" {
						got[f.GetName()+"/"+l.GetValue()] = float64(m.GetHistogram().GetSampleCount())
					}
				}
			}
		}
	}
	for key, want := range map[string]float64{
		"tokscope_cache_hit_cached_tokens_total": 230, "tokscope_cache_hit_prompt_tokens_total": 427,
		"tokscope_turn_time_to_first_token_seconds/first": 2, "tokscope_turn_time_to_first_token_seconds/later": 2,
		"tokscope_turn_prompt_tokens/later": 2,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
}
