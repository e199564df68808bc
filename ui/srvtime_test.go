package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"tokscope/config"
	"tokscope/probe"
	"tokscope/stats"
)

// The card's server line shows the medians of what the server said, and the detail view's
// breakdown splits the server's TTFT into queue, model load and prefill, with outside.
func TestServerTimingInViews(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	s := everySample(t0) // client TTFT 40 ms; 9 tokens
	st := probe.NoServerTiming("vllm")
	st.TTFTms, st.QueueMs, st.DecodeTPS = 26, 4.5, 47.9
	s.Server = &st
	agg := stats.New([]config.Endpoint{{Name: "e", Model: "m"}})
	agg.Add(&s)
	snap := agg.Snapshot(t0.Add(time.Second))
	styles := DefaultStyles()
	got := ansi.Strip(srvTimeLine(&styles, &snap.Endpoints[0], 80))
	if want := "srv ttft 26 ms · outside 14 ms · srv 47.9 tok/s"; got != want {
		t.Errorf("card line %q, want %q", got, want)
	}
	if got := serverBreakdown([]*probe.Sample{&s}); got != "server: queue 4.5 · prefill 21.5 · outside 14.0 ms (vllm)" {
		t.Errorf("breakdown %q", got)
	}
	o := probe.NoServerTiming("ollama")
	o.LoadMs, o.TTFTms = 300, 305
	s.Server = &o
	if got := serverBreakdown([]*probe.Sample{&s}); !strings.Contains(got, "model load 300.0 · prefill 5.0") {
		t.Errorf("ollama breakdown %q", got)
	}
	if serverBreakdown([]*probe.Sample{{}}) != "" {
		t.Error("a breakdown for a server that said nothing")
	}
}
