package export

import (
	"fmt"
	"strconv"
	"tokscope/feature"

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
	OutputTPS    *feature.Number   `json:"output_tps"`
	RequestsPerS *feature.Number   `json:"requests_per_s"`
	LastError    *string           `json:"last_error"`
	Cache        *string           `json:"cache"`
	OutputTarget *jsonOutputTarget `json:"output_target"`
}

func workloadJSON(e *stats.EndpointStats) jsonWorkload {
	j := jsonWorkload{LastError: lastError(e)}
	if e.RunSpan > 0 {
		out, rps := feature.Number(e.OutputTPS), feature.Number(e.RequestsPerS)
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

// workloadCSVHeader are the workload's scalar columns, after its distributions.
func workloadCSVHeader() []string {
	return []string{"output_tps", "requests_per_s", "last_error", "cache", "output_target_requests", "output_target_reached"}
}

func workloadCSV(e *stats.EndpointStats) []string {
	out, rps := "", ""
	if e.RunSpan > 0 {
		out, rps = feature.FormatNumber(e.OutputTPS), feature.FormatNumber(e.RequestsPerS)
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
		lines = append(lines, fmt.Sprintf("throughput %s output tok/s  %s requests/s", feature.TableNumber(e.OutputTPS), feature.TableNumber(e.RequestsPerS)))
	}
	if e.TargetRequests > 0 {
		lines = append(lines, fmt.Sprintf("output target reached by %d of %d requests", e.TargetReached, e.TargetRequests))
	}
	if p := lastError(e); p != nil {
		lines = append(lines, "last error "+*p)
	}
	return lines
}
