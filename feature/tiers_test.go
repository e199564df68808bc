package feature

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sweep"
)

// tierReport is a scripted tier search of one endpoint: fast confirmed at 2 (3 missed, with a
// GPU reading of 500 W on its confirming step), slow not yet confirmed (interrupted).
func tierReport() sweep.CapacityReport {
	obj := func(text string, q float64, atLeast bool, limit float64) sweep.ObjectiveSpec {
		return sweep.ObjectiveSpec{TierObjective: config.TierObjective{Text: text, Percentile: q, AtLeast: atLeast}, Limit: limit}
	}
	tiers := []sweep.TierSpec{{Name: "fast", Objectives: []sweep.ObjectiveSpec{obj("otps.p25>=100", 25, true, 100)}},
		{Name: "slow", Objectives: []sweep.ObjectiveSpec{obj("ttft.p90<=2s", 90, false, 2000)}}}
	j := func(v sweep.Verdict, good int, confirming bool) sweep.TierJudgement {
		return sweep.TierJudgement{Judged: true, Verdict: v, Confirming: confirming, Counts: []sweep.ObjectiveCount{{N: 20, Good: good, Value: 120, ValueOK: true}}}
	}
	confirm := sweep.Measurement{Load: 2, Requests: 20, OutputTPS: 250, SessionsPerMin: 30, PowerW: 500, PowerOK: true,
		Tiers: []sweep.TierJudgement{j(sweep.Met, 20, true), {}}}
	steps := []sweep.Measurement{
		{Load: 1, Requests: 20, OutputTPS: 150, SessionsPerMin: 20, Tiers: []sweep.TierJudgement{j(sweep.Met, 20, false), j(sweep.Met, 20, false)}},
		{Load: 2, Requests: 20, OutputTPS: 240, SessionsPerMin: 29, Tiers: []sweep.TierJudgement{j(sweep.Met, 20, false), j(sweep.Met, 20, false)}},
		{Load: 4, Requests: 20, OutputTPS: 300, SessionsPerMin: 35, Tiers: []sweep.TierJudgement{j(sweep.Missed, 2, false), j(sweep.Met, 20, false)}},
		{Load: 3, Requests: 20, OutputTPS: 280, SessionsPerMin: 32, Tiers: []sweep.TierJudgement{j(sweep.Missed, 10, false), {}}},
		confirm,
	}
	return sweep.CapacityReport{Plan: sweep.SearchPlan{By: sweep.ByUsers, Users: sweep.UsersConversations, Limit: 8, StepDuration: time.Second, Target: 0.9, Tiers: tiers, Accelerators: 4},
		TTFTFrom: "first-token", Endpoints: []sweep.EndpointCapacity{{Name: "a", Model: "m", Outcome: sweep.Outcome{Steps: steps,
			Tiers: []sweep.TierOutcome{{Name: "fast", Boundary: 2, FirstMiss: 3, Binding: "otps.p25>=100", Confirmed: true, Done: true, AtBoundary: &confirm},
				{Name: "slow", Boundary: 4}}}}}}
}

func TestTiersJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCapacityJSON(&buf, tierReport()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Endpoints []struct {
			Capacity struct {
				Tiers []map[string]any
				Steps []struct {
					Attainment any
					Goodput    any `json:"goodput_rps"`
					Tiers      []map[string]any
				}
			}
		}
		Interrupted bool
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Endpoints[0].Capacity
	fast, slow := c.Tiers[0], c.Tiers[1]
	for k, want := range map[string]any{"boundary": 2.0, "first_miss": 3.0, "bound_by": "otps.p25>=100", "confirmed": true, "output_tps": 250.0,
		"sessions_per_min": 30.0, "users_per_gpu": 0.5, "users_per_kw": 4.0, "tokens_per_joule": 0.5} {
		if fast[k] != want {
			t.Errorf("fast %s = %v, want %v", k, fast[k], want)
		}
	}
	for _, k := range []string{"boundary", "first_miss", "bound_by", "output_tps", "users_per_gpu", "users_per_kw"} {
		if v, ok := slow[k]; !ok || v != nil {
			t.Errorf("slow (not confirmed) %s = %v, want null", k, v)
		}
	}
	if !doc.Interrupted {
		t.Error("a search with a tier not done is interrupted")
	}
	st := c.Steps[3]
	if st.Attainment != nil || st.Goodput != nil || st.Tiers[1]["judged"] != false || st.Tiers[1]["verdict"] != nil || st.Tiers[0]["verdict"] != "missed" {
		t.Errorf("step 4: %+v", st)
	}
	if a := st.Tiers[0]["attainment"]; a != 0.667 { // 10/20 met the bound, 0.75 needed
		t.Errorf("step 4 fast attainment %v, want 0.667", a)
	}
}

func TestTiersTable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCapacityTable(&buf, tierReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"a: fast (otps.p25>=100): 2 users, 3 missed by otps.p25>=100; at 2: 250.0 tok/s, 30.00 sessions/min, 0.500 per GPU, 4.00 per kW, 0.500 tok/J",
		"a: slow (ttft.p90<=2s): no answer: the search did not finish",
		"  met+c     ·", "missed     ·",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
