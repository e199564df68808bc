// Package feature holds the features beside the metric registry — rate limits, turns and
// cache hits, the SLO, cost, the server's scrapes, GPU energy, the server's own clock, the
// client queue, agent sessions, the capacity search — as their outputs show them: each is one
// Feature value in its own file, with its part of the summaries (JSON members, CSV columns,
// table lines and rows, each at its place), its report section (charts as data), its card
// line (styled spans), its detail-view lines, its compare columns and its Prometheus
// families, written in this package's neutral vocabulary. Its figures are package stats'
// (an accumulator each, stats/features.go); export, report, ui and promexport walk All() as
// they walk the metric registry, and keep only their layout. docs/architecture.md says how to
// add one.
package feature

import (
	"tokscope/config"
	"tokscope/sample"
	"tokscope/stats"
)

// Feature is one feature as the outputs show it: its part of the summaries, its section of
// the report, its line on the cards, its lines in the detail view, its compare columns, its
// Prometheus families. A nil part adds nothing to its output. The summary's
// functions are given the whole Snapshot: a feature's CSV columns and table rows are there
// for every endpoint when one endpoint of the run has it (empty cells, —, for the others).
type Feature struct {
	Name string
	// JSONAt and JSON: the members of an endpoint's object (a key the feature leaves out
	// is not returned; a null one is, with a nil value).
	JSONAt JSONSlot
	JSON   func(e *stats.EndpointStats) []Member
	// CSVHeader and CSV: its columns in this run, and an endpoint's cells of them.
	CSVHeader func(snap *stats.Snapshot) []string
	CSV       func(snap *stats.Snapshot, e *stats.EndpointStats) []string
	// Lines and Rows: the table's lines above the distributions, and its rows after them.
	LinesAt LineSlot
	Lines   func(snap *stats.Snapshot, e *stats.EndpointStats) []string
	RowsAt  RowSlot
	Rows    func(snap *stats.Snapshot, e *stats.EndpointStats) []TableRow

	// Section is its section of the HTML report (section.go); where it goes on the page is
	// the report's. Keep is what the report keeps of each finished, non-warm-up background
	// request of endpoint ep for it (Request.Kept), when its section needs more than the
	// Snapshot: a value, not a pointer into s.
	Section func(r *Report) Section
	Keep    func(s *sample.Sample, ep *config.Endpoint, from sample.TTFTFrom) any

	// Card is its line on an endpoint's card in the live view (terminal.go).
	Card *Card
	// DetailAt and Detail: its lines in the detail view's side column; none when it has
	// nothing to say.
	DetailAt DetailSlot
	Detail   func(e *stats.EndpointStats) []DetailLine
	// Compare is its columns of the compare table.
	Compare *Compare
	// Prom is its Prometheus families (prom.go).
	Prom *Prom
}

// All are the features, in CSV column order; within a slot, every output keeps this order.
// The outputs walk it on every frame and request: it is built once, and read only.
func All() []Feature { return all }

var all = []Feature{rateLimitFeature(), turnsFeature(), sloFeature(), costFeature(), serverFeature(), gpuFeature(),
	serverTimingFeature(), queueFeature(), sessionsFeature(), capacityFeature()}
