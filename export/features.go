package export

import (
	"tokscope/feature"
	"tokscope/stats"
)

// The features beside the metric registry — rate limits, turns and cache hits, the SLO, cost,
// the server's scrapes, GPU energy, the server's own clock, the client queue, agent sessions —
// give their part of the summaries as one feature.Feature each (package feature, one file
// per feature): their members of an endpoint's JSON object, their CSV columns, their table
// lines and rows. WriteJSON, WriteCSV and TableEndpoints walk feature.All(), as they walk the
// metric registry, each output putting a feature's part at the feature's place in it (its
// slot: the documented key and column orders place features differently in JSON, CSV and the
// table).

// featureJSON are the members the features put at slot of e's JSON object.
func featureJSON(e *stats.EndpointStats, at feature.JSONSlot) []feature.Member {
	var out []feature.Member
	for _, f := range feature.All() {
		if f.JSON != nil && f.JSONAt == at {
			out = append(out, f.JSON(e)...)
		}
	}
	return out
}

// featureCSVHeader are the features' columns in snap's run.
func featureCSVHeader(snap *stats.Snapshot) []string {
	var h []string
	for _, f := range feature.All() {
		if f.CSVHeader != nil {
			h = append(h, f.CSVHeader(snap)...)
		}
	}
	return h
}

// featureCSV are e's cells of featureCSVHeader(snap).
func featureCSV(snap *stats.Snapshot, e *stats.EndpointStats) []string {
	var row []string
	for _, f := range feature.All() {
		if f.CSV != nil {
			row = append(row, f.CSV(snap, e)...)
		}
	}
	return row
}

// featureLines are e's table lines of the features at slot.
func featureLines(snap *stats.Snapshot, e *stats.EndpointStats, at feature.LineSlot) []string {
	var out []string
	for _, f := range feature.All() {
		if f.Lines != nil && f.LinesAt == at {
			out = append(out, f.Lines(snap, e)...)
		}
	}
	return out
}

// featureRows are e's table rows of the features at slot.
func featureRows(snap *stats.Snapshot, e *stats.EndpointStats, at feature.RowSlot) []feature.TableRow {
	var out []feature.TableRow
	for _, f := range feature.All() {
		if f.Rows != nil && f.RowsAt == at {
			out = append(out, f.Rows(snap, e)...)
		}
	}
	return out
}
