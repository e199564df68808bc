package sweep

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/metric"
	"tokscope/probe"
	"tokscope/sample"
	"tokscope/sim"
	"tokscope/workload"
)

func mustTiers(t *testing.T, flags ...string) []TierSpec {
	t.Helper()
	var ts []config.Tier
	for _, f := range flags {
		tier, err := config.ParseTierFlag(f)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tier)
	}
	specs, err := ResolveTiers(ts)
	if err != nil {
		t.Fatal(err)
	}
	return specs
}

// scripted runs a tier search's decisions against a server whose every request at load L has
// metric value speed(L) (one objective per tier, 20 requests a step), and returns the loads
// tried and the outcome.
func scripted(plan SearchPlan, pass func(tier int, load float64) bool) ([]float64, Outcome) {
	s := newTierSearch(plan)
	var loads []float64
	for range 200 {
		load, _, ok := s.next()
		if !ok {
			break
		}
		loads = append(loads, load)
		m := Measurement{Load: load, Requests: 20}
		for i := range plan.Tiers {
			good := 0
			if pass(i, load) {
				good = 20
			}
			m.Tiers = append(m.Tiers, TierJudgement{Counts: []ObjectiveCount{{N: 20, Good: good}}})
		}
		s.record(m)
	}
	return loads, s.outcome()
}

// Three tiers with boundaries 3, 11 and 40 (limit 256): one search finds each, confirms each
// boundary with a step of its own, and never judges a tier outside its bracket.
func TestTierSearchDecisions(t *testing.T) {
	truth := []float64{3, 11, 40}
	plan := SearchPlan{By: ByUsers, Users: UsersConversations, Limit: 256, Target: 0.9,
		Tiers: mustTiers(t, "a=otps.p50>=100", "b=otps.p50>=50", "c=ttft.p90<=2s")}
	loads, out := scripted(plan, func(i int, load float64) bool { return load <= truth[i] })
	t.Logf("loads tried: %v", loads)
	if !out.Done {
		t.Fatal("search not done")
	}
	for i, want := range truth {
		to := out.Tiers[i]
		if to.Boundary != want || to.FirstMiss != want+1 || !to.Confirmed || to.AtBoundary == nil || to.AtBoundary.Load != want {
			t.Errorf("tier %s: boundary %v first miss %v confirmed %v, want %v and %v", to.Name, to.Boundary, to.FirstMiss, to.Confirmed, want, want+1)
		}
		confirms := 0
		for _, m := range out.Steps {
			if j := m.Tiers[i]; j.Judged && j.Confirming {
				confirms++
			}
		}
		if confirms != 1 {
			t.Errorf("tier %s confirmed by %d steps, want 1", to.Name, confirms)
		}
	}
	if len(loads) > 25 {
		t.Errorf("%d steps for three tiers", len(loads))
	}
}

// A boundary that misses when held for confirmation is not reported: it becomes the first
// miss and the bracket reopens below it.
func TestTierSearchConfirmationFails(t *testing.T) {
	plan := SearchPlan{By: ByConcurrency, Limit: 64, Target: 0.9, Tiers: mustTiers(t, "a=ttft.p90<=1s")}
	seen := map[float64]int{}
	_, out := scripted(plan, func(_ int, load float64) bool {
		seen[load]++
		if load == 4 { // passes the first time, misses when confirmed
			return seen[load] == 1
		}
		return load < 4
	})
	to := out.Tiers[0]
	if to.Boundary != 3 || to.FirstMiss != 4 || !to.Confirmed {
		t.Errorf("boundary %v first miss %v confirmed %v, want 3 and 4", to.Boundary, to.FirstMiss, to.Confirmed)
	}
}

// A tier missed at load 1 has no boundary, and the search of the others goes on.
func TestTierSearchMissedAtOne(t *testing.T) {
	plan := SearchPlan{By: ByConcurrency, Limit: 16, Target: 0.9, Tiers: mustTiers(t, "never=otps.p50>=1000", "always=ttft.p50<=10s")}
	_, out := scripted(plan, func(i int, _ float64) bool { return i == 1 })
	if a, b := out.Tiers[0], out.Tiers[1]; a.Boundary != 0 || a.FirstMiss != 1 || b.Boundary != 16 || b.FirstMiss != 0 || !b.Confirmed {
		t.Errorf("never: %v/%v; always: %v/%v (confirmed %v)", a.Boundary, a.FirstMiss, b.Boundary, b.FirstMiss, b.Confirmed)
	}
}

// An objective's share: P25 ≥ B needs three requests in four at or above B; failures are the
// worst values; the percentile shown is the matching rank from the top.
func TestObjectiveCount(t *testing.T) {
	spec := mustTiers(t, "x=otps.p25>=30")[0].Objectives[0]
	v := &tierValues{values: map[metric.ID][]float64{spec.ID: {10, 30, 40, 50}}}
	c := v.count(&spec)
	if c.N != 4 || c.Good != 3 || !c.ValueOK || c.Value != 30 {
		t.Errorf("count %+v, want 3 of 4 good, p25 30", c)
	}
	v.failed = 1 // a fifth request failed: 3 of 5 (60 %) reach 30
	c = v.count(&spec)
	if c.N != 5 || c.Good != 3 || c.Value != 10 { // the 4th from the top of 5, the failure lowest
		t.Errorf("with a failure: %+v", c)
	}
	if verdict, b := judgeTier(&TierSpec{Objectives: []ObjectiveSpec{spec}}, []ObjectiveCount{{N: 40, Good: 24}}, false); verdict != Missed || b != 0 {
		t.Errorf("24 of 40 at need 0.75: verdict %v binding %d, want a miss bound by objective 0", verdict, b)
	}
}

// tierProfile is a server with k batch slots whose per-stream speed falls with the requests
// it runs: 400 / n tok/s (BatchSlowdown 1), 30 tokens an answer, 50 ms to the first token.
func tierProfile(k int) sim.Profile {
	return sim.Profile{Name: "tiers", Model: "m", TTFT: 50 * time.Millisecond, TokensPerSecond: 400, BatchSlowdown: 1, MaxTokens: 30, MaxRunning: k}
}

// runTierSearch searches one endpoint of p with conversations of 3 turns as the users.
func runTierSearch(t *testing.T, plan SearchPlan, p sim.Profile) (Outcome, error) {
	t.Helper()
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	eps := []config.Endpoint{{Name: p.Name, Model: p.Model, BaseURL: srv.BaseURL(p.Name), Prompt: "hi",
		MaxTokens: p.MaxTokens, Concurrency: 1, Timeout: 20 * time.Second, Stall: 10 * time.Second, Turns: 3}}
	works, err := workload.ForEndpoints(eps, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSearch(plan, eps, 1, sample.TTFTFirstToken, func(_ sample.EndpointIndex, m Measurement, _ Outcome) {
		line := fmt.Sprintf("users %g: %d requests in %v, %.0f tok/s, %.1f sessions/min:", m.Load, m.Requests, m.Duration.Round(time.Millisecond), m.OutputTPS, m.SessionsPerMin)
		for i, j := range m.Tiers {
			if j.Judged {
				line += fmt.Sprintf(" %s=%v(%.0f)", plan.Tiers[i].Name, j.Verdict, j.Counts[len(j.Counts)-1].Value)
			}
		}
		t.Log(line)
	})
	r := probe.NewRunner(eps, probe.Options{Warmup: 1, Workloads: works, OnStart: []func(string, uint64){s.OnStart}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	done := make(chan struct{})
	go func() {
		for ev := range r.Events() { // the run's loop: the search observes its events
			s.Observe(ev)
		}
		close(done)
	}()
	go r.Run(ctx)
	err = s.Run(ctx, r)
	r.Stop(0)
	<-done
	return s.Outcomes()[0], err
}

// Exactness on the simulator: with 5 batch slots and a per-stream speed of 400/n tok/s at n
// requests in flight, the boundaries are known in advance: P25 speed ≥ 160 holds up to 2
// users (200 tok/s; 133 at 3), ≥ 115 up to 3 (133; 100 at 4), and a TTFT P90 ≤ 120 ms up to
// the 5 slots (a sixth conversation's every turn waits for a slot, a whole answer). One
// search finds all three, each boundary confirmed, and a boundary's reported throughput is
// its confirming step's own measurement.
func TestTierSearchExactOnSimulator(t *testing.T) {
	plan := SearchPlan{By: ByUsers, Users: UsersConversations, Limit: 64, StepDuration: 400 * time.Millisecond, Grace: 5 * time.Second, Target: 0.9,
		Tiers: mustTiers(t, "fast=otps.p25>=160", "medium=otps.p25>=115,ttft.p90<=1s", "slots=ttft.p90<=120ms")}
	start := time.Now()
	out, err := runTierSearch(t, plan, tierProfile(5))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("three tiers searched in %v, %d steps", time.Since(start).Round(time.Millisecond), len(out.Steps))
	for i, want := range []float64{2, 3, 5} {
		to := out.Tiers[i]
		t.Logf("%s: boundary %v, first miss %v (%s)", to.Name, to.Boundary, to.FirstMiss, to.Binding)
		if !to.Done || !to.Confirmed || math.Abs(to.Boundary-want) > 1 || to.FirstMiss != to.Boundary+1 {
			t.Errorf("%s: boundary %v first miss %v (done %v, confirmed %v), want %v (±1 step) and the next load", to.Name, to.Boundary, to.FirstMiss, to.Done, to.Confirmed, want)
			continue
		}
		if to.Boundary != want {
			t.Logf("%s: off the truth %v by one step", to.Name, want)
		}
		found := false
		for _, m := range out.Steps {
			if m.Start.Equal(to.AtBoundary.Start) {
				found = m.OutputTPS == to.AtBoundary.OutputTPS && m.SessionsPerMin == to.AtBoundary.SessionsPerMin && m.Load == to.Boundary
			}
		}
		if !found || to.AtBoundary.OutputTPS <= 0 || to.AtBoundary.SessionsPerMin <= 0 {
			t.Errorf("%s: the boundary's throughput %.1f tok/s, %.1f sessions/min is not its step's", to.Name, to.AtBoundary.OutputTPS, to.AtBoundary.SessionsPerMin)
		}
	}
	if out.Tiers[2].Binding != "ttft.p90<=120ms" {
		t.Errorf("slots tier bound by %q, want its TTFT objective", out.Tiers[2].Binding)
	}
}

// A search stopped before a boundary was confirmed has no answer for that tier (nothing for
// the gate or the Prometheus gauge to report); a tier missed at load 1 answers 0.
func TestTierAnswerWhenStopped(t *testing.T) {
	plan := SearchPlan{By: ByConcurrency, Limit: 64, Target: 0.9, Tiers: mustTiers(t, "a=ttft.p90<=1s", "b=otps.p50>=1")}
	s := newTierSearch(plan)
	for _, pass := range [][2]bool{{true, false}, {true, false}} { // loads 1 and 2: a passes, b misses at 1
		load, _, _ := s.next()
		m := Measurement{Load: load}
		for _, p := range pass {
			good := map[bool]int{true: 20, false: 0}[p]
			m.Tiers = append(m.Tiers, TierJudgement{Counts: []ObjectiveCount{{N: 20, Good: good}}})
		}
		s.record(m)
	}
	s.stop()
	out := s.outcome()
	if users, ok := out.Tiers[0].Answer(); ok || out.Tiers[0].Boundary != 2 {
		t.Errorf("a: answer %v %v with candidate %v, want none", users, ok, out.Tiers[0].Boundary)
	}
	if users, ok := out.Tiers[1].Answer(); !ok || users != 0 {
		t.Errorf("b: answer %v %v, want 0", users, ok)
	}
}

// Two tiers sharing a bracket cost the steps of one: the estimate counts them once.
func TestTierSearchLeft(t *testing.T) {
	plan := SearchPlan{By: ByUsers, Users: UsersConversations, Limit: 8, Target: 0.9, Tiers: mustTiers(t, "a=ttft.p90<=1s", "b=ttft.p90<=2s")}
	s := newTierSearch(plan)
	for _, load := range []float64{1, 2, 4} {
		got, _, _ := s.next()
		if got != load {
			t.Fatalf("next %v, want %v", got, load)
		}
		good := map[bool]int{true: 20, false: 0}[load < 4]
		s.record(Measurement{Load: load, Tiers: []TierJudgement{{Counts: []ObjectiveCount{{N: 20, Good: good}}}, {Counts: []ObjectiveCount{{N: 20, Good: good}}}}})
	}
	if n, ramping := s.left(); n != 2 || ramping { // bisect at 3, confirm the boundary
		t.Errorf("left %d (ramping %v), want 2: one bisection and one confirmation serve both tiers", n, ramping)
	}
}
