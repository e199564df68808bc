package ui

import (
	"strings"
	"testing"
	"unicode/utf8"

	"tokscope/stats"
)

func TestH2HCells(t *testing.T) {
	rows := []stats.HeadToHead{
		{Endpoint: 1, Versus: 0, Metric: stats.H2HTTFT, N: 30, VersusN: 40, Diff: 95, Lo: 40, Hi: 150, OK: true, Verdict: stats.VerdictSlower},
		{Endpoint: 2, Versus: 0, Metric: stats.H2HTTFT, VersusN: 40, Verdict: stats.VerdictUndecided}, // no values
		{Endpoint: 3, Versus: 0, Metric: stats.H2HTTFT, N: 3, VersusN: 40, Diff: 455, Lo: 374, Hi: 525, OK: true, Verdict: stats.VerdictUndecided},
		{Endpoint: 0, Versus: 2, Metric: stats.H2HDecode, N: 40, VersusN: 12, Diff: -12.5, Lo: -20, Hi: 3, OK: true, Verdict: stats.VerdictUndecided},
		{Endpoint: 1, Versus: 2, Metric: stats.H2HDecode, N: 30, VersusN: 12, Diff: 30, Lo: 10, Hi: 50, OK: true, Verdict: stats.VerdictFaster},
	}
	cells, best := h2hCells(rows)
	if best != [2]int{0, 2} {
		t.Fatalf("best = %v, want [0 2]", best)
	}
	for _, tc := range []struct {
		metric, ep int
		want       h2hCell
	}{
		{0, 0, h2hCell{diff: "best", n: "40"}},
		{0, 1, h2hCell{diff: "+95", ci: "[+40,+150]", n: "30/40", verdict: "slower", short: "slower", style: -1}},
		{0, 2, h2hCell{diff: dash, n: "0/40", verdict: "too few: n<5", short: "n<5"}},
		// An interval that excludes 0 from 3 values: the verdict says why it is not given.
		{0, 3, h2hCell{diff: "+455", ci: "[+374,+525]", n: "3/40", verdict: "too few: n<5", short: "n<5"}},
		{1, 0, h2hCell{diff: "−12.5", ci: "[−20.0,+3.00]", n: "40/12", verdict: "not distinguishable yet", short: "n.d. yet"}},
		{1, 1, h2hCell{diff: "+30.0", ci: "[+10.0,+50.0]", n: "30/12", verdict: "faster", short: "faster", style: 1}},
		{1, 2, h2hCell{diff: "best", n: "12"}},
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
		{Endpoint: 1, Versus: 0, Metric: stats.H2HTTFT, N: 30, VersusN: 30, Diff: 1234, Lo: 1000, Hi: 1500, OK: true, Verdict: stats.VerdictUndecided},
		{Endpoint: 0, Versus: 1, Metric: stats.H2HDecode, N: 30, VersusN: 30, Diff: -5, Lo: -9, Hi: -1, OK: true, Verdict: stats.VerdictSlower},
	})
	wd := measureH2H(cells, eps, []int{0, 1})
	n := utf8.RuneCountInString
	want := h2hWidths{
		name:    n("vllm-a100") + 2,
		diff:    [2]int{n("Δttft ms"), n("Δdec t/s")}, // wider than "+1234" and "−5.00"
		ci:      [2]int{n("[+1000,+1500]"), n("[−9.00,−1.00]")},
		verdict: [2]int{n("not distinguishable yet"), n("decode verdict")},
		short:   [2]int{n("n.d. yet"), n("decode")},
		n:       [2]int{n("30/30"), n("30/30")},
	}
	if wd != want {
		t.Fatalf("measureH2H = %+v, want %+v", wd, want)
	}
	full, short, noN, noCI := wd.total(h2hLayout{true, true, true}), wd.total(h2hLayout{true, false, true}),
		wd.total(h2hLayout{true, false, false}), wd.total(h2hLayout{false, false, true})
	if full != 11+(1+8+1+13+1+23+1+5)+2+(1+8+1+13+1+14+1+5) || short != full-23+8-14+6 || noN != short-12 || noCI != short-14-14 {
		t.Fatalf("widths: full %d, short %d, without n %d, without CI %d", full, short, noN, noCI)
	}
	for _, tc := range []struct {
		w    int
		want h2hLayout
	}{
		{full, h2hLayout{true, true, true}},
		{full - 1, h2hLayout{true, false, true}},
		{short, h2hLayout{true, false, true}},
		{short - 1, h2hLayout{true, false, false}},
		{noN - 1, h2hLayout{false, false, true}},
		{10, h2hLayout{}},
	} {
		if got := wd.choose(tc.w); got != tc.want {
			t.Errorf("choose(%d) = %+v, want %+v", tc.w, got, tc.want)
		}
	}
}

// Every title starts where its column's cells start (left-aligned CI and verdict) or ends
// where they end (right-aligned Δ and n), so "95% CI" sits over the brackets.
func TestH2HHeaderAlignsWithCells(t *testing.T) {
	eps := []stats.EndpointStats{{Name: "vllm-a100"}, {Name: "ollama"}, {Name: "new"}}
	cells, best := h2hCells([]stats.HeadToHead{
		{Endpoint: 1, Versus: 0, Metric: stats.H2HTTFT, N: 30, VersusN: 30, Diff: 94, Lo: 80, Hi: 120, OK: true, Verdict: stats.VerdictSlower},
		{Endpoint: 2, Versus: 0, Metric: stats.H2HTTFT, N: 3, VersusN: 30, Diff: 1455, Lo: 1374, Hi: 1525, OK: true, Verdict: stats.VerdictUndecided},
		{Endpoint: 1, Versus: 0, Metric: stats.H2HDecode, N: 30, VersusN: 30, Diff: -65, Lo: -85, Hi: -61.4, OK: true, Verdict: stats.VerdictSlower},
		{Endpoint: 2, Versus: 0, Metric: stats.H2HDecode, N: 3, VersusN: 30, Diff: -5, Lo: -9, Hi: -1, OK: true, Verdict: stats.VerdictUndecided},
	})
	st := DefaultStyles() // Ascii in tests: plain text
	c := &compareView{common: common{styles: &st}}
	order := []int{0, 1, 2}
	wd := measureH2H(cells, eps, order)
	header := []rune(wd.header(h2hLayout{true, true, true}))
	row := []rune(c.h2hRow("new", 2, cells, best, wd, h2hLayout{true, true, true}))
	for _, want := range []string{"95% CI", "ttft verdict", "decode verdict"} {
		at := strings.Index(string(header), want)
		col := utf8.RuneCountInString(string(header)[:at])
		if at < 0 || col >= len(row) || (row[col] != '[' && want == "95% CI") || row[col] == ' ' || (col > 0 && row[col-1] != ' ') {
			t.Errorf("%q at column %d does not start a cell:\n%s\n%s", want, col, string(header), string(row))
		}
	}
	if !strings.Contains(string(row), "too few: n<5") || !strings.Contains(string(row), "3/30") {
		t.Errorf("the row of an endpoint with 3 values does not say why there is no verdict:\n%s", string(row))
	}
}
