package ui

import (
	"strings"
	"testing"

	"tokscope/sample"

	"github.com/charmbracelet/x/ansi"
)

func TestPaneStatus(t *testing.T) {
	st := DefaultStyles()
	for _, tc := range []struct {
		name    string
		pane    streamPane
		stopped bool
		want    string
	}{
		{"nothing yet", streamPane{}, false, "waiting"},
		{"sent", streamPane{started: t0}, false, "sent"},
		{"streaming", streamPane{started: t0, chunks: 3}, false, "streaming"},
		{"cut short by the end of the events", streamPane{started: t0, chunks: 3}, true, "stopped"},
		{"done", streamPane{done: &sample.Sample{Outcome: sample.OutcomeOK}}, true, "done"},
		{"truncated", streamPane{done: &sample.Sample{Outcome: sample.OutcomeTruncated}}, false, "truncated"},
		{"error kind", streamPane{done: &sample.Sample{Outcome: sample.OutcomeError, ErrorKind: "http_429"}}, false, "http_429"},
		{"error without a kind", streamPane{done: &sample.Sample{Outcome: sample.OutcomeError}}, false, "error"},
	} {
		if got, _ := paneStatus(&st, &tc.pane, tc.stopped); got != tc.want {
			t.Errorf("%s: paneStatus = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestPaneTitleKeepsTheName: in a race of four at 100 columns each pane is 21 columns inside,
// and flaky-cloud's mid-stream error must not cut its name to "flaky-c…".
func TestPaneTitleKeepsTheName(t *testing.T) {
	v := &streamView{common: common{styles: new(DefaultStyles())}}
	for _, tc := range []struct {
		name string
		pane streamPane
		w    int
		want string
	}{
		{"long kind falls back to error", streamPane{name: "flaky-cloud", done: &sample.Sample{Outcome: sample.OutcomeError, ErrorKind: sample.ErrStreamError}}, 21, "flaky-cloud error 0ms"}, // with the elapsed time, as it fits,
		{"kind that fits stays", streamPane{name: "flaky-cloud", done: &sample.Sample{Outcome: sample.OutcomeError, ErrorKind: "http_500"}}, 21, "flaky-cloud  http_500"},
		{"wide pane keeps the kind", streamPane{name: "flaky-cloud", done: &sample.Sample{Outcome: sample.OutcomeError, ErrorKind: sample.ErrStreamError}}, 40, "flaky-cloud             stream_error 0ms"},
	} {
		if got := ansi.Strip(v.paneTitle(&tc.pane, t0, tc.w)); got != tc.want {
			t.Errorf("%s: paneTitle(w=%d) = %q, want %q", tc.name, tc.w, got, tc.want)
		}
	}
}

func TestReasoningRows(t *testing.T) {
	for _, tc := range []struct {
		textH, have int
		answer      bool
		want        int
	}{
		{9, 1, true, 1}, // as many as the reasoning needs
		{9, 2, true, 2},
		{9, 10, true, 3}, // at most a third while an answer comes
		{3, 10, true, 1}, // at least one
		{3, 0, true, 1},
		{9, 1, false, 8}, // before any answer: all but the separator
		{3, 10, false, 2},
	} {
		if got := reasoningRows(tc.textH, tc.have, tc.answer); got != tc.want {
			t.Errorf("reasoningRows(%d, %d, answer %v) = %d, want %d", tc.textH, tc.have, tc.answer, got, tc.want)
		}
	}
}

func TestStripLabel(t *testing.T) {
	for _, tc := range []struct {
		gaps []float64
		w    int
		want string
	}{
		{nil, 20, " gaps"},
		{[]float64{12, 41.4, 7}, 20, " max 41ms"},
		{[]float64{900, 12, 7}, 2, " max 12ms"}, // only the newest w gaps are drawn
		{[]float64{0.5}, 20, " max 0.5ms"},
	} {
		if got := stripLabel(tc.gaps, tc.w); got != tc.want {
			t.Errorf("stripLabel(%v, %d) = %q, want %q", tc.gaps, tc.w, got, tc.want)
		}
	}
}

// A failed pane's error message wraps onto the pane's last rows and its figure line is said
// shorter, neither cut where the pane has room: "error inside the str…" and
// "failed after 10 chun…" were cut in a 21-column race pane.
func TestFailedPaneWrapsItsError(t *testing.T) {
	st := DefaultStyles()
	v := newStreamView(common{styles: &st}, "", nil, testEndpoints(1))
	p := &streamPane{name: "flaky-cloud", chunks: 10, done: &sample.Sample{Outcome: sample.OutcomeError,
		ErrorKind: sample.ErrStreamError, ErrorMessage: "error inside the stream: upstream overloaded"}}
	rows := v.paneText(p, 21, 9)
	if len(rows) != 9 {
		t.Fatalf("%d rows, want 9", len(rows))
	}
	got := strings.Join(rows, " ")
	got = strings.Join(strings.Fields(ansi.Strip(got)), " ")
	if !strings.Contains(got, "error inside the stream: upstream overloaded") || strings.Contains(got, "…") {
		t.Errorf("the error is not whole: %q", got)
	}
	if f := ansi.Strip(v.figures(p, t0, 21)); strings.Contains(f, "…") || !strings.Contains(f, "10 chunks") {
		t.Errorf("figure line %q", f)
	}
}
