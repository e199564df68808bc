// Package exporttest holds the JSON summary's contract for the tests of export and of the
// built binary: the keys of an endpoint object (docs/outputs.md), the registered metrics'
// keys read from the registry and the summary's own keys written here once, so that a new
// metric changes no key list in a test.
//
// Test support: only _test.go files import it (TestImportLayers checks that no product
// package does). It imports metric only.
package exporttest

import (
	"slices"
	"strings"

	"tokscope/metric"
)

// The summary's own keys around the registered metrics, in docs/outputs.md's order.
var (
	headKeys = strings.Fields("name model base_url api requests ok errors truncated cut error_kinds token_source output_tokens")
	// After the Core metrics: "server" always; "slo", "cost" and "gpu" only with objectives, a
	// price or --gpu-metrics (not in EndpointKeys).
	middleKeys = []string{"server"}
	// After the Workload metrics; "turns" only with --turns (not in EndpointKeys).
	tailKeys = strings.Fields("output_tps requests_per_s last_error cache output_target cache_hit_rate")
	// Last: the server's own clock, its metrics (Group Server) nested inside.
	serverTimingKey = "server_timing"
)

// EndpointKeys are the keys every endpoint object of the JSON summary has, in order: the
// counts, the Core metrics, "server", the Workload metrics, the workload's figures and
// "server_timing". The optional keys ("slo", "cost", "gpu", "turns") are not among them.
func EndpointKeys() []string {
	keys := slices.Clone(headKeys)
	keys = append(keys, MetricKeys(metric.Core)...)
	keys = append(keys, middleKeys...)
	keys = append(keys, MetricKeys(metric.Workload)...)
	keys = append(keys, tailKeys...)
	return append(keys, serverTimingKey)
}

// MetricKeys are the JSON keys of the registered metrics of group g that the summary carries
// (JSON Dist or Mean), in registry order.
func MetricKeys(g metric.Group) []string {
	var keys []string
	for _, id := range metric.IDs() {
		if m := metric.Get(id); m.Group == g && m.JSON != metric.None {
			keys = append(keys, m.JSONKey())
		}
	}
	return keys
}
