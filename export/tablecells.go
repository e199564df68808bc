package export

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"tokscope/metric"
	"tokscope/stats"
)

// The table summary (-o table) as cells: WriteTable lays them out as aligned text, and the
// HTML report (package report) draws the same cells, so that both show the same figures with
// the same rounding from one piece of formatting code.

// TableColumns are the statistics of every TableRow, in order.
var TableColumns = []string{"p50", "p90", "p99", "mean", "min", "max"}

// TableRow is one distribution of the table: its label ("TTFT ms", "decode tok/s ≈") and one
// cell per TableColumns, "—" when there is no data.
type TableRow struct {
	Label string
	Cells []string
}

// TableEndpoint is one endpoint of the table summary.
type TableEndpoint struct {
	Name, Model, BaseURL string
	API                  string // the wire protocol; APILabel shows it when not chat
	// Lines are the lines above the distributions, in order: counts, error kinds, rate
	// Lines are the lines above the distributions, in order: counts, error kinds, rate
	// limits, open-loop arrivals, SLO, cost, server, output tokens, cache mode, throughput,
	// output target, last error.
	Lines []string
	Rows  []TableRow
}

// TableEndpoints returns every endpoint of snap as WriteTable shows it.
// Every endpoint has the same rows: a row family (the server's clock, the server's scrapes,
// the GPUs, the figures by turn) that one endpoint of the run has, every endpoint shows, with
// — where it has none, so that endpoints read side by side and rows never come and go.
func TableEndpoints(snap *stats.Snapshot) []TableEndpoint {
	fam := rowFamiliesOf(snap)
	out := make([]TableEndpoint, 0, len(snap.Endpoints))
	for i := range snap.Endpoints {
		out = append(out, tableEndpoint(snap, &snap.Endpoints[i], fam))
	}
	return out
}

// rowFamilies says which optional rows the run's table has (any endpoint has data for them).
type rowFamilies struct {
	server, gpu, turns, cacheHit bool
	// serverTiming: the metrics of the server's clock that a server of the run reported
	// (draft acceptance only under speculative decoding).
	serverTiming map[metric.ID]bool
}

func rowFamiliesOf(snap *stats.Snapshot) rowFamilies {
	f := rowFamilies{serverTiming: map[metric.ID]bool{}}
	for i := range snap.Endpoints {
		e := &snap.Endpoints[i]
		for _, id := range metric.IDs() {
			if metric.Get(id).Group == metric.Server && e.Whole.Of(id).Count > 0 {
				f.serverTiming[id] = true
			}
		}
		f.server = f.server || e.Server != nil && e.Server.Scrapes > 0
		f.gpu = f.gpu || e.GPU != nil && e.GPU.Scrapes > 0
		f.turns = f.turns || e.Turns != nil
		f.cacheHit = f.cacheHit || e.CacheHitRate != nil
	}
	return f
}

func tableEndpoint(snap *stats.Snapshot, e *stats.EndpointStats, fam rowFamilies) TableEndpoint {
	te := TableEndpoint{Name: e.Name, Model: e.Model, BaseURL: e.BaseURL, API: e.API}
	counts := fmt.Sprintf("requests %d  ok %d  errors %d  truncated %d", e.Requests, e.OK, e.Errors, e.Truncated)
	if e.Cut > 0 {
		counts += fmt.Sprintf("  cut %d", e.Cut) // in flight when the run ended: not errors
	}
	te.Lines = append(te.Lines, counts)
	if len(e.ErrorKinds) > 0 {
		kinds := strings.ReplaceAll(errorKindsText(e.ErrorKinds), ";", ", ")
		te.Lines = append(te.Lines, "error kinds "+strings.ReplaceAll(kinds, "=", ": "))
	}
	if l := rateLimitLine(e); l != "" {
		te.Lines = append(te.Lines, l)
	}
	if snap.Rate > 0 {
		te.Lines = append(te.Lines, arrivalsLine(snap.Rate, e))
	}
	for _, l := range []string{SLOLine(e), CostLine(e), ServerLine(e), GPULine(e), sessionsLine(e)} {
		if l != "" {
			te.Lines = append(te.Lines, l)
		}
	}
	estimated := e.TokenSource == "estimate"
	switch {
	case e.TokenSource == "":
		te.Lines = append(te.Lines, "output tokens "+noData)
	case estimated:
		te.Lines = append(te.Lines, fmt.Sprintf("output tokens ≈%d (estimate)", e.OutputTokens))
	default:
		te.Lines = append(te.Lines, fmt.Sprintf("output tokens %d (%s)", e.OutputTokens, e.TokenSource))
	}
	te.Lines = append(te.Lines, workloadLines(e)...)
	if fam.cacheHit {
		te.Lines = append(te.Lines, cacheHitLine(e))
	}
	if l := ModelLoadLine(e); l != "" {
		te.Lines = append(te.Lines, l)
	}
	for _, id := range metric.IDs() {
		// The server's own clock only in a run where a server reported it (most say nothing).
		if m := metric.Get(id); m.Table && m.Group != metric.Server {
			te.Rows = append(te.Rows, metricRow(id, &e.Whole, estimated))
		}
	}
	if fam.turns {
		te.Rows = append(te.Rows, turnRows(e)...)
	}
	for _, id := range metric.IDs() {
		if m := metric.Get(id); m.Table && m.Group == metric.Server && fam.serverTiming[id] {
			te.Rows = append(te.Rows, metricRow(id, &e.Whole, estimated))
		}
	}
	if snap.Rate > 0 {
		te.Rows = append(te.Rows, tableRow("client queue ms", e.Queue))
	}
	if fam.server {
		te.Rows = append(te.Rows, serverRows(e)...)
	}
	if fam.gpu {
		te.Rows = append(te.Rows, gpuRows(e)...)
	}
	return te
}

func tableRow(label string, d stats.Dist) TableRow {
	r := TableRow{Label: label, Cells: make([]string, 0, len(TableColumns))}
	for _, v := range []float64{d.P50, d.P90, d.P99, d.Mean, d.Min, d.Max} {
		if d.Count == 0 {
			r.Cells = append(r.Cells, noData)
		} else {
			r.Cells = append(r.Cells, tableNumber(v))
		}
	}
	return r
}

// rateLimitLine is an endpoint's rate-limit line, when a response carried rate-limit headers
// or the endpoint backed off: the latest remaining requests/tokens and the total time spent
// backing off after 429s (never part of any latency); "" otherwise.
func rateLimitLine(e *stats.EndpointStats) string {
	var parts []string
	if !e.RateLimitAt.IsZero() {
		count := func(n int) string {
			if n < 0 {
				return noData
			}
			return strconv.Itoa(n)
		}
		parts = append(parts, "rate limit remaining "+count(e.RateLimitRemainingRequests)+" requests, "+
			count(e.RateLimitRemainingTokens)+" tokens")
	}
	if e.BackoffTotal > 0 {
		parts = append(parts, "backed off "+e.BackoffTotal.Round(time.Millisecond).String()+" (not latency)")
	}
	return strings.Join(parts, "  ")
}

// arrivalsLine is the table's arrivals line of one endpoint (open-loop runs): the rate asked
// for and the one achieved (finished requests over the run), what was dropped, and what was
// still waiting at the end.
func arrivalsLine(rate float64, e *stats.EndpointStats) string {
	line := fmt.Sprintf("arrivals %d at %s/s", e.Arrivals, formatNumber(rate))
	if e.RunSpan > 0 {
		line += fmt.Sprintf(" (achieved %s requests/s)", tableNumber(e.RequestsPerS))
	}
	line += fmt.Sprintf("  dropped %d (queue full)", e.DroppedArrivals)
	if e.Waiting > 0 {
		line += fmt.Sprintf("  still waiting %d", e.Waiting)
	}
	return line
}
