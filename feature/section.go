package feature

import (
	"slices"
	"strings"
	"time"

	"tokscope/stats"
)

// The report's vocabulary: a feature's section of the HTML report (package report draws it)
// as data — series over the run's time and a table — made of a Snapshot alone.

// Section is a part of the report beyond the built-in ones, shown only when one of its
// series has a point or its table a row. It is how SLO attainment and the server's own
// metrics join the report: series over the run's time, beside the client's, in the
// endpoints' colours.
type Section struct {
	ID, Title string
	Intro     string        // a sentence under the title
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
