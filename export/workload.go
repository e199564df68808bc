package export

import (
	"fmt"
	"strconv"

	"tokscope/metric"
	"tokscope/stats"
)

// The workload's figures (docs/outputs.md, contract additions): the prompt side of each request
// from the server's usage, e2e latency, throughput over the run's wall time, the last error,
// and — added keys beyond the contract — the cache mode that ran and how many requests
// reached their --output-tokens target.

// jsonOutputTarget counts the counted requests that asked for an exact output length
// (--output-tokens) and those that got it.
type jsonOutputTarget struct {
	Requests int `json:"requests"`
	Reached  int `json:"reached"`
}

// jsonWorkload are the endpoint keys of the workload after its distributions.
type jsonWorkload struct {
	OutputTPS    *number           `json:"output_tps"`
	RequestsPerS *number           `json:"requests_per_s"`
	LastError    *string           `json:"last_error"`
	Cache        *string           `json:"cache"`
	OutputTarget *jsonOutputTarget `json:"output_target"`
}

func workloadJSON(e *stats.EndpointStats) jsonWorkload {
	j := jsonWorkload{LastError: lastError(e)}
	if e.RunSpan > 0 {
		out, rps := number(e.OutputTPS), number(e.RequestsPerS)
		j.OutputTPS, j.RequestsPerS = &out, &rps
	}
	if e.Cache != "" {
		c := e.Cache
		j.Cache = &c
	}
	if e.TargetRequests > 0 {
		j.OutputTarget = &jsonOutputTarget{Requests: e.TargetRequests, Reached: e.TargetReached}
	}
	return j
}

// lastError is the most recent error's message (redacted by the probe), its kind when it
// had none; nil without errors.
func lastError(e *stats.EndpointStats) *string {
	if e.LastError == nil {
		return nil
	}
	msg := e.LastError.Message
	if msg == "" {
		msg = e.LastError.Kind
	}
	return &msg
}

// metricsCSVHeader are the CSV columns of the registered metrics of group g: key_p50 …
// key_max for a distribution, key alone for a mean.
func metricsCSVHeader(g metric.Group) []string {
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

// metricsCSV are the cells of metricsCSVHeader(g) from w; a figure without data is empty.
func metricsCSV(w *stats.Window, g metric.Group) []string {
	var row []string
	for _, id := range metric.IDs() {
		m, d := metric.Get(id), w.Of(id)
		switch {
		case m.Group != g || m.JSON == metric.None:
		case m.JSON == metric.Mean && d.Count > 0:
			row = append(row, formatNumber(d.Mean))
		case m.JSON == metric.Mean:
			row = append(row, "")
		default:
			row = append(row, distCells(d)...)
		}
	}
	return row
}

// workloadCSVHeader are the workload's scalar columns, after its distributions.
func workloadCSVHeader() []string {
	return []string{"output_tps", "requests_per_s", "last_error", "cache", "output_target_requests", "output_target_reached"}
}

func workloadCSV(e *stats.EndpointStats) []string {
	out, rps := "", ""
	if e.RunSpan > 0 {
		out, rps = formatNumber(e.OutputTPS), formatNumber(e.RequestsPerS)
	}
	last := ""
	if p := lastError(e); p != nil {
		last = *p
	}
	targets, reached := "", ""
	if e.TargetRequests > 0 {
		targets, reached = strconv.Itoa(e.TargetRequests), strconv.Itoa(e.TargetReached)
	}
	return []string{out, rps, last, e.Cache, targets, reached}
}

// distCells are a distribution's CSV cells in TableColumns order, empty without data.
func distCells(d stats.Dist) []string {
	cells := make([]string, 0, len(TableColumns))
	for _, v := range []float64{d.P50, d.P90, d.P99, d.Mean, d.Min, d.Max} {
		if d.Count == 0 {
			cells = append(cells, "")
		} else {
			cells = append(cells, formatNumber(v))
		}
	}
	return cells
}

// workloadLines are the table's lines about the workload: the cache mode, throughput, the
// output target and the last error, each only when there is something to say.
func workloadLines(e *stats.EndpointStats) []string {
	var lines []string
	switch e.Cache {
	case "bust":
		lines = append(lines, "cache bust (every prompt starts with a unique tag)")
	case "reuse":
		lines = append(lines, "cache reuse (prompts repeat: a prefix cache may serve them)")
	case "mixed":
		lines = append(lines, "cache mixed (records of bust and reuse)")
	}
	if e.RunSpan > 0 {
		lines = append(lines, fmt.Sprintf("throughput %s output tok/s  %s requests/s", tableNumber(e.OutputTPS), tableNumber(e.RequestsPerS)))
	}
	if e.TargetRequests > 0 {
		lines = append(lines, fmt.Sprintf("output target reached by %d of %d requests", e.TargetReached, e.TargetRequests))
	}
	if p := lastError(e); p != nil {
		lines = append(lines, "last error "+*p)
	}
	return lines
}

// metricRow is the table's row of metric id over w: whole counts (Kind Count) show without
// decimals but for the mean (785, not 785.00); a figure derived from N is marked ≈ when N
// was estimated.
func metricRow(id metric.ID, w *stats.Window, estimated bool) TableRow {
	m, d := metric.Get(id), w.Of(id)
	label := m.Label
	if m.FromOutputTokens && estimated {
		label += " ≈"
	}
	return countRow(m, tableRow(label, d), d)
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
