package stats

import (
	"math"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/metric"
	"tokscope/sample"
	"tokscope/sample/sampletest"
)

// TestTurnsAndCacheHit: the capture's three turns (66, 143, 218 prompt tokens, 14, 72, 144
// cached) give a cache-hit rate of 230/427 and split first from later turns; requests that
// did not report cached tokens stay out of the rate.
func TestTurnsAndCacheHit(t *testing.T) {
	a := New([]config.Endpoint{{Name: "e"}})
	t0 := time.Unix(1000, 0)
	for i, tr := range []struct{ turn, prompt, cached int }{{1, 66, 14}, {2, 143, 72}, {3, 218, 144}, {1, 500, -1}} {
		ttft := time.Duration(100-20*tr.turn) * time.Millisecond
		s := sampletest.OK("e", "m", uint64(i+1), t0.Add(time.Duration(i)*time.Second)).
			Chunks(4, ttft, 10*time.Millisecond, 3).Tokens(4, sample.SourceUsage).
			With(func(s *sample.Sample) {
				s.Turn, s.Conversation = tr.turn, 1
				s.PromptTokens, s.CachedTokens = tr.prompt, tr.cached
			}).Ptr()
		a.AddAt(0, s)
	}
	st := a.Snapshot(t0.Add(10 * time.Second)).Endpoints[0]
	if st.CacheHitRate == nil || math.Abs(*st.CacheHitRate-230.0/427) > 1e-12 {
		t.Fatalf("cache hit rate %v, want %v", st.CacheHitRate, 230.0/427)
	}
	if st.Turns == nil {
		t.Fatal("no figures by turn")
	}
	first, later := st.Turns.Of(0, metric.PromptTokens), st.Turns.Of(1, metric.PromptTokens)
	if first.Count != 2 || first.Min != 66 || first.Max != 500 || later.Count != 2 || later.Min != 143 || later.Max != 218 {
		t.Errorf("prompt tokens first %+v later %+v", first, later)
	}
	if ft, lt := st.Turns.Of(0, metric.TTFT), st.Turns.Of(1, metric.TTFT); ft.Count != 2 || lt.Count != 2 || lt.Max >= ft.Min {
		t.Errorf("ttft first %+v later %+v", ft, lt)
	}
	if len(st.Turns.ByTurn) != 3 || st.Turns.ByTurn[2][1].Max != 218 {
		t.Errorf("by turn %+v", st.Turns.ByTurn)
	}

	b := New([]config.Endpoint{{Name: "e"}})
	b.AddAt(0, sampletest.OK("e", "m", 1, t0).Chunks(2, 50*time.Millisecond, 10*time.Millisecond, 3).Tokens(2, sample.SourceUsage).Ptr())
	if st := b.Snapshot(t0.Add(time.Second)).Endpoints[0]; st.Turns != nil || st.CacheHitRate != nil {
		t.Errorf("single requests without usage: turns %v rate %v", st.Turns, st.CacheHitRate)
	}
}
