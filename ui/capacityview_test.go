package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"tokscope/sample"
	"tokscope/sweep"
)

// fakeSearch is a capacity search scripted for the view: endpoint 0 done (max 3, 4 missed),
// endpoint 1 bisecting [4, 8] and measuring 6 for 1.5 s, endpoint 2 missing at load 1.
type fakeSearch struct{}

func (fakeSearch) Plan() sweep.SearchPlan {
	return sweep.SearchPlan{By: sweep.ByConcurrency, Limit: 256, StepDuration: 2 * time.Second, Target: 0.9}
}

func (fakeSearch) Version() uint64 { return 1 }

func (fakeSearch) Current(ep int) (float64, time.Time, int, bool) {
	if ep == 1 {
		return 6, t0.Add(-1500 * time.Millisecond), 7, true
	}
	return 0, time.Time{}, 0, false
}

func measured(load float64, n, good int, v sweep.Verdict, again bool) sweep.Measurement {
	return sweep.Measurement{Load: load, Requests: n, Good: good, Attainment: float64(good) / float64(n),
		GoodputRPS: float64(good) / 2, Verdict: v, Remeasured: again, Pooled: float64(good) / float64(n)}
}

func (fakeSearch) Outcomes() []sweep.Outcome {
	return []sweep.Outcome{
		{Steps: []sweep.Measurement{measured(1, 10, 10, sweep.Met, false), measured(2, 20, 17, sweep.Pending, false),
			measured(2, 20, 20, sweep.Met, true), measured(4, 40, 20, sweep.Missed, false), measured(3, 30, 30, sweep.Met, false)},
			Max: 3, AttainmentAtMax: 1, FirstMiss: 4, AttainmentAtMiss: 0.5, Done: true},
		{Steps: []sweep.Measurement{measured(4, 40, 40, sweep.Met, false), measured(8, 40, 10, sweep.Missed, false)}, Max: 4, FirstMiss: 8, AttainmentAtMiss: 0.25},
		{Steps: []sweep.Measurement{measured(1, 10, 2, sweep.Missed, false)}, FirstMiss: 1, AttainmentAtMiss: 0.2, Done: true},
	}
}

func TestSearchView(t *testing.T) {
	st := DefaultStyles()
	out := ansi.Strip(renderSearch(&st, fakeSearch{}, []string{"a", "b", "c"}, 0, t0, 100, 30))
	for _, want := range []string{
		"find-max concurrency target 90 % · steps ≥ 2s and 10 requests · limit 256",
		"A a  max concurrency 3 (SLO met by 100 %), 4 missed (50 %)",
		"B b  bracket [4, 8] · measuring 6: 1.5s, 7 requests",
		"C c  missed even at concurrency 1 (20 %)",
		"      2    20    85.0 [█████████████████ │ ]      8.5  re-measure",
		"      2    20   100.0 [██████████████████┃█]     10.0  met (re-measured)",
		"      4    40    50.0 [██████████        │ ]     10.0  missed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("view lacks %q:\n%s", want, out)
		}
	}
	for i, line := range strings.Split(out, "\n") {
		if w := ansi.StringWidth(line); w > 100 {
			t.Errorf("line %d is %d wide", i, w)
		}
	}
	// Short of room: the latest steps are kept.
	out = ansi.Strip(renderSearch(&st, fakeSearch{}, []string{"a", "b", "c"}, 0, t0, 100, 9))
	if lines := strings.Split(out, "\n"); len(lines) != 9 || !strings.Contains(out, "      3    30") || strings.Contains(out, "      1    10") {
		t.Errorf("9 rows:\n%s", out)
	}
}

// A model given a search opens on the sweep view, which is in the tabs and shows the search.
func TestSearchModel(t *testing.T) {
	eps := testEndpoints(2)
	s := sweep.NewSearch(fakeSearch{}.Plan(), eps, 1, sample.TTFTFirstToken, nil)
	m := New(newFakeControls(), eps, make(chan sample.Event), Options{Now: pinned, Search: s})
	m = update(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
	m = update(t, m, redrawMsg{})
	if m.view != viewSweep || !m.views[viewSweep].(*sweepView).InTabs() {
		t.Fatalf("view %v, in tabs %v", m.view, m.views[viewSweep].(*sweepView).InTabs())
	}
	if out := ansi.Strip(m.View()); !strings.Contains(out, "find-max concurrency") || !strings.Contains(out, "waiting for the warm-ups") {
		t.Errorf("view:\n%s", out)
	}
}
