package report

import (
	"slices"
	"strings"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sweep"
)

// A capacity search gets its section: attainment and goodput against load, one curve per
// endpoint with its answer labelled, the target as a guide, and the answers in a table.
func TestCapacitySection(t *testing.T) {
	cfg, samples := synthRun(synthEndpoints, 20, 3, true)
	in := synthInput(t, cfg, samples)
	step := func(load float64, good int, v sweep.Verdict) sweep.Measurement {
		return sweep.Measurement{Load: load, Requests: 20, Good: good, Attainment: float64(good) / 20, Pooled: float64(good) / 20,
			GoodputRPS: float64(good) / 4, Verdict: v}
	}
	a := sweep.EndpointCapacity{Name: cfg[0].Name, Model: cfg[0].Model, Outcome: sweep.Outcome{Done: true,
		Steps: []sweep.Measurement{step(1, 20, sweep.Met), step(2, 20, sweep.Met), step(4, 5, sweep.Missed), step(3, 19, sweep.Met)},
		Max:   3, AttainmentAtMax: 0.95, FirstMiss: 4, AttainmentAtMiss: 0.25}}
	b := sweep.EndpointCapacity{Name: cfg[1].Name, Model: cfg[1].Model, Outcome: sweep.Outcome{Done: true,
		Steps: []sweep.Measurement{step(1, 2, sweep.Missed)}, FirstMiss: 1, AttainmentAtMiss: 0.1}}
	in.Capacity = &sweep.CapacityReport{Plan: sweep.SearchPlan{By: sweep.ByConcurrency, Limit: 256, StepDuration: time.Second, Target: 0.9},
		Endpoints: []sweep.EndpointCapacity{a, b}, TTFTFrom: "first-token", Complete: true}
	page := render(t, in)
	figs := figures(page)
	for _, id := range []string{"capacity-attainment", "capacity-goodput"} {
		texts := svgTexts(figs[id])
		for _, want := range []string{"max 3", cfg[0].Name, cfg[1].Name} {
			if !slices.Contains(texts, want) {
				t.Errorf("%s lacks %q: %q", id, want, texts)
			}
		}
		if strings.Count(strings.Join(texts, "\n"), "max ") != 1 {
			t.Errorf("%s: one answer labelled, got %q", id, texts)
		}
	}
	if !slices.Contains(svgTexts(figs["capacity-attainment"]), "target") {
		t.Error("no target line on the attainment chart")
	}
	for _, want := range []string{"Capacity search", "max concurrency 3 (SLO met by 95 %), 4 missed (25 %)", "SLO missed even at concurrency 1 (10 %)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// A tier search gets a chart per tier, its attainment against load, each endpoint's confirmed
// boundary labelled, and one answer per endpoint and tier in the table.
func TestTierSection(t *testing.T) {
	cfg, samples := synthRun(synthEndpoints, 20, 3, true)
	in := synthInput(t, cfg, samples)
	tiers := []sweep.TierSpec{{Name: "fast", Objectives: []sweep.ObjectiveSpec{{TierObjective: config.TierObjective{Text: "otps.p25>=100", Percentile: 25, AtLeast: true}, Limit: 100}}},
		{Name: "slow", Objectives: []sweep.ObjectiveSpec{{TierObjective: config.TierObjective{Text: "ttft.p90<=2s", Percentile: 90}, Limit: 2000}}}}
	judge := func(good int, v sweep.Verdict, confirming bool) sweep.TierJudgement {
		return sweep.TierJudgement{Judged: true, Verdict: v, Confirming: confirming, Counts: []sweep.ObjectiveCount{{N: 20, Good: good}}}
	}
	step := func(load float64, j ...sweep.TierJudgement) sweep.Measurement {
		return sweep.Measurement{Load: load, Requests: 20, OutputTPS: 50 * load, SessionsPerMin: 10 * load, Tiers: j}
	}
	confirm := step(2, judge(20, sweep.Met, true), sweep.TierJudgement{})
	confirmSlow := step(4, sweep.TierJudgement{}, judge(20, sweep.Met, true))
	a := sweep.EndpointCapacity{Name: cfg[0].Name, Model: cfg[0].Model, Outcome: sweep.Outcome{Done: true,
		Steps: []sweep.Measurement{step(1, judge(20, sweep.Met, false), judge(20, sweep.Met, false)), step(2, judge(20, sweep.Met, false), judge(20, sweep.Met, false)),
			step(4, judge(2, sweep.Missed, false), judge(20, sweep.Met, false)), step(3, judge(5, sweep.Missed, false), sweep.TierJudgement{}), confirm,
			confirmSlow},
		Tiers: []sweep.TierOutcome{{Name: "fast", Boundary: 2, FirstMiss: 3, Binding: "otps.p25>=100", Confirmed: true, Done: true, AtBoundary: &confirm},
			{Name: "slow", Boundary: 4, Confirmed: true, Done: true, AtBoundary: &confirmSlow}}}}
	in.Capacity = &sweep.CapacityReport{Plan: sweep.SearchPlan{By: sweep.ByUsers, Users: sweep.UsersConversations, Limit: 4, StepDuration: time.Second, Target: 0.9, Tiers: tiers},
		Endpoints: []sweep.EndpointCapacity{a}, TTFTFrom: "first-token", Complete: true}
	page := render(t, in)
	figs := figures(page)
	for id, want := range map[string]string{"tier-1": "boundary 2", "tier-2": "boundary 4"} {
		texts := svgTexts(figs[id])
		if !slices.Contains(texts, want) || !slices.Contains(texts, "holds") {
			t.Errorf("%s lacks %q or the guide line: %q", id, want, texts)
		}
	}
	for _, want := range []string{"fast (otps.p25&gt;=100): 2 users, 3 missed by otps.p25&gt;=100; at 2: 100.0 tok/s, 20.00 sessions/min",
		"slow (ttft.p90&lt;=2s): 4 users, the limit: no load missed; at 4: 200.0 tok/s, 40.00 sessions/min"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
