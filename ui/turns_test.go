package ui

import (
	"strings"
	"testing"

	"tokscope/config"
	"tokscope/stats"
)

// TestTurnsCardAndCompare: the card's line and the compare columns read the cache-hit rate
// and the first/later splits; without conversations the compare view has no such columns.
func TestTurnsCardAndCompare(t *testing.T) {
	rate := 0.5386
	es := stats.EndpointStats{CacheHitRate: &rate, Turns: &stats.TurnStats{Splits: [][]stats.Dist{
		{{Count: 2, P50: 120}, {Count: 2, P50: 66}},
		{{Count: 4, P50: 45}, {Count: 4, P50: 180}},
	}}}
	st := DefaultStyles()
	line := featureLine(&st, "turns", &es, 80)
	for _, want := range []string{"prompt cached 53.9%", "1st 120", "later 45", "66 → 180"} {
		if !strings.Contains(line, want) {
			t.Errorf("card line %q lacks %q", line, want)
		}
	}
	if n := len(colsOf([]config.Endpoint{{Turns: 1}})) - len(colsOf([]config.Endpoint{{Turns: 3}})); n != -5 {
		t.Errorf("--turns 3 adds %d compare columns, want 5", -n)
	}
	got := map[string]float64{}
	for _, c := range colsOf([]config.Endpoint{{Turns: 3}}) {
		if v, ok := c.Value(&es); ok {
			got[c.Title] = v
		}
	}
	for title, want := range map[string]float64{"cached %": 53.86, "ttft first": 120, "ttft later": 45, "prompt later": 180} {
		if got[title] != want {
			t.Errorf("%s = %v, want %v (%v)", title, got[title], want, got)
		}
	}
}
