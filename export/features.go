package export

import "tokscope/stats"

// The features beside the metric registry — rate limits, turns and cache hits, the SLO, cost,
// the server's scrapes, GPU energy, the server's own clock, the client queue, agent sessions —
// each give their part of the summaries as one feature value in their own file: their members
// of an endpoint's JSON object, their CSV columns, their table lines and rows. WriteJSON,
// WriteCSV and TableEndpoints walk features(), as they walk the metric registry, each output
// putting a feature's part at the feature's place in it (its slot: the documented key and
// column orders place features differently in JSON, CSV and the table). Adding a feature is
// one value and one line in features(); docs/architecture.md shows it.

// feature is one feature's part of the summaries. A nil function adds nothing to its output.
// Each function is given the whole Snapshot: a feature's CSV columns and table rows are there
// for every endpoint when one endpoint of the run has it (empty cells, —, for the others).
type feature struct {
	name string
	// jsonAt and json: the members of an endpoint's object (a key the feature leaves out
	// is not returned; a null one is, with a nil value).
	jsonAt jsonSlot
	json   func(e *stats.EndpointStats) []jsonMetric
	// csvHeader and csv: its columns in this run, and an endpoint's cells of them.
	csvHeader func(snap *stats.Snapshot) []string
	csv       func(snap *stats.Snapshot, e *stats.EndpointStats) []string
	// lines and rows: the table's lines above the distributions, and its rows after them.
	linesAt lineSlot
	lines   func(snap *stats.Snapshot, e *stats.EndpointStats) []string
	rowsAt  rowSlot
	rows    func(snap *stats.Snapshot, e *stats.EndpointStats) []TableRow
}

// jsonSlot is where a feature's members go in an endpoint's JSON object (docs/outputs.md's
// order): after the Core metrics, after the workload's scalars, or last.
type jsonSlot int

const (
	jsonMiddle jsonSlot = iota
	jsonTail
	jsonLast
)

// lineSlot is where a feature's table lines go: right after the counts and error kinds, after
// them with the run-level figures, or after the workload's lines.
type lineSlot int

const (
	linesHead lineSlot = iota
	linesMid
	linesTail
)

// rowSlot is where a feature's table rows go: after the registered metrics' rows (before the
// scrapes'), or last.
type rowSlot int

const (
	rowsMid rowSlot = iota
	rowsEnd
)

// features are the summaries' features, in CSV column order; within a slot, every output
// keeps this order.
func features() []feature {
	return []feature{rateLimitFeature(), turnsFeature(), sloFeature(), costFeature(), serverFeature(), gpuFeature(),
		serverTimingFeature(), queueFeature(), sessionsFeature()}
}

// featureJSON are the members the features put at slot of e's JSON object.
func featureJSON(e *stats.EndpointStats, at jsonSlot) []jsonMetric {
	var out []jsonMetric
	for _, f := range features() {
		if f.json != nil && f.jsonAt == at {
			out = append(out, f.json(e)...)
		}
	}
	return out
}

// featureCSVHeader are the features' columns in snap's run.
func featureCSVHeader(snap *stats.Snapshot) []string {
	var h []string
	for _, f := range features() {
		if f.csvHeader != nil {
			h = append(h, f.csvHeader(snap)...)
		}
	}
	return h
}

// featureCSV are e's cells of featureCSVHeader(snap).
func featureCSV(snap *stats.Snapshot, e *stats.EndpointStats) []string {
	var row []string
	for _, f := range features() {
		if f.csv != nil {
			row = append(row, f.csv(snap, e)...)
		}
	}
	return row
}

// featureLines are e's table lines of the features at slot.
func featureLines(snap *stats.Snapshot, e *stats.EndpointStats, at lineSlot) []string {
	var out []string
	for _, f := range features() {
		if f.lines != nil && f.linesAt == at {
			out = append(out, f.lines(snap, e)...)
		}
	}
	return out
}

// featureRows are e's table rows of the features at slot.
func featureRows(snap *stats.Snapshot, e *stats.EndpointStats, at rowSlot) []TableRow {
	var out []TableRow
	for _, f := range features() {
		if f.rows != nil && f.rowsAt == at {
			out = append(out, f.rows(snap, e)...)
		}
	}
	return out
}

// anyEndpoint reports whether an endpoint of snap has what has says.
func anyEndpoint(snap *stats.Snapshot, has func(e *stats.EndpointStats) bool) bool {
	for i := range snap.Endpoints {
		if has(&snap.Endpoints[i]) {
			return true
		}
	}
	return false
}

// line is a one-line feature's lines: none when it has nothing to say.
func line(l string) []string {
	if l == "" {
		return nil
	}
	return []string{l}
}
