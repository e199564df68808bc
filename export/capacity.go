package export

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"tokscope/feature"

	"tokscope/sweep"
)

// A capacity search (--find-max) is its own mode with its own document: per endpoint the
// highest load that met the SLO target, the first that missed, and every step measured, in the
// order run (a load measured twice by the noise guard appears twice). docs/load.md, "Capacity
// search".

// WriteCapacity writes the report of a capacity search in format, one of Formats.
func WriteCapacity(w io.Writer, format string, rep sweep.CapacityReport) error {
	return writeIn(w, format, rep, WriteCapacityTable, WriteCapacityJSON, WriteCapacityCSV)
}

type jsonCapacityStep struct {
	Load       feature.Number  `json:"load"`
	Requests   int             `json:"requests"`
	Attainment *feature.Number `json:"attainment"`
	GoodputRPS *feature.Number `json:"goodput_rps"` // null with tiers (no SLO)
	OutputTPS  feature.Number  `json:"output_tps"`
	TTFTMSP50  *feature.Number `json:"ttft_ms_p50"`
	TTFTMSP99  *feature.Number `json:"ttft_ms_p99"`
	// With tiers: every tier's judgement of the step (tiers.go).
	Tiers          []jsonStepTier  `json:"tiers,omitempty"`
	SessionsPerMin *feature.Number `json:"sessions_per_min,omitempty"`
	PowerW         *feature.Number `json:"power_w,omitempty"`
}

type jsonCapacity struct {
	By              string             `json:"by"`
	Max             *feature.Number    `json:"max"`
	AttainmentAtMax *feature.Number    `json:"attainment_at_max"`
	FirstMiss       *feature.Number    `json:"first_miss"`
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
	SLOTarget feature.Number         `json:"slo_target"`
	// Only when TTFT is measured to another instant than the first token (--ttft-from).
	TTFTFrom string `json:"ttft_from,omitempty"`
	// Only when the run stopped before every search was done.
	Interrupted bool `json:"interrupted,omitempty"`
}

func capacityStep(m *sweep.Measurement) jsonCapacityStep {
	return jsonCapacityStep{
		Load: feature.Number(m.Load), Requests: m.Requests,
		Attainment: optNumber(m.Attainment, m.Requests > 0),
		GoodputRPS: optNumber(m.GoodputRPS, true), OutputTPS: feature.Number(m.OutputTPS),
		TTFTMSP50: optNumber(m.TTFT.P50, m.TTFT.Count > 0),
		TTFTMSP99: optNumber(m.TTFT.P99, m.TTFT.Count > 0),
	}
}

func capacityOf(rep *sweep.CapacityReport, o *sweep.Outcome) jsonCapacity {
	by := rep.Plan.By
	c := jsonCapacity{
		By: by, Max: optNumber(o.Max, o.Max > 0), AttainmentAtMax: optNumber(o.AttainmentAtMax, o.Max > 0),
		FirstMiss: optNumber(o.FirstMiss, o.FirstMiss > 0), Steps: make([]jsonCapacityStep, 0, len(o.Steps)),
	}
	for i := range o.Steps {
		st := capacityStep(&o.Steps[i])
		if len(rep.Plan.Tiers) > 0 {
			m := &o.Steps[i]
			st.Tiers = stepTiers(&rep.Plan, m)
			st.Attainment, st.GoodputRPS = nil, nil // a tier search has no single SLO
			st.SessionsPerMin = optNumber(m.SessionsPerMin, rep.Plan.By == sweep.ByUsers)
			st.PowerW = optNumber(m.PowerW, m.PowerOK)
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
	doc := jsonCapacityDoc{SLOTarget: feature.Number(rep.Plan.Target), Interrupted: !rep.Complete,
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
			row := []string{e.Name, e.Model, c.By, numberCell(c.Max), numberCell(c.AttainmentAtMax), numberCell(c.FirstMiss),
				strconv.Itoa(k + 1), feature.FormatNumber(float64(s.Load)), strconv.Itoa(s.Requests), numberCell(s.Attainment),
				numberCell(s.GoodputRPS), feature.FormatNumber(float64(s.OutputTPS)), numberCell(s.TTFTMSP50),
				numberCell(s.TTFTMSP99), verdictName(&e.Steps[k])}
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
			s += fmt.Sprintf("; at %s: goodput %s req/s, output %s tok/s", load(e.Max), feature.TableNumber(m.GoodputRPS), feature.TableNumber(m.OutputTPS))
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
	cell := func(n *feature.Number) string {
		if n == nil {
			return feature.NoData
		}
		return feature.TableNumber(float64(*n))
	}
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		for k := range e.Steps {
			s := capacityStep(&e.Steps[k])
			att := feature.NoData
			if s.Attainment != nil {
				att = strconv.FormatFloat(100*float64(*s.Attainment), 'f', 1, 64)
			}
			row := []string{e.Name, feature.FormatNumber(float64(s.Load)), strconv.Itoa(s.Requests), att, cell(s.GoodputRPS),
				feature.TableNumber(float64(s.OutputTPS)), cell(s.TTFTMSP50), cell(s.TTFTMSP99), verdictName(&e.Steps[k])}
			fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nSLO target %s; steps of at least %s and %d requests; a step from 2 binomial standard errors below the target to 1 above is measured again and decided on both\n",
		feature.FormatNumber(rep.Plan.Target), rep.Plan.StepDuration, sweep.MinStepRequests)
	if !rep.Complete {
		fmt.Fprintln(w, "interrupted: the searches that had not finished have no answer")
	}
	return nil
}
