package export

import (
	"fmt"
	"strings"
	"tokscope/feature"

	"tokscope/metric"
	"tokscope/stats"
)

// The table summary (-o table) as cells: WriteTable lays them out as aligned text, and the
// HTML report (package report) draws the same cells, so that both show the same figures with
// the same rounding from one piece of formatting code.

// TableEndpoint is one endpoint of the table summary.
type TableEndpoint struct {
	Name, Model, BaseURL string
	API                  string // the wire protocol; APILabel shows it when not chat
	// Lines are the lines above the distributions, in order: counts, error kinds, rate
	// Lines are the lines above the distributions, in order: counts, error kinds, rate
	// limits, open-loop arrivals, SLO, cost, server, output tokens, cache mode, throughput,
	// output target, last error.
	Lines []string
	Rows  []feature.TableRow
}

// TableEndpoints returns every endpoint of snap as WriteTable shows it.
// Every endpoint has the same rows: a feature's rows (the server's clock, the server's scrapes,
// the GPUs, the figures by turn) that one endpoint of the run has, every endpoint shows, with
// — where it has none, so that endpoints read side by side and rows never come and go.
func TableEndpoints(snap *stats.Snapshot) []TableEndpoint {
	out := make([]TableEndpoint, 0, len(snap.Endpoints))
	for i := range snap.Endpoints {
		out = append(out, tableEndpoint(snap, &snap.Endpoints[i]))
	}
	return out
}

func tableEndpoint(snap *stats.Snapshot, e *stats.EndpointStats) TableEndpoint {
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
	te.Lines = append(te.Lines, featureLines(snap, e, feature.LinesHead)...)
	te.Lines = append(te.Lines, featureLines(snap, e, feature.LinesMid)...)
	estimated := e.TokenSource == "estimate"
	switch {
	case e.TokenSource == "":
		te.Lines = append(te.Lines, "output tokens "+feature.NoData)
	case estimated:
		te.Lines = append(te.Lines, fmt.Sprintf("output tokens ≈%d (estimate)", e.OutputTokens))
	default:
		te.Lines = append(te.Lines, fmt.Sprintf("output tokens %d (%s)", e.OutputTokens, e.TokenSource))
	}
	te.Lines = append(te.Lines, workloadLines(e)...)
	te.Lines = append(te.Lines, featureLines(snap, e, feature.LinesTail)...)
	for _, id := range metric.IDs() {
		// The server's own clock is a feature's rows (servertiming.go): most servers say nothing.
		if m := metric.Get(id); m.Table && m.Group != metric.Server {
			te.Rows = append(te.Rows, feature.MetricRow(id, &e.Whole, estimated))
		}
	}
	te.Rows = append(te.Rows, featureRows(snap, e, feature.RowsMid)...)
	te.Rows = append(te.Rows, featureRows(snap, e, feature.RowsEnd)...)
	return te
}
