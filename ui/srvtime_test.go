package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/sample/sampletest"
	"tokscope/stats"
)

// The card's server line shows the medians of what the server said, and the detail view's
// breakdown splits the server's TTFT into queue, model load and prefill, with outside.
func TestServerTimingInViews(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	s := everySample(t0) // client TTFT 40 ms; 9 tokens
	st := sample.NoServerTiming("vllm")
	st.TTFTms, st.QueueMs, st.DecodeTPS = 26, 4.5, 47.9
	s.Server = &st
	agg := stats.New([]config.Endpoint{{Name: "e", Model: "m"}})
	agg.Add(&s)
	snap := agg.Snapshot(t0.Add(time.Second))
	styles := DefaultStyles()
	got := ansi.Strip(featureLine(&styles, "server timing", &snap.Endpoints[0], 80))
	if want := "srv ttft 26 ms · outside 14 ms · srv 47.9 tok/s"; got != want {
		t.Errorf("card line %q, want %q", got, want)
	}
	if got := serverBreakdown([]*sample.Sample{&s}); got != "server: queue 4.5 · prefill 21.5 · outside 14.0 ms (vllm)" {
		t.Errorf("breakdown %q", got)
	}
	o := sample.NoServerTiming("ollama")
	o.LoadMs, o.TTFTms = 300, 305
	s.Server = &o
	if got := serverBreakdown([]*sample.Sample{&s}); !strings.Contains(got, "model load 300.0 · prefill 5.0") {
		t.Errorf("ollama breakdown %q", got)
	}
	if serverBreakdown([]*sample.Sample{{}}) != "" {
		t.Error("a breakdown for a server that said nothing")
	}
}

// No explanatory note of the detail view is cut where a second line holds it: the server's
// TTFT breakdown ("… outside 8019.7 ms (llamacpp)") and the headers legend wrap at every
// width instead of ending in "…" (at the table's 49 columns it read "outside 8019.7 ms (llam…").
func TestDetailNotesWrapNotCut(t *testing.T) {
	for _, w := range []int{60, 80, 100, 120} {
		m, _ := newTestModel(t, 1, w, 40, 5)
		ep, ms := m.eps[0], time.Millisecond
		st := sample.NoServerTiming("llamacpp")
		st.TTFTms, st.QueueMs = 8480.3, 1200.5
		s := sampletest.OK(ep.Name, ep.Model, 6, t0.Add(-20*time.Second)).Times(300*time.Microsecond, 9000*ms).
			Chunks(20, 16500*ms, 10*ms, 4).Tokens(20, sample.SourceUsage).Prompt(530, 0).EndAfter(ms).
			With(func(s *sample.Sample) { s.Server = &st }).Sample()
		m = update(t, m, eventsMsg{events: []sample.Event{&sample.Done{Endpoint: 0, Sample: s}}})
		m = update(t, m, redrawMsg{})
		m = press(t, m, "enter")
		view := ansi.Strip(m.View())
		lines := strings.Split(view, "\n")
		body := lines[2 : len(lines)-1] // below the header and the endpoint's title, above the footer
		for _, l := range body {
			if strings.HasSuffix(strings.TrimRight(l, " "), "…") {
				t.Errorf("width %d: a line is cut: %q", w, l)
			}
		}
		for _, want := range []string{"queue 1200.5", "prefill 7279.8", "outside", "8019.7 ms", "(llamacpp)", "1st tok: headers→token"} {
			if !strings.Contains(view, want) {
				t.Errorf("width %d: the view lacks %q:\n%s", w, want, view)
			}
		}
	}
}
