package feature

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"tokscope/metric"
	"tokscope/stats"
)

// The summaries' vocabulary (package export writes them): the figures as JSON numbers and
// distributions, the table's rows and cells, and a feature's part of each output with its
// place (Summary). A feature writes its part in these words; export walks All() and lays the
// parts out at their places.

// JSONSlot is where a feature's members go in an endpoint's JSON object (docs/outputs.md's
// order): after the Core metrics, after the workload's scalars, or last.
type JSONSlot int

const (
	JSONMiddle JSONSlot = iota
	JSONTail
	JSONLast
)

// LineSlot is where a feature's table lines go: right after the counts and error kinds, after
// them with the run-level figures, or after the workload's lines.
type LineSlot int

const (
	LinesHead LineSlot = iota
	LinesMid
	LinesTail
)

// RowSlot is where a feature's table rows go: after the registered metrics' rows (before the
// scrapes'), or last.
type RowSlot int

const (
	RowsMid RowSlot = iota
	RowsEnd
)

// Number is a figure of the summary, written rounded to 3 decimals (µs for ms figures).
type Number float64

// Round3 is v rounded to 3 decimals, never -0.
func Round3(v float64) float64 {
	r := math.Round(v*1000) / 1000
	if r == 0 {
		return 0 // no "-0"
	}
	return r
}

// FormatNumber is v as the summaries write a Number.
func FormatNumber(v float64) string {
	return strconv.FormatFloat(Round3(v), 'f', -1, 64)
}

func (n Number) MarshalJSON() ([]byte, error) {
	v := float64(n)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil // never produced by stats; a guard, not a stand-in
	}
	return []byte(FormatNumber(v)), nil
}

// NumberPtr is v as a JSON number, nil (null) when !ok.
func NumberPtr(v float64, ok bool) *Number {
	if !ok {
		return nil
	}
	n := Number(v)
	return &n
}

// Dist is one distribution of the JSON summary, in docs/outputs.md's key order.
type Dist struct {
	P50  Number `json:"p50"`
	P90  Number `json:"p90"`
	P99  Number `json:"p99"`
	Mean Number `json:"mean"`
	Min  Number `json:"min"`
	Max  Number `json:"max"`
}

// ToDist is d in the JSON summary, nil (null) without data.
func ToDist(d stats.Dist) *Dist {
	if d.Count == 0 {
		return nil
	}
	return &Dist{Number(d.P50), Number(d.P90), Number(d.P99), Number(d.Mean), Number(d.Min), Number(d.Max)}
}

// Member is one key and value of an endpoint's JSON object: a *Dist, a *Number (nil: null) or
// a feature's object.
type Member struct {
	Key   string
	Value any
}

// MetricsJSON is the registered metrics of group g that the JSON summary carries, from the
// whole run, in registry order.
func MetricsJSON(w *stats.Window, g metric.Group) []Member {
	var out []Member
	for _, id := range metric.IDs() {
		m := metric.Get(id)
		if m.Group != g || m.JSON == metric.None {
			continue
		}
		d := w.Of(id)
		switch m.JSON {
		case metric.Mean:
			var v *Number
			if d.Count > 0 {
				n := Number(d.Mean)
				v = &n
			}
			out = append(out, Member{m.JSONKey(), v})
		default:
			out = append(out, Member{m.JSONKey(), ToDist(d)})
		}
	}
	return out
}

// NoData is a table cell without data.
const NoData = "—"

// TableColumns are the statistics of every TableRow, in order.
var TableColumns = []string{"p50", "p90", "p99", "mean", "min", "max"}

// TableRow is one distribution of the table: its label ("TTFT ms", "decode tok/s ≈") and one
// cell per TableColumns, "—" when there is no data.
type TableRow struct {
	Label string
	Cells []string
}

// Row is the table's row of d under label.
func Row(label string, d stats.Dist) TableRow {
	r := TableRow{Label: label, Cells: make([]string, 0, len(TableColumns))}
	for _, v := range []float64{d.P50, d.P90, d.P99, d.Mean, d.Min, d.Max} {
		if d.Count == 0 {
			r.Cells = append(r.Cells, NoData)
		} else {
			r.Cells = append(r.Cells, TableNumber(v))
		}
	}
	return r
}

// MetricRow is the table's row of metric id over w: whole counts (Kind Count) show without
// decimals but for the mean (785, not 785.00); a figure derived from N is marked ≈ when N
// was estimated.
func MetricRow(id metric.ID, w *stats.Window, estimated bool) TableRow {
	m, d := metric.Get(id), w.Of(id)
	label := m.Label
	if m.FromOutputTokens && estimated {
		label += " ≈"
	}
	return countRow(m, Row(label, d), d)
}

// countRow shows whole counts (Kind Count) without decimals but for the mean.
func countRow(m *metric.Metric, r TableRow, d stats.Dist) TableRow {
	if m.Kind == metric.Count && d.Count > 0 {
		for i, v := range []float64{d.P50, d.P90, d.P99, d.Mean, d.Min, d.Max} {
			if i != 3 {
				r.Cells[i] = strconv.FormatFloat(v, 'f', 0, 64)
			}
		}
	}
	return r
}

// TableNumber shows about four significant digits: 1234.5, 41.23, 0.125.
func TableNumber(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1 || a == 0:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// Cell is a CSV cell: v as a Number, empty when !ok.
func Cell(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return FormatNumber(v)
}

// NumberCell is a CSV cell of a Number, empty for null.
func NumberCell(n *Number) string {
	if n == nil {
		return ""
	}
	return FormatNumber(float64(*n))
}

// DistCells are a distribution's CSV cells in TableColumns order, empty without data.
func DistCells(d stats.Dist) []string {
	cells := make([]string, 0, len(TableColumns))
	for _, v := range []float64{d.P50, d.P90, d.P99, d.Mean, d.Min, d.Max} {
		if d.Count == 0 {
			cells = append(cells, "")
		} else {
			cells = append(cells, FormatNumber(v))
		}
	}
	return cells
}

// Percent is a share as the table says it: 97.5%.
func Percent(v float64) string { return strconv.FormatFloat(v*100, 'f', 1, 64) + "%" }

// USD is an amount in dollars with enough digits for small ones: $12.35, $0.0123.
func USD(v float64) string {
	switch {
	case v >= 100:
		return "$" + strconv.FormatFloat(v, 'f', 2, 64)
	case v >= 1:
		return "$" + strconv.FormatFloat(v, 'f', 3, 64)
	case v <= 0:
		return "$0"
	}
	decimals := min(2-int(math.Floor(math.Log10(v))), 12) // three significant digits
	return "$" + strconv.FormatFloat(v, 'f', decimals, 64)
}

// AnyEndpoint reports whether an endpoint of snap has what has says.
func AnyEndpoint(snap *stats.Snapshot, has func(e *stats.EndpointStats) bool) bool {
	for i := range snap.Endpoints {
		if has(&snap.Endpoints[i]) {
			return true
		}
	}
	return false
}

// Line is a one-line feature's lines: none when it has nothing to say.
func Line(l string) []string {
	if l == "" {
		return nil
	}
	return []string{l}
}

// Members is the members of an object (a struct, or a []Member) without its braces.
func Members(v any) ([]byte, error) {
	if ms, ok := v.([]Member); ok {
		var b []byte
		for i, m := range ms {
			if i > 0 {
				b = append(b, ',')
			}
			k, err := Marshal(m.Key)
			if err != nil {
				return nil, err
			}
			val, err := Marshal(m.Value)
			if err != nil {
				return nil, err
			}
			b = append(append(append(b, k...), ':'), val...)
		}
		return b, nil
	}
	obj, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	return obj[1 : len(obj)-1], nil
}

// Marshal is v's JSON as WriteJSON writes it: & < > left as they are.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// MetricsCSVHeader are the CSV columns of the registered metrics of group g: key_p50 …
// key_max for a distribution, key alone for a mean.
func MetricsCSVHeader(g metric.Group) []string {
	var h []string
	for _, id := range metric.IDs() {
		m := metric.Get(id)
		switch {
		case m.Group != g || m.JSON == metric.None:
		case m.JSON == metric.Mean:
			h = append(h, m.Key)
		default:
			for _, s := range TableColumns {
				h = append(h, m.Key+"_"+s)
			}
		}
	}
	return h
}

// MetricsCSV are the cells of MetricsCSVHeader(g) from w; a figure without data is empty.
func MetricsCSV(w *stats.Window, g metric.Group) []string {
	var row []string
	for _, id := range metric.IDs() {
		m, d := metric.Get(id), w.Of(id)
		switch {
		case m.Group != g || m.JSON == metric.None:
		case m.JSON == metric.Mean && d.Count > 0:
			row = append(row, FormatNumber(d.Mean))
		case m.JSON == metric.Mean:
			row = append(row, "")
		default:
			row = append(row, DistCells(d)...)
		}
	}
	return row
}
