package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"tokscope/sweep"
)

// fakeTierSearch is a tier search scripted for the view: two tiers, endpoint 0 done (fast
// confirmed at 2, 3 missed; slow confirmed at 8, the limit), endpoint 1 bisecting fast in
// [4, 8] while slow still ramps, measuring 6.
type fakeTierSearch struct{}

func (fakeTierSearch) Plan() sweep.SearchPlan {
	return sweep.SearchPlan{By: sweep.ByUsers, Users: sweep.UsersConversations, Limit: 8, StepDuration: 2 * time.Second, Target: 0.9,
		Tiers: []sweep.TierSpec{{Name: "fast"}, {Name: "slow"}}}
}

func (fakeTierSearch) Version() uint64 { return 1 }

func (fakeTierSearch) Current(ep int) (float64, time.Time, int, bool) {
	if ep == 1 {
		return 6, t0.Add(-1500 * time.Millisecond), 7, true
	}
	return 0, time.Time{}, 0, false
}

func judged(v sweep.Verdict, confirming bool) sweep.TierJudgement {
	return sweep.TierJudgement{Judged: true, Verdict: v, Confirming: confirming}
}

func (fakeTierSearch) Outcomes() []sweep.Outcome {
	step := func(load float64, j ...sweep.TierJudgement) sweep.Measurement {
		return sweep.Measurement{Load: load, Requests: 12, OutputTPS: 100 * load, Tiers: j}
	}
	return []sweep.Outcome{
		{Done: true, Steps: []sweep.Measurement{
			step(1, judged(sweep.Met, false), judged(sweep.Met, false)),
			step(2, judged(sweep.Met, false), judged(sweep.Met, false)),
			step(4, judged(sweep.Missed, false), judged(sweep.Met, false)),
			step(3, judged(sweep.Missed, false), sweep.TierJudgement{}),
			step(8, sweep.TierJudgement{}, judged(sweep.Pending, false)),
		}, Tiers: []sweep.TierOutcome{
			{Name: "fast", Boundary: 2, FirstMiss: 3, Confirmed: true, Done: true},
			{Name: "slow", Boundary: 8, Confirmed: true, Done: true},
		}},
		{Steps: []sweep.Measurement{step(4, judged(sweep.Met, false), judged(sweep.Met, false))}, Tiers: []sweep.TierOutcome{
			{Name: "fast", Boundary: 4, FirstMiss: 8},
			{Name: "slow", Boundary: 4},
		}},
	}
}

// The ladder: a row per tier, a column per endpoint, each cell the boundary once confirmed or
// the bracket while searched; then the selected endpoint's steps with each tier's verdict.
func TestTierView(t *testing.T) {
	st := DefaultStyles()
	for _, w := range []int{80, 120} {
		out := ansi.Strip(renderSearch(&st, fakeTierSearch{}, []string{"a", "b"}, 0, t0, w, 24))
		for _, want := range []string{
			"find-max users 2 tiers · steps ≥ 2s and 10 requests · limit 8",
			"fast       2 ✓ (3 ✗)          [4, 8]",
			"slow       8 ✓                [4, …]",
			"B measuring users 6: 1.5s, 7 requests",
			"  users   req out tok/s fast   slow",
			"      4    12     400.0 ✗      ✓",
			"      3    12     300.0 ✗      ·",
			"      8    12     800.0 ·      ~",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("width %d: view lacks %q:\n%s", w, want, out)
			}
		}
		for i, line := range strings.Split(out, "\n") {
			if lw := ansi.StringWidth(line); lw > w {
				t.Errorf("width %d: line %d is %d wide", w, i, lw)
			}
		}
	}
}
