package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/workload"
)

// A run of agent sessions gets the "Agent sessions" section: a lanes chart per endpoint, with
// a bar for each turn (decode thick from the first token), failed turns in the error colour,
// and the ideal and served cache hits; a run without sessions has none of it.
func TestLanesSection(t *testing.T) {
	cfg := []config.Endpoint{{Name: "a", Model: "m"}}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var samples []sample.Sample
	for lane := 1; lane <= 2; lane++ {
		for turn := 1; turn <= 3; turn++ {
			s := sample.Sample{Endpoint: "a", Model: "m", Start: t0.Add(time.Duration(turn) * time.Second), FirstToken: 200 * time.Millisecond,
				FirstAnswer: 200 * time.Millisecond, LastToken: 600 * time.Millisecond, End: 600 * time.Millisecond,
				Outcome: sample.OutcomeOK, Tokens: 20, PromptTokens: 1000, CachedTokens: 500,
				Chunks: []sample.Chunk{{At: 200 * time.Millisecond, Content: 4}, {At: 600 * time.Millisecond, Content: 4}},
				Session: &workload.SessionTurn{ID: uint64(lane), Root: uint64(lane), Lane: lane, Turn: turn, SessionTurns: 3,
					IdealCached: 800, PromptTokens: 1000}}
			if lane == 2 && turn == 3 {
				s.Outcome, s.ErrorKind, s.FirstToken, s.FirstAnswer, s.LastToken = sample.OutcomeError, "http_500", sample.Absent, sample.Absent, sample.Absent
				s.Chunks = nil
			}
			samples = append(samples, s)
		}
	}
	var buf bytes.Buffer
	if err := Write(&buf, synthInput(t, cfg, samples)); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{`id="lanes"`, `id="lanes-0"`, "a: lanes", "80.0%", "50.0%", "62.5%", "stroke:#D62728"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// With a 100 ms TTFT objective every turn (200 ms) misses it: drawn in the error colour
	// even when none failed.
	ok := append([]sample.Sample(nil), samples[:5]...)
	slo := []config.Endpoint{{Name: "a", Model: "m", SLO: config.SLO{TTFT: 100 * time.Millisecond}}}
	buf.Reset()
	if err := Write(&buf, synthInput(t, slo, ok)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "stroke:#D62728") {
		t.Error("turns that missed the objectives are not in the error colour")
	}
	buf.Reset()
	if err := Write(&buf, synthInput(t, cfg, ok)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "stroke:#D62728") {
		t.Error("ok turns without objectives in the error colour")
	}
	for i := range samples {
		samples[i].Session = nil
	}
	buf.Reset()
	if err := Write(&buf, synthInput(t, cfg, samples)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `id="lanes"`) {
		t.Error("a run without sessions has a lanes section")
	}
}
