package ui

import (
	"testing"
	"unicode/utf8"

	"tokscope/stats"
)

func TestH2HCells(t *testing.T) {
	rows := []stats.HeadToHead{
		{Endpoint: 1, Versus: 0, Metric: stats.H2HTTFT, Diff: 95, Lo: 40, Hi: 150, OK: true, Verdict: stats.VerdictSlower},
		{Endpoint: 2, Versus: 0, Metric: stats.H2HTTFT, Verdict: stats.VerdictUndecided}, // no values
		{Endpoint: 0, Versus: 2, Metric: stats.H2HDecode, Diff: -12.5, Lo: -20, Hi: 3, OK: true, Verdict: stats.VerdictUndecided},
		{Endpoint: 1, Versus: 2, Metric: stats.H2HDecode, Diff: 30, Lo: 10, Hi: 50, OK: true, Verdict: stats.VerdictFaster},
	}
	cells, best := h2hCells(rows)
	if best != [2]int{0, 2} {
		t.Fatalf("best = %v, want [0 2]", best)
	}
	for _, tc := range []struct {
		metric, ep int
		want       h2hCell
	}{
		{0, 0, h2hCell{diff: "best"}},
		{0, 1, h2hCell{diff: "+95", ci: "[+40,+150]", verdict: stats.VerdictSlower, style: -1}},
		{0, 2, h2hCell{diff: dash, verdict: stats.VerdictUndecided}},
		{1, 0, h2hCell{diff: "−12.5", ci: "[−20.0,+3.00]", verdict: stats.VerdictUndecided}},
		{1, 1, h2hCell{diff: "+30.0", ci: "[+10.0,+50.0]", verdict: stats.VerdictFaster, style: 1}},
		{1, 2, h2hCell{diff: "best"}},
	} {
		if got := cells[tc.metric][tc.ep]; got != tc.want {
			t.Errorf("cell metric %d endpoint %d = %+v, want %+v", tc.metric, tc.ep, got, tc.want)
		}
	}
	if _, none := h2hCells(nil); none != [2]int{-1, -1} {
		t.Errorf("no rows: best = %v, want [-1 -1]", none)
	}
}

func TestH2HWidths(t *testing.T) {
	eps := []stats.EndpointStats{{Name: "vllm-a100"}, {Name: "ollama"}}
	cells, _ := h2hCells([]stats.HeadToHead{
		{Endpoint: 1, Versus: 0, Metric: stats.H2HTTFT, Diff: 1234, Lo: 1000, Hi: 1500, OK: true, Verdict: stats.VerdictUndecided},
		{Endpoint: 0, Versus: 1, Metric: stats.H2HDecode, Diff: -5, Lo: -9, Hi: -1, OK: true, Verdict: stats.VerdictSlower},
	})
	wd := measureH2H(cells, eps, []int{0, 1})
	n := utf8.RuneCountInString
	want := h2hWidths{
		name:    n("vllm-a100") + 2,
		diff:    [2]int{n("Δttft ms"), n("Δdec t/s")}, // wider than "+1234" and "−5.00"
		ci:      [2]int{n("[+1000,+1500]"), n("[−9.00,−1.00]")},
		verdict: [2]int{n("not distinguishable yet"), n("slower")},
		short:   [2]int{n("n.d. yet"), n("slower")},
	}
	if wd != want {
		t.Fatalf("measureH2H = %+v, want %+v", wd, want)
	}
	long, short, bare := wd.total(true, false), wd.total(true, true), wd.total(false, true)
	if long != 11+1+8+1+13+1+23+1+8+1+13+1+6 || short != long-23+8 || bare != short-14-14 {
		t.Fatalf("widths: long %d, short %d, without CI %d", long, short, bare)
	}
	for _, tc := range []struct {
		w             int
		showCI, short bool
	}{
		{long, true, false},
		{long - 1, true, true},
		{short, true, true},
		{short - 1, false, true},
		{10, false, true},
	} {
		if ci, sh := wd.choose(tc.w); ci != tc.showCI || sh != tc.short {
			t.Errorf("choose(%d) = CI %v short %v, want %v %v", tc.w, ci, sh, tc.showCI, tc.short)
		}
	}
}
