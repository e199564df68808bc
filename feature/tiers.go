package feature

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"tokscope/metric"
	"tokscope/sweep"
)

// Tiers of a capacity search (--find-max with --tier): per endpoint and tier the boundary (the
// highest load that met the tier, confirmed by a step of its own), the first load that missed,
// the objective that bound it, and the throughput at the boundary (the confirming step's own
// measurement) with, given --accelerators and --gpu-metrics, users per GPU, users per kW and
// tokens per joule there. docs/outputs.md, "Tiers".

// TierFigures are what a tier's boundary gives, each absent (ok false) when unknown.
type TierFigures struct {
	OutputTPS, SessionsPerMin, UsersPerGPU, UsersPerKW, TokensPerJoule float64
	OutputOK, SessionsOK, PerGPUOK, PerKWOK, PerJouleOK                bool
}

// BoundaryFigures reads tier t's boundary figures; accelerators is --accelerators (0: none).
func BoundaryFigures(t *sweep.TierOutcome, accelerators int) TierFigures {
	var f TierFigures
	m := t.AtBoundary
	if m == nil || t.Boundary <= 0 {
		return f
	}
	f.OutputTPS, f.OutputOK = m.OutputTPS, true
	f.SessionsPerMin, f.SessionsOK = m.SessionsPerMin, m.SessionsPerMin > 0
	if accelerators > 0 {
		f.UsersPerGPU, f.PerGPUOK = t.Boundary/float64(accelerators), true
	}
	if m.PowerOK && m.PowerW > 0 {
		f.UsersPerKW, f.PerKWOK = t.Boundary/(m.PowerW/1000), true
		f.TokensPerJoule, f.PerJouleOK = m.OutputTPS/m.PowerW, true
	}
	return f
}

// TierAttainment is how a step stood against tier spec: the lowest, over its objectives, of the
// share of requests that met the bound divided by the share needed (1 or more: the objective
// held); false when an objective had nothing to judge.
func TierAttainment(spec *sweep.TierSpec, j *sweep.TierJudgement) (float64, bool) {
	a := math.Inf(1)
	for k := range spec.Objectives {
		if k >= len(j.Counts) || j.Counts[k].N == 0 {
			return 0, false
		}
		c := j.Counts[k]
		share, need := float64(c.Good)/float64(c.N), spec.Objectives[k].Need()
		r := share / need
		if need == 0 {
			r = map[bool]float64{true: 1, false: 0}[c.Good > 0]
		}
		a = min(a, r)
	}
	return a, !math.IsInf(a, 1)
}

// ObjectiveFigure is an objective's percentile over a step and the share that met its bound,
// e.g. "otps.p25 112.3 tok/s, 19/20 ≥ 30".
func ObjectiveFigure(o *sweep.ObjectiveSpec, c sweep.ObjectiveCount) string {
	m := metric.Get(o.ID)
	name := strings.SplitN(o.Text, ">", 2)[0]
	name = strings.SplitN(name, "<", 2)[0]
	val := NoData
	if c.ValueOK {
		val = TableNumber(c.Value)
		if m.Unit != "" {
			val += " " + m.Unit
		}
	}
	op := map[bool]string{true: "≥", false: "≤"}[o.AtLeast]
	return fmt.Sprintf("%s %s, %d/%d %s %s", strings.TrimSpace(name), val, c.Good, c.N, op, o.Bound)
}

type jsonObjective struct {
	Objective string  `json:"objective"`
	Value     *Number `json:"value"`    // the percentile, in the metric's unit (ms for times)
	Share     *Number `json:"share"`    // of the judged requests that met the bound
	Need      Number  `json:"need"`     // the share the objective needs
	Requests  int     `json:"requests"` // judged
}

type jsonStepTier struct {
	Name       string          `json:"name"`
	Judged     bool            `json:"judged"`
	Verdict    *string         `json:"verdict"` // met, missed, within_noise; null when not judged
	Confirming bool            `json:"confirming,omitempty"`
	Remeasured bool            `json:"remeasured,omitempty"` // the verdict pools this step and the one before
	Attainment *Number         `json:"attainment"`
	Objectives []jsonObjective `json:"objectives"`
}

type jsonTier struct {
	Name           string   `json:"name"`
	Objectives     []string `json:"objectives"`
	Boundary       *Number  `json:"boundary"`
	FirstMiss      *Number  `json:"first_miss"`
	BoundBy        *string  `json:"bound_by"`
	Confirmed      bool     `json:"confirmed"`
	OutputTPS      *Number  `json:"output_tps"`
	SessionsPerMin *Number  `json:"sessions_per_min"`
	UsersPerGPU    *Number  `json:"users_per_gpu"`
	UsersPerKW     *Number  `json:"users_per_kw"`
	TokensPerJoule *Number  `json:"tokens_per_joule"`
}

func tiersOf(rep *sweep.CapacityReport, o *sweep.Outcome) []jsonTier {
	if len(rep.Plan.Tiers) == 0 {
		return nil
	}
	out := make([]jsonTier, 0, len(o.Tiers))
	for i := range o.Tiers {
		t := &o.Tiers[i]
		f := BoundaryFigures(t, rep.Plan.Accelerators)
		jt := jsonTier{Name: t.Name, Boundary: NumberPtr(t.Boundary, t.Confirmed && t.Boundary > 0),
			FirstMiss: NumberPtr(t.FirstMiss, t.FirstMiss > 0), Confirmed: t.Confirmed,
			OutputTPS: NumberPtr(f.OutputTPS, f.OutputOK), SessionsPerMin: NumberPtr(f.SessionsPerMin, f.SessionsOK),
			UsersPerGPU: NumberPtr(f.UsersPerGPU, f.PerGPUOK), UsersPerKW: NumberPtr(f.UsersPerKW, f.PerKWOK),
			TokensPerJoule: NumberPtr(f.TokensPerJoule, f.PerJouleOK)}
		if t.Binding != "" {
			b := t.Binding
			jt.BoundBy = &b
		}
		for _, ob := range rep.Plan.Tiers[i].Objectives {
			jt.Objectives = append(jt.Objectives, ob.Text)
		}
		out = append(out, jt)
	}
	return out
}

func stepTiers(plan *sweep.SearchPlan, m *sweep.Measurement) []jsonStepTier {
	if len(m.Tiers) == 0 {
		return nil
	}
	out := make([]jsonStepTier, 0, len(m.Tiers))
	for i := range m.Tiers {
		j, spec := &m.Tiers[i], &plan.Tiers[i]
		st := jsonStepTier{Name: spec.Name, Judged: j.Judged, Confirming: j.Confirming, Remeasured: j.Remeasured}
		if j.Judged {
			v := map[sweep.Verdict]string{sweep.Met: "met", sweep.Missed: "missed", sweep.Pending: "within_noise"}[j.Verdict]
			st.Verdict = &v
		}
		a, ok := TierAttainment(spec, j)
		st.Attainment = NumberPtr(a, ok)
		for k := range spec.Objectives {
			var c sweep.ObjectiveCount // none: a step of a search stopped before measuring
			if k < len(j.Counts) {
				c = j.Counts[k]
			}
			share := 0.0
			if c.N > 0 {
				share = float64(c.Good) / float64(c.N)
			}
			st.Objectives = append(st.Objectives, jsonObjective{Objective: spec.Objectives[k].Text,
				Value: NumberPtr(c.Value, c.ValueOK), Share: NumberPtr(share, c.N > 0), Need: Number(spec.Objectives[k].Need()), Requests: c.N})
		}
		out = append(out, st)
	}
	return out
}

// tiersHeader is the CSV of a tier search: one row per endpoint and tier.
var tiersHeader = []string{"endpoint", "model", "by", "tier", "objectives", "boundary", "first_miss", "bound_by", "confirmed",
	"output_tps", "sessions_per_min", "users_per_gpu", "users_per_kw", "tokens_per_joule"}

// writeTiersCSV writes one row per endpoint and tier; an unknown figure is an empty cell.
func writeTiersCSV(w io.Writer, rep *sweep.CapacityReport) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(tiersHeader); err != nil {
		return err
	}
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		for _, t := range tiersOf(rep, &e.Outcome) {
			bound := ""
			if t.BoundBy != nil {
				bound = *t.BoundBy
			}
			row := []string{e.Name, e.Model, rep.Plan.By, t.Name, strings.Join(t.Objectives, ","), NumberCell(t.Boundary),
				NumberCell(t.FirstMiss), bound, strconv.FormatBool(t.Confirmed), NumberCell(t.OutputTPS), NumberCell(t.SessionsPerMin),
				NumberCell(t.UsersPerGPU), NumberCell(t.UsersPerKW), NumberCell(t.TokensPerJoule)}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// TierAnswer is one tier's answer on one endpoint in a line, e.g. "fast (otps.p25>=100): 6
// users, 7 missed by otps.p25>=100; at 6: 412.3 tok/s, 38.1 sessions/min".
func TierAnswer(rep *sweep.CapacityReport, i int, t *sweep.TierOutcome) string {
	objs := make([]string, len(rep.Plan.Tiers[i].Objectives))
	for k, o := range rep.Plan.Tiers[i].Objectives {
		objs[k] = o.Text
	}
	load := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	s := fmt.Sprintf("%s (%s): ", t.Name, strings.Join(objs, ","))
	switch {
	case t.Boundary == 0 && t.FirstMiss > 0:
		return s + fmt.Sprintf("missed even at %s %s, by %s", rep.Plan.By, load(t.FirstMiss), t.Binding)
	case !t.Confirmed:
		return s + "no answer: the search did not finish"
	}
	s += fmt.Sprintf("%s %s", load(t.Boundary), rep.Plan.By)
	if t.FirstMiss > 0 {
		s += fmt.Sprintf(", %s missed by %s", load(t.FirstMiss), t.Binding)
	} else {
		s += ", the limit: no load missed"
	}
	f := BoundaryFigures(t, rep.Plan.Accelerators)
	s += fmt.Sprintf("; at %s: %s tok/s", load(t.Boundary), TableNumber(f.OutputTPS))
	if f.SessionsOK {
		s += ", " + TableNumber(f.SessionsPerMin) + " sessions/min"
	}
	if f.PerGPUOK {
		s += ", " + TableNumber(f.UsersPerGPU) + " per GPU"
	}
	if f.PerKWOK {
		s += fmt.Sprintf(", %s per kW, %s tok/J", TableNumber(f.UsersPerKW), TableNumber(f.TokensPerJoule))
	}
	return s
}

// writeTierSteps writes a tier search's steps as an aligned table: each step's load, requests,
// output tok/s and TTFT, then every tier's verdict on it (met, missed, noise: measured again;
// "+c" a confirming step; "·" not judged: outside the tier's bracket).
func writeTierSteps(w io.Writer, rep *sweep.CapacityReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"endpoint", rep.Plan.By, "requests", "out tok/s", "ttft p50 ms", "ttft p99 ms"}
	for _, t := range rep.Plan.Tiers {
		head = append(head, t.Name)
	}
	fmt.Fprintf(tw, "%s\t\n", strings.Join(head, "\t"))
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		for k := range e.Steps {
			m := &e.Steps[k]
			s := capacityStep(m)
			cell := func(n *Number) string {
				if n == nil {
					return NoData
				}
				return TableNumber(float64(*n))
			}
			row := []string{e.Name, FormatNumber(m.Load), strconv.Itoa(m.Requests), TableNumber(m.OutputTPS), cell(s.TTFTMSP50), cell(s.TTFTMSP99)}
			for j := range rep.Plan.Tiers {
				row = append(row, tierVerdictCell(m, j))
			}
			fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nsteps of at least %s and %d requests; per tier: met, missed, noise (within noise of an objective's need: measured again, decided on both), +c a confirming step, · not judged (outside the tier's bracket)\n",
		rep.Plan.StepDuration, sweep.MinStepRequests)
	if !rep.Complete {
		fmt.Fprintln(w, "interrupted: the tiers whose search had not finished have no answer")
	}
	return nil
}

// tierVerdictCell is tier j's verdict on step m in a word.
func tierVerdictCell(m *sweep.Measurement, j int) string {
	if j >= len(m.Tiers) || !m.Tiers[j].Judged {
		return "·"
	}
	v := map[sweep.Verdict]string{sweep.Met: "met", sweep.Missed: "missed", sweep.Pending: "noise"}[m.Tiers[j].Verdict]
	if m.Tiers[j].Confirming {
		v += "+c"
	}
	return v
}
