package report

import (
	"bytes"
	"strings"
	"testing"

	"tokscope/stats"
)

// TestTurnsSection: a run with conversations has the section, its two charts drawn and the
// table's cache-hit rate; a run without has none.
func TestTurnsSection(t *testing.T) {
	rate := 0.5386
	d := func(p50 float64) stats.Dist { return stats.Dist{Count: 2, P50: p50, Mean: p50, Min: p50, Max: p50} }
	st := stats.EndpointStats{Name: "llama", Model: "m", CacheHitRate: &rate, Turns: &stats.TurnStats{
		Splits: [][]stats.Dist{{d(120), d(66)}, {d(45), d(180)}},
		ByTurn: [][]stats.Dist{{d(120), d(66)}, {d(50), d(143)}, {d(40), d(218)}},
	}}
	var buf bytes.Buffer
	if err := Write(&buf, Input{Summary: stats.Snapshot{Endpoints: []stats.EndpointStats{st}}}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{"Conversations", `id="turns-ttft_ms"`, `id="turns-prompt_tokens"`, "53.9 %", "<svg"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	st.Turns = nil
	buf.Reset()
	if err := Write(&buf, Input{Summary: stats.Snapshot{Endpoints: []stats.EndpointStats{st}}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "Conversations") {
		t.Error("a run without conversations has the section")
	}
}
