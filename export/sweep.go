package export

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"tokscope/feature"

	"tokscope/sweep"
)

// A sweep (--sweep) is its own mode with its own document: one row per step and endpoint,
// steps in the order run, endpoints in configuration order. The summary of the other modes
// is not written in this mode.

// jsonSweepStep is one row of the "sweep" list. Figures without data are null; aggregate_tps
// is always a number (tokens that arrived during the step's window, per second: 0 when none
// did).
type jsonSweepStep struct {
	Step         int             `json:"step"`
	Endpoint     string          `json:"endpoint"`
	Model        string          `json:"model"`
	Concurrency  int             `json:"concurrency"`
	DurationS    feature.Number  `json:"duration_s"`
	Requests     int             `json:"requests"`
	OK           int             `json:"ok"`
	Errors       int             `json:"errors"`
	Truncated    int             `json:"truncated"`
	Cut          int             `json:"cut"` // still in flight a grace after the step's end: not errors
	ErrorPct     *feature.Number `json:"error_pct"`
	TokenSource  *string         `json:"token_source"`
	AggregateTPS feature.Number  `json:"aggregate_tps"`
	DecodeTPSP50 *feature.Number `json:"decode_tps_p50"`
	TTFTMSP50    *feature.Number `json:"ttft_ms_p50"`
	TTFTMSP99    *feature.Number `json:"ttft_ms_p99"`
}

type jsonSweep struct {
	Sweep []jsonSweepStep `json:"sweep"`
	// Only when TTFT is measured to another instant than the first token (--ttft-from).
	TTFTFrom string `json:"ttft_from,omitempty"`
	// Only when the run stopped before the sweep completed: the steps listed are the ones
	// that ended.
	Interrupted bool `json:"interrupted,omitempty"`
}

// sweepHeader is the CSV header; the JSON keys in the same order.
var sweepHeader = []string{
	"step", "endpoint", "model", "concurrency", "duration_s", "requests", "ok", "errors", "truncated", "cut",
	"error_pct", "token_source", "aggregate_tps", "decode_tps_p50", "ttft_ms_p50", "ttft_ms_p99",
}

func sweepRow(r *sweep.Result) jsonSweepStep {
	pct, pctOK := r.ErrorPct()
	row := jsonSweepStep{
		Step: r.Step, Endpoint: r.Endpoint, Model: r.Model, Concurrency: r.Concurrency,
		DurationS: feature.Number(r.Duration.Seconds()),
		Requests:  r.Requests, OK: r.OK, Errors: r.Errors, Truncated: r.Truncated, Cut: r.Cut,
		ErrorPct:     feature.NumberPtr(pct, pctOK),
		AggregateTPS: feature.Number(r.AggregateTPS),
		DecodeTPSP50: feature.NumberPtr(r.DecodeTPS.P50, r.DecodeTPS.Count > 0),
		TTFTMSP50:    feature.NumberPtr(r.TTFT.P50, r.TTFT.Count > 0),
		TTFTMSP99:    feature.NumberPtr(r.TTFT.P99, r.TTFT.Count > 0),
	}
	if r.TokenSource != "" {
		src := r.TokenSource
		row.TokenSource = &src
	}
	return row
}

// WriteSweepJSON writes the sweep as one JSON document on one line:
//
//	{"sweep": [{"step", "endpoint", "model", "concurrency", "duration_s", "requests", "ok",
//	  "errors", "truncated", "cut", "error_pct", "token_source", "aggregate_tps", "decode_tps_p50",
//	  "ttft_ms_p50", "ttft_ms_p99"}, ...]}
//
// plus "ttft_from" when TTFT is not measured to the first token and "interrupted": true when
// the run stopped before the sweep completed.
func WriteSweepJSON(w io.Writer, rep sweep.Report) error {
	out := jsonSweep{Sweep: make([]jsonSweepStep, 0, len(rep.Results)), Interrupted: !rep.Complete}
	for i := range rep.Results {
		out.Sweep = append(out.Sweep, sweepRow(&rep.Results[i]))
	}
	if rep.TTFTFrom != "first-token" {
		out.TTFTFrom = rep.TTFTFrom
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// WriteSweepCSV writes a header row and one row per step and endpoint with the fields of
// WriteSweepJSON; a figure without data is an empty cell.
func WriteSweepCSV(w io.Writer, rep sweep.Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(sweepHeader); err != nil {
		return err
	}
	for i := range rep.Results {
		r := sweepRow(&rep.Results[i])
		src := ""
		if r.TokenSource != nil {
			src = *r.TokenSource
		}
		row := []string{
			strconv.Itoa(r.Step), r.Endpoint, r.Model, strconv.Itoa(r.Concurrency),
			feature.FormatNumber(float64(r.DurationS)),
			strconv.Itoa(r.Requests), strconv.Itoa(r.OK), strconv.Itoa(r.Errors), strconv.Itoa(r.Truncated), strconv.Itoa(r.Cut),
			feature.NumberCell(r.ErrorPct), src, feature.FormatNumber(float64(r.AggregateTPS)),
			feature.NumberCell(r.DecodeTPSP50), feature.NumberCell(r.TTFTMSP50), feature.NumberCell(r.TTFTMSP99),
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// SweepTable is the sweep as -o table shows it, in cells: a header, one row per step and
// endpoint, and the notes under the table. WriteSweepTable lays it out as text; the HTML
// report draws the same cells.
type SweepTable struct {
	Header []string
	Rows   [][]string
	Notes  []string
}

// SweepTableOf returns rep's table; ≈ marks figures from estimated token counts, — a figure
// without data.
func SweepTableOf(rep *sweep.Report) SweepTable {
	ttft := "ttft"
	if rep.TTFTFrom != "first-token" {
		ttft = "ttft(" + rep.TTFTFrom + ")"
	}
	t := SweepTable{Header: []string{"step", "endpoint", "conc", "requests", "err %", "agg tok/s", "decode p50",
		ttft + " p50 ms", ttft + " p99 ms", "token source"}}
	cell := func(n *feature.Number, mark string) string {
		if n == nil {
			return feature.NoData
		}
		return mark + feature.TableNumber(float64(*n))
	}
	withCut := false // a "cut" column only when a step has cut requests
	for i := range rep.Results {
		withCut = withCut || rep.Results[i].Cut > 0
	}
	if withCut {
		t.Header = slices.Insert(t.Header, 4, "cut")
	}
	for i := range rep.Results {
		r := sweepRow(&rep.Results[i])
		mark, src := "", feature.NoData
		if r.TokenSource != nil {
			src = *r.TokenSource
			if src == "estimate" {
				mark = "≈"
			}
		}
		row := []string{
			strconv.Itoa(r.Step), r.Endpoint, strconv.Itoa(r.Concurrency), strconv.Itoa(r.Requests), cell(r.ErrorPct, ""),
			mark + feature.TableNumber(float64(r.AggregateTPS)), cell(r.DecodeTPSP50, mark),
			cell(r.TTFTMSP50, ""), cell(r.TTFTMSP99, ""), src,
		}
		if withCut {
			row = slices.Insert(row, 4, strconv.Itoa(r.Cut))
		}
		t.Rows = append(t.Rows, row)
	}
	if len(rep.Results) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("steps of %s; a request counts in the step it started in; agg tok/s = tokens that arrived during the step / its length",
			rep.Plan.StepDuration))
	}
	if withCut {
		t.Notes = append(t.Notes, fmt.Sprintf("cut: requests still in flight %s after their step ended (--grace); not errors, their TTFT counts",
			rep.Plan.Grace))
	}
	if !rep.Complete {
		t.Notes = append(t.Notes, "interrupted: only the steps that ended are shown")
	}
	return t
}

// WriteSweepTable writes the steps as an aligned table, one row per step and endpoint (the
// cells of SweepTableOf).
func WriteSweepTable(w io.Writer, rep sweep.Report) error {
	t := SweepTableOf(&rep)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, n := range t.Notes {
		if i == 0 && len(rep.Results) > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, n)
	}
	return nil
}
