package report

import (
	"slices"
	"strings"
	"testing"
	"time"

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
