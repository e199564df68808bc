package feature

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"tokscope/sweep"
)

// A capacity search (--find-max) is its own mode with its own document: per endpoint the
// highest load that met the SLO target, the first that missed, and every step measured, in the
// order run (a load measured twice by the noise guard appears twice). docs/load.md, "Capacity
// search".

type jsonCapacityStep struct {
	Load       Number  `json:"load"`
	Requests   int     `json:"requests"`
	Attainment *Number `json:"attainment"`
	GoodputRPS *Number `json:"goodput_rps"` // null with tiers (no SLO)
	OutputTPS  Number  `json:"output_tps"`
	TTFTMSP50  *Number `json:"ttft_ms_p50"`
	TTFTMSP99  *Number `json:"ttft_ms_p99"`
	// With tiers: every tier's judgement of the step (tiers.go).
	Tiers          []jsonStepTier `json:"tiers,omitempty"`
	SessionsPerMin *Number        `json:"sessions_per_min,omitempty"`
	PowerW         *Number        `json:"power_w,omitempty"`
}

type jsonCapacity struct {
	By              string             `json:"by"`
	Max             *Number            `json:"max"`
	AttainmentAtMax *Number            `json:"attainment_at_max"`
	FirstMiss       *Number            `json:"first_miss"`
	Steps           []jsonCapacityStep `json:"steps"`
	// With tiers: each tier's boundary (tiers.go).
	Tiers []jsonTier `json:"tiers,omitempty"`
}

type jsonCapacityEndpoint struct {
	Name     string       `json:"name"`
	Model    string       `json:"model"`
	Capacity jsonCapacity `json:"capacity"`
}

type jsonCapacityDoc struct {
	Endpoints []jsonCapacityEndpoint `json:"endpoints"`
	SLOTarget Number                 `json:"slo_target"`
	// Only when TTFT is measured to another instant than the first token (--ttft-from).
	TTFTFrom string `json:"ttft_from,omitempty"`
	// Only when the run stopped before every search was done.
	Interrupted bool `json:"interrupted,omitempty"`
}

func capacityStep(m *sweep.Measurement) jsonCapacityStep {
	return jsonCapacityStep{
		Load: Number(m.Load), Requests: m.Requests,
		Attainment: NumberPtr(m.Attainment, m.Requests > 0),
		GoodputRPS: NumberPtr(m.GoodputRPS, true), OutputTPS: Number(m.OutputTPS),
		TTFTMSP50: NumberPtr(m.TTFT.P50, m.TTFT.Count > 0),
		TTFTMSP99: NumberPtr(m.TTFT.P99, m.TTFT.Count > 0),
	}
}

func capacityOf(rep *sweep.CapacityReport, o *sweep.Outcome) jsonCapacity {
	by := rep.Plan.By
	c := jsonCapacity{
		By: by, Max: NumberPtr(o.Max, o.Max > 0), AttainmentAtMax: NumberPtr(o.AttainmentAtMax, o.Max > 0),
		FirstMiss: NumberPtr(o.FirstMiss, o.FirstMiss > 0), Steps: make([]jsonCapacityStep, 0, len(o.Steps)),
	}
	for i := range o.Steps {
		st := capacityStep(&o.Steps[i])
		if len(rep.Plan.Tiers) > 0 {
			m := &o.Steps[i]
			st.Tiers = stepTiers(&rep.Plan, m)
			st.Attainment, st.GoodputRPS = nil, nil // a tier search has no single SLO
			st.SessionsPerMin = NumberPtr(m.SessionsPerMin, rep.Plan.By == sweep.ByUsers)
			st.PowerW = NumberPtr(m.PowerW, m.PowerOK)
		}
		c.Steps = append(c.Steps, st)
	}
	c.Tiers = tiersOf(rep, o)
	return c
}

// WriteCapacityJSON writes the search as one JSON document on one line:
//
//	{"endpoints": [{"name", "model", "capacity": {"by", "max", "attainment_at_max",
//	  "first_miss", "steps": [{"load", "requests", "attainment", "goodput_rps", "output_tps",
//	  "ttft_ms_p50", "ttft_ms_p99"}, ...]}}, ...], "slo_target"}
//
// max, attainment_at_max and first_miss are null when there is none (no load met; no load
// missed up to the limit); plus "ttft_from" when TTFT is not measured to the first token and
// "interrupted": true when the run stopped before every search was done.
func WriteCapacityJSON(w io.Writer, rep sweep.CapacityReport) error {
	doc := jsonCapacityDoc{SLOTarget: Number(rep.Plan.Target), Interrupted: !rep.Complete,
		Endpoints: make([]jsonCapacityEndpoint, 0, len(rep.Endpoints))}
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		doc.Endpoints = append(doc.Endpoints, jsonCapacityEndpoint{Name: e.Name, Model: e.Model, Capacity: capacityOf(&rep, &e.Outcome)})
	}
	if rep.TTFTFrom != "first-token" {
		doc.TTFTFrom = rep.TTFTFrom
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// capacityHeader is the CSV header: one row per step, the endpoint's answer repeated on each.
var capacityHeader = []string{
	"endpoint", "model", "by", "max", "attainment_at_max", "first_miss", "step", "load", "requests", "attainment",
	"goodput_rps", "output_tps", "ttft_ms_p50", "ttft_ms_p99", "verdict",
}

// verdictName is a step's verdict as the CSV and the table write it.
func verdictName(m *sweep.Measurement) string {
	switch m.Verdict {
	case sweep.Pending:
		return "within noise: re-measure"
	case sweep.Met:
		if m.Remeasured {
			return "met (re-measured)"
		}
		return "met"
	}
	if m.Remeasured {
		return "missed (re-measured)"
	}
	return "missed"
}

// WriteCapacityCSV writes a header row and one row per step of every endpoint, with the
// endpoint's answer on each row; a figure without data is an empty cell.
func WriteCapacityCSV(w io.Writer, rep sweep.CapacityReport) error {
	if len(rep.Plan.Tiers) > 0 {
		return writeTiersCSV(w, &rep)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(capacityHeader); err != nil {
		return err
	}
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		c := capacityOf(&rep, &e.Outcome)
		for k := range e.Steps {
			s := &c.Steps[k]
			row := []string{e.Name, e.Model, c.By, NumberCell(c.Max), NumberCell(c.AttainmentAtMax), NumberCell(c.FirstMiss),
				strconv.Itoa(k + 1), FormatNumber(float64(s.Load)), strconv.Itoa(s.Requests), NumberCell(s.Attainment),
				NumberCell(s.GoodputRPS), FormatNumber(float64(s.OutputTPS)), NumberCell(s.TTFTMSP50),
				NumberCell(s.TTFTMSP99), verdictName(&e.Steps[k])}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// CapacityAnswer is endpoint e's answer in one line, e.g. "max concurrency 12 (SLO met by
// 93 %), 13 missed (71 %); at 12: goodput 4.10 req/s, output 512.3 tok/s".
func CapacityAnswer(by string, e *sweep.EndpointCapacity) string {
	// Whole percents rounded down, so that 89.7 % of a miss against 0.9 never reads "90 %".
	pct := func(f float64) string { return strconv.FormatFloat(math.Floor(100*f+1e-9), 'f', 0, 64) + " %" }
	load := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	switch {
	case e.Max == 0 && e.FirstMiss > 0:
		return fmt.Sprintf("SLO missed even at %s %s (%s)", by, load(e.FirstMiss), pct(e.AttainmentAtMiss))
	case e.Max == 0:
		return "no answer: the search did not finish"
	}
	s := fmt.Sprintf("max %s %s (SLO met by %s)", by, load(e.Max), pct(e.AttainmentAtMax))
	switch {
	case !e.Done:
		s = "interrupted; so far " + s
		if e.FirstMiss > 0 {
			s += fmt.Sprintf(", %s missed (%s)", load(e.FirstMiss), pct(e.AttainmentAtMiss))
		}
	case e.FirstMiss > 0:
		s += fmt.Sprintf(", %s missed (%s)", load(e.FirstMiss), pct(e.AttainmentAtMiss))
	default:
		s += ", the limit: no load missed"
	}
	for i := len(e.Steps) - 1; i >= 0; i-- {
		if m := &e.Steps[i]; m.Load == e.Max && m.Verdict == sweep.Met {
			s += fmt.Sprintf("; at %s: goodput %s req/s, output %s tok/s", load(e.Max), TableNumber(m.GoodputRPS), TableNumber(m.OutputTPS))
			break
		}
	}
	return s
}

// WriteCapacityTable writes one answer line per endpoint, then its steps as an aligned table.
func WriteCapacityTable(w io.Writer, rep sweep.CapacityReport) error {
	by := rep.Plan.By
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		if len(rep.Plan.Tiers) == 0 {
			fmt.Fprintf(w, "%s: %s\n", e.Name, CapacityAnswer(by, e))
			continue
		}
		for k := range e.Tiers {
			fmt.Fprintf(w, "%s: %s\n", e.Name, TierAnswer(&rep, k, &e.Tiers[k]))
		}
	}
	fmt.Fprintln(w)
	if len(rep.Plan.Tiers) > 0 {
		return writeTierSteps(w, &rep)
	}
	ttft := "ttft"
	if rep.TTFTFrom != "first-token" {
		ttft = "ttft(" + rep.TTFTFrom + ")"
	}
	unit := map[string]string{sweep.ByConcurrency: "conc", sweep.ByRate: "req/s"}[by]
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t\n", strings.Join([]string{"endpoint", unit, "requests", "SLO met %", "goodput req/s", "out tok/s",
		ttft + " p50 ms", ttft + " p99 ms", "verdict"}, "\t"))
	cell := func(n *Number) string {
		if n == nil {
			return NoData
		}
		return TableNumber(float64(*n))
	}
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		for k := range e.Steps {
			s := capacityStep(&e.Steps[k])
			att := NoData
			if s.Attainment != nil {
				att = strconv.FormatFloat(100*float64(*s.Attainment), 'f', 1, 64)
			}
			row := []string{e.Name, FormatNumber(float64(s.Load)), strconv.Itoa(s.Requests), att, cell(s.GoodputRPS),
				TableNumber(float64(s.OutputTPS)), cell(s.TTFTMSP50), cell(s.TTFTMSP99), verdictName(&e.Steps[k])}
			fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nSLO target %s; steps of at least %s and %d requests; a step from 2 binomial standard errors below the target to 1 above is measured again and decided on both\n",
		FormatNumber(rep.Plan.Target), rep.Plan.StepDuration, sweep.MinStepRequests)
	if !rep.Complete {
		fmt.Fprintln(w, "interrupted: the searches that had not finished have no answer")
	}
	return nil
}

// capacityCharts draw a capacity search (--find-max): per endpoint, the attainment and the
// goodput of every load tried against the load, one curve per endpoint through the loads in
// order (a load measured twice by the noise guard at its pooled attainment), the target as a
// guide line and each endpoint's answer labelled "max N".
func capacityCharts(rep *sweep.CapacityReport, eps []ReportEndpoint) []Chart {
	if len(rep.Plan.Tiers) > 0 {
		return tierCharts(rep, eps)
	}
	unit := loadUnit(rep.Plan.By)
	att := Chart{ID: "capacity-attainment", Title: "SLO attainment by load", XLabel: unit, YLabel: "requests meeting every objective (%)",
		Note:      "One point per load tried (a load measured twice: both pooled); the dashed line is the target; the label marks each endpoint's answer.",
		YFromZero: true, LogX: true, Headroom: true, Refs: []RefLine{{Y: 100 * rep.Plan.Target, Label: "target"}}}
	good := Chart{ID: "capacity-goodput", Title: "Goodput by load", XLabel: unit, YLabel: "good requests/s",
		Note: "Requests that met every objective per second of each step.", YFromZero: true, LogX: true, Headroom: true}
	hundred := 100.0
	att.YMax = &hundred
	byName := map[string]*sweep.EndpointCapacity{}
	for i := range rep.Endpoints {
		byName[rep.Endpoints[i].Name] = &rep.Endpoints[i]
	}
	for i := range eps {
		e, ok := byName[eps[i].Name]
		if !ok || len(e.Steps) == 0 {
			continue
		}
		a := Layer{Ep: eps[i].Index, Kind: DrawLine}
		g := Layer{Ep: eps[i].Index, Kind: DrawLine}
		for _, m := range decided(e.Steps) {
			label := ""
			if m.Load == e.Max && e.Max > 0 {
				label = "max " + strconv.FormatFloat(m.Load, 'f', -1, 64)
			}
			a.Xs, a.Ys, a.Labels = append(a.Xs, m.Load), append(a.Ys, 100*m.Pooled), append(a.Labels, label)
			g.Xs, g.Ys, g.Labels = append(g.Xs, m.Load), append(g.Ys, m.GoodputRPS), append(g.Labels, label)
		}
		for _, pair := range []struct {
			c *Chart
			l Layer
		}{{&att, a}, {&good, g}} {
			marks := pair.l
			marks.Kind = DrawMarks
			pair.l.Labels = nil
			pair.c.Layers = append(pair.c.Layers, pair.l, marks)
			pair.c.Legend = append(pair.c.Legend, LegendItem{Text: eps[i].Name, Ep: eps[i].Index})
		}
	}
	return []Chart{att, good}
}

// loadUnit is the x axis of a search's charts.
func loadUnit(by string) string {
	return map[string]string{sweep.ByConcurrency: "concurrency (streams per endpoint)", sweep.ByRate: "arrival rate (requests/s per endpoint)",
		sweep.ByUsers: "users in flight (conversations per endpoint)"}[by]
}

// tierCharts draw a tier search: one chart per tier, its attainment against the load, one
// curve per endpoint through the loads that judged the tier, the boundary labelled. A tier's
// attainment at a step is the lowest, over its objectives, of the share of requests that met
// the bound over the share needed (TierAttainment): 100 % and above, every objective
// held.
func tierCharts(rep *sweep.CapacityReport, eps []ReportEndpoint) []Chart {
	byName := map[string]*sweep.EndpointCapacity{}
	for i := range rep.Endpoints {
		byName[rep.Endpoints[i].Name] = &rep.Endpoints[i]
	}
	var out []Chart
	for k := range rep.Plan.Tiers {
		spec := &rep.Plan.Tiers[k]
		c := Chart{ID: "tier-" + strconv.Itoa(k+1), Title: "Tier " + spec.Name + " (" + tierObjectives(spec) + ") by load",
			XLabel: loadUnit(rep.Plan.By), YLabel: "share meeting each bound ÷ share needed (%, the lowest objective)",
			Note:      "One point per step that judged the tier; at or above the dashed line every objective held. The label marks each endpoint's confirmed boundary.",
			YFromZero: true, LogX: true, Headroom: true, Refs: []RefLine{{Y: 100, Label: "holds"}}}
		for i := range eps {
			e, ok := byName[eps[i].Name]
			if !ok || k >= len(e.Tiers) {
				continue
			}
			l := Layer{Ep: eps[i].Index, Kind: DrawLine}
			for _, m := range byLoad(e.Steps) {
				if k >= len(m.Tiers) || !m.Tiers[k].Judged {
					continue
				}
				a, ok := TierAttainment(spec, &m.Tiers[k])
				if !ok {
					continue
				}
				label := ""
				if t := e.Tiers[k]; t.Confirmed && m.Load == t.Boundary && m.Tiers[k].Confirming {
					label = "boundary " + strconv.FormatFloat(m.Load, 'f', -1, 64)
				}
				l.Xs, l.Ys, l.Labels = append(l.Xs, m.Load), append(l.Ys, 100*a), append(l.Labels, label)
			}
			if len(l.Xs) == 0 {
				continue
			}
			marks := l
			marks.Kind = DrawMarks
			l.Labels = nil
			c.Layers = append(c.Layers, l, marks)
			c.Legend = append(c.Legend, LegendItem{Text: eps[i].Name, Ep: eps[i].Index})
		}
		out = append(out, c)
	}
	return out
}

func tierObjectives(t *sweep.TierSpec) string {
	parts := make([]string, len(t.Objectives))
	for i, o := range t.Objectives {
		parts[i] = o.Text
	}
	return strings.Join(parts, ", ")
}

// byLoad are steps in order of load (stable: a load's measurements in the order run).
func byLoad(steps []sweep.Measurement) []sweep.Measurement {
	out := slices.Clone(steps)
	slices.SortStableFunc(out, func(a, b sweep.Measurement) int { return cmp.Compare(a.Load, b.Load) })
	return out
}

// capacityTable is each endpoint's answer in a sentence (with tiers, one per tier).
func capacityTable(rep *sweep.CapacityReport) *SectionTable {
	t := &SectionTable{Header: []string{"endpoint", "answer"}}
	if len(rep.Plan.Tiers) > 0 {
		for i := range rep.Endpoints {
			e := &rep.Endpoints[i]
			for k := range e.Tiers {
				t.Rows = append(t.Rows, []string{e.Name, TierAnswer(rep, k, &e.Tiers[k])})
			}
		}
		return t
	}
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		t.Rows = append(t.Rows, []string{e.Name, CapacityAnswer(rep.Plan.By, e)})
	}
	return t
}

// decided are the steps that decided their load (a pending first measurement left out: its
// second pools both), in order of load.
func decided(steps []sweep.Measurement) []sweep.Measurement {
	var out []sweep.Measurement
	for _, m := range steps {
		if m.Verdict != sweep.Pending {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b sweep.Measurement) int {
		switch {
		case a.Load < b.Load:
			return -1
		case a.Load > b.Load:
			return 1
		}
		return 0
	})
	return out
}

// capacitySection is the capacity search's section, after a search (--find-max).
func capacitySection(r *Report) Section {
	if r.Capacity == nil {
		return Section{}
	}
	return Section{ID: "capacity", Title: "Capacity search", Intro: "Per endpoint, the highest load at which the target share of requests met every objective.",
		Charts: capacityCharts(r.Capacity, r.Endpoints), Table: capacityTable(r.Capacity)}
}

// capacityFeature is the capacity search (--find-max): its search is package sweep's
// (sweep.Search), its document this file's (WriteCapacityJSON and the rest, which
// export.WriteCapacity dispatches to), its report section here.
func capacityFeature() Feature {
	return Feature{Name: "capacity", Section: capacitySection, Prom: tierProm()}
}

// tierProm is a tier search's boundaries in Prometheus (--find-max with --tier):
// tokscope_tier_boundary_users{endpoint, model, tier}, set once the search has confirmed a
// tier's boundary on an endpoint (so a series exists only for a known answer; 0 when even one
// user missed the tier). Users are the search's load: conversations in flight (--find-max
// users), or the concurrency or rate of a --find-max concurrency|rate search with tiers.
func tierProm() *Prom {
	return &Prom{Families: []PromFamily{{Name: "tokscope_tier_boundary_users", Gauge: true, Labels: []string{"tier"},
		Help: "The highest load (users in flight for --find-max users) at which the tier held, confirmed by a step of its own; 0 when it missed even at 1."}},
		Tier: func(t *sweep.TierOutcome, emit func(int, []string, float64)) {
			if users, ok := t.Answer(); ok { // an endpoint stopped mid-search has no answer
				emit(0, []string{t.Name}, users)
			}
		}}
}

// The headless search's progress lines on stderr: one as each step starts and one as it ends,
// each with how long the search has run and what is left.

// StartLine is the line printed as a step begins, e.g. "tokscope: find-max a: step 4 starts:
// users 8; bracket [4, 16]".
func StartLine(name string, plan *sweep.SearchPlan, load float64, again bool, out *sweep.Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tokscope: find-max %s: step %d starts: %s %s", name, len(out.Steps)+1, plan.By, LoadText(load))
	if again {
		b.WriteString(" (re-measured: the last step was within noise)")
	}
	b.WriteString(bracketText(plan, out))
	return b.String()
}

// bracketText is where the search stands: "; bracket [4, 8]" or, with tiers, each tier's.
func bracketText(plan *sweep.SearchPlan, out *sweep.Outcome) string {
	if len(plan.Tiers) == 0 {
		if out.FirstMiss > 0 {
			return fmt.Sprintf("; bracket [%s, %s]", LoadText(out.Max), LoadText(out.FirstMiss))
		}
		return ""
	}
	parts := make([]string, 0, len(out.Tiers))
	for _, t := range out.Tiers {
		hi := "…"
		if t.FirstMiss > 0 {
			hi = LoadText(t.FirstMiss)
		}
		mark := ""
		if t.Confirmed {
			mark = " ✓"
		}
		parts = append(parts, fmt.Sprintf("%s [%s, %s]%s", t.Name, LoadText(t.Boundary), hi, mark))
	}
	return "; tiers " + strings.Join(parts, " ")
}

// ProgressNote is how long the search has run and what is left, e.g. " · 1m12s so far, ≈ 3
// steps (≈ 40s) left".
func ProgressNote(p sweep.SearchProgress, done bool) string {
	note := fmt.Sprintf(" · %s so far", p.Elapsed.Round(time.Second))
	switch {
	case done:
	case p.Ramping:
		note += fmt.Sprintf(", ramping: at most %d more doublings to the limit, then bisection", p.Left)
	case p.PerStep > 0:
		note += fmt.Sprintf(", ≈ %s (≈ %s) left", Counted(p.Left, "step"), (time.Duration(p.Left) * p.PerStep).Round(time.Second))
	default:
		note += fmt.Sprintf(", ≈ %s left", Counted(p.Left, "step"))
	}
	return note
}

// StepLine is the line printed as a step ends, e.g. "tokscope: find-max a: step 3 ended:
// concurrency 8 in 6.1s: 20 requests, SLO met by 70.0 % → missed; bracket [4, 8]".
func StepLine(name string, plan *sweep.SearchPlan, m *sweep.Measurement, out *sweep.Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tokscope: find-max %s: step %d ended: %s %s in %s: %d requests", name, len(out.Steps), plan.By, LoadText(m.Load), m.Duration.Round(100*time.Millisecond), m.Requests)
	if len(plan.Tiers) > 0 {
		b.WriteString(tierVerdicts(plan, m))
	} else {
		b.WriteString(sloVerdict(m))
	}
	if out.Done {
		if len(plan.Tiers) > 0 {
			return b.String() + "; done" + bracketText(plan, out)
		}
		return b.String() + "; done: " + CapacityAnswer(plan.By, &sweep.EndpointCapacity{Name: name, Outcome: *out})
	}
	return b.String() + bracketText(plan, out)
}

// sloVerdict is a single-target step's attainment and verdict.
func sloVerdict(m *sweep.Measurement) string {
	var b strings.Builder
	if m.Requests > 0 {
		fmt.Fprintf(&b, ", SLO met by %.1f %%", 100*m.Attainment)
	}
	switch {
	case m.Verdict == sweep.Pending:
		b.WriteString(" → within noise of the target: re-measuring")
	case m.Remeasured:
		fmt.Fprintf(&b, " → re-measured, %.1f %% over both: %s", 100*m.Pooled, map[bool]string{true: "met", false: "missed"}[m.Verdict == sweep.Met])
	default:
		b.WriteString(map[bool]string{true: " → met", false: " → missed"}[m.Verdict == sweep.Met])
	}
	return b.String()
}

// tierVerdicts is what a step decided for each tier it judged, with the figure of each
// objective: ", fast met (otps.p25 112), slow missed by ttft.p90<=15s (ttft.p90 16.2 s)".
func tierVerdicts(plan *sweep.SearchPlan, m *sweep.Measurement) string {
	var parts []string
	for i, j := range m.Tiers {
		if !j.Judged {
			continue
		}
		t := &plan.Tiers[i]
		v := map[sweep.Verdict]string{sweep.Met: "met", sweep.Missed: "missed", sweep.Pending: "within noise: re-measuring"}[j.Verdict]
		if j.Confirming && j.Verdict != sweep.Pending {
			v += map[bool]string{true: " (boundary confirmed)", false: " (boundary not confirmed)"}[j.Verdict == sweep.Met]
		}
		if j.Verdict == sweep.Missed && j.Binding >= 0 {
			v += " by " + t.Objectives[j.Binding].Text
		}
		if j.Remeasured {
			v += " over both steps"
			for k, c := range j.Pooled {
				v += fmt.Sprintf(" %d/%d", c.Good, c.N)
				if k < len(j.Pooled)-1 {
					v += ","
				}
			}
		}
		var figs []string
		for k := range t.Objectives {
			figs = append(figs, ObjectiveFigure(&t.Objectives[k], j.Counts[k]))
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", t.Name, v, strings.Join(figs, ", ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}

// Counted is n and its noun, "1 step", "3 steps".
func Counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
