package export

import (
	"fmt"
	"strconv"

	"tokscope/stats"
)

// The workload's figures (DESIGN.md, contract additions): the prompt side of each request
// from the server's usage, e2e latency, throughput over the run's wall time, the last error,
// and — added keys beyond the contract — the cache mode that ran and how many requests
// reached their --output-tokens target.

// workloadDists are the workload's distributions, in output order, from the whole run.
var workloadDists = []struct {
	key, label string
	get        func(w *stats.Window) stats.Dist
	counts     bool // whole token counts: the table shows them without decimals (not the mean)
}{
	{"prompt_tokens", "prompt tokens", func(w *stats.Window) stats.Dist { return w.PromptTokens }, true},
	{"cached_tokens", "cached tokens", func(w *stats.Window) stats.Dist { return w.CachedTokens }, true},
	{"prefill_tps", "prefill tok/s", func(w *stats.Window) stats.Dist { return w.PrefillTPS }, false},
	{"e2e_ms", "e2e ms", func(w *stats.Window) stats.Dist { return w.E2E }, false},
}

// jsonOutputTarget counts the counted requests that asked for an exact output length
// (--output-tokens) and those that got it.
type jsonOutputTarget struct {
	Requests int `json:"requests"`
	Reached  int `json:"reached"`
}

// jsonWorkload are the endpoint keys of the workload, embedded in jsonEndpoint.
type jsonWorkload struct {
	PromptTokens *jsonDist         `json:"prompt_tokens"`
	CachedTokens *jsonDist         `json:"cached_tokens"`
	PrefillTPS   *jsonDist         `json:"prefill_tps"`
	E2E          *jsonDist         `json:"e2e_ms"`
	OutputTPS    *number           `json:"output_tps"`
	RequestsPerS *number           `json:"requests_per_s"`
	LastError    *string           `json:"last_error"`
	Cache        *string           `json:"cache"`
	OutputTarget *jsonOutputTarget `json:"output_target"`
}

func workloadJSON(e *stats.EndpointStats) jsonWorkload {
	w := e.Whole
	j := jsonWorkload{
		PromptTokens: toJSONDist(w.PromptTokens),
		CachedTokens: toJSONDist(w.CachedTokens),
		PrefillTPS:   toJSONDist(w.PrefillTPS),
		E2E:          toJSONDist(w.E2E),
		LastError:    lastError(e),
	}
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

// workloadCSVHeader are the columns WriteCSV writes after tokens_per_chunk.
func workloadCSVHeader() []string {
	var h []string
	for _, c := range workloadDists {
		for _, s := range TableColumns {
			h = append(h, c.key+"_"+s)
		}
	}
	return append(h, "output_tps", "requests_per_s", "last_error", "cache", "output_target_requests", "output_target_reached")
}

func workloadCSV(e *stats.EndpointStats) []string {
	var row []string
	for _, c := range workloadDists {
		row = append(row, distCells(c.get(&e.Whole))...)
	}
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
	return append(row, out, rps, last, e.Cache, targets, reached)
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

// workloadRows are the table's rows of the workload's distributions.
func workloadRows(e *stats.EndpointStats) []TableRow {
	rows := make([]TableRow, 0, len(workloadDists))
	for _, c := range workloadDists {
		r := tableRow(c.label, c.get(&e.Whole))
		if d := c.get(&e.Whole); c.counts && d.Count > 0 {
			// p50 … p99, min and max of whole counts are whole: 785, not 785.00.
			for i, v := range []float64{d.P50, d.P90, d.P99, d.Mean, d.Min, d.Max} {
				if i != 3 {
					r.Cells[i] = strconv.FormatFloat(v, 'f', 0, 64)
				}
			}
		}
		rows = append(rows, r)
	}
	return rows
}
