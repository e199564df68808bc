package feature

import (
	"slices"
	"strings"
	"time"

	"tokscope/stats"
	"tokscope/sweep"
)

// The report's vocabulary: a feature's section of the HTML report (package report draws it)
// as data — charts, series over the run's time, a table — made of what the report holds
// (Report): the summary's Snapshot and what it kept of each request.

// Report is what a feature's section is made of.
type Report struct {
	Snap *stats.Snapshot
	// Endpoints are the report's, by name: the summary's and those whose requests it kept.
	Endpoints []ReportEndpoint
	// Axis is the run's time axis, from the first request's t0 to the last one's end; no bins
	// (Bins == 0) before any request.
	Axis TimeAxis
	// Capacity is the result of a capacity search (--find-max); nil otherwise.
	Capacity *sweep.CapacityReport
}

// ReportEndpoint is one endpoint of the report.
type ReportEndpoint struct {
	Index int    // its place in the report: its colour (Layer.Ep, LegendItem.Ep)
	Name  string // its name
	// Stats are its figures in the summary; nil when the summary does not list it.
	Stats *stats.EndpointStats
	// Kept reports whether the report kept its requests (a live run's, or a replay's
	// records): Requests is then every finished, non-warm-up background request, in t0
	// order.
	Kept     bool
	Requests []Request
}

// Request is what the report kept of one finished, non-warm-up background request.
type Request struct {
	Start, End int64 // Unix ns of t0 and of the end of the request
	Counted    bool  // ok: in the latency and speed figures, as in stats
	TTFT       float64
	Decode     float64 // client decode tok/s
	TTFTOK     bool
	DecodeOK   bool
	// Kept is what the feature whose section this is kept of it (Feature.Keep): nil when it
	// kept nothing.
	Kept any
}

// Section is a part of the report beyond the built-in ones: a feature's (Feature.Section), or
// one handed in (report.Input.Sections). One without an ID is left out; one without charts
// shows only when one of its series has a point or its table a row. Series are drawn over
// the run's time, beside the client's, in the endpoints' colours.
type Section struct {
	ID, Title string
	Intro     string        // a sentence under the title
	Charts    []Chart       // drawn first; a section with charts shows, data or not
	Series    []TimeSeries  // one chart each, over the run's time axis
	Table     *SectionTable // optional
}

// TimeSeries is one chart of a Section: values over the run, one line per endpoint.
type TimeSeries struct {
	ID, Title string
	YLabel    string // with its unit
	Note      string
	Points    map[string][]TimePoint // by endpoint name
}

// TimePoint is one value of a TimeSeries.
type TimePoint struct {
	At    time.Time
	Value float64
}

// SectionTable is a table of a Section.
type SectionTable struct {
	Header []string
	Rows   [][]string
}

// With is sec with those of series that have points and the table when it has rows.
func (sec Section) With(series []TimeSeries, table *SectionTable) Section {
	for _, ts := range series {
		if len(ts.Points) > 0 {
			sec.Series = append(sec.Series, ts)
		}
	}
	if len(table.Rows) > 0 {
		sec.Table = table
	}
	return sec
}

// byName is snap's endpoints ordered by name, as every part of the report lists them: a
// replay's endpoints come in the order of their first record, not the configuration's.
func byName(snap *stats.Snapshot) []*stats.EndpointStats {
	eps := make([]*stats.EndpointStats, len(snap.Endpoints))
	for i := range snap.Endpoints {
		eps[i] = &snap.Endpoints[i]
	}
	slices.SortStableFunc(eps, func(a, b *stats.EndpointStats) int { return strings.Compare(a.Name, b.Name) })
	return eps
}
