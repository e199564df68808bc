package export

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"tokscope/feature"

	"tokscope/config"
	"tokscope/servermetrics"
	"tokscope/stats"
)

// sloSnapshot: "local" has objectives, a token price and a scraped vLLM; "broken" has
// objectives, a GPU price and a server that never answered.
func sloSnapshot() stats.Snapshot {
	snap := testSnapshot()
	slo := config.SLO{TTFT: 500 * time.Millisecond, ITL: 200 * time.Millisecond}
	local, broken := &snap.Endpoints[0], &snap.Endpoints[1]
	local.RunSpan = 90 * time.Second
	local.SLO = &stats.SLOStats{
		Objectives: slo.Objectives(), Counted: 12, Good: 8, Failed: 3,
		Violations: map[string]int{"ttft": 1, "itl": 1},
		Attainment: 8.0 / 12, GoodputRPS: 8.0 / 90,
	}
	local.Cost = &stats.CostStats{
		Price: config.Price{Input: 0.15, Output: 0.6}, PromptTokens: 9000, OutputTokens: 2304,
		USD: (9000*0.15 + 2304*0.6) / 1e6, USDPerMTokOut: (9000*0.15 + 2304*0.6) / 2304, // per 1M output tokens
	}
	v := func(x float64) servermetrics.Value { return servermetrics.Value{V: x, OK: true} }
	local.Server = &stats.ServerStats{
		Kind: servermetrics.KindVLLM, Scrapes: 90,
		Running: dist(90, 4, 7, 8, 4.2, 0, 8), Waiting: dist(90, 0, 2, 3, 0.5, 0, 3),
		KVCacheUsage:       dist(90, 0.41, 0.7, 0.78, 0.43, 0, 0.78),
		PrefixCacheHitRate: v(0.1234), GenTPS: v(456.789),
	}
	broken.SLO = &stats.SLOStats{Objectives: slo.Objectives(), Violations: map[string]int{"ttft": 0, "itl": 0}}
	broken.Cost = &stats.CostStats{Price: config.Price{GPUHour: 2}, USD: 0.05}
	broken.Server = &stats.ServerStats{State: servermetrics.StateUnavailable, Note: "HTTP 404"}
	return snap
}

func TestSLOCostServerJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sloSnapshot()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Endpoints []struct {
			SLO    map[string]json.RawMessage  `json:"slo"`
			Cost   map[string]json.RawMessage  `json:"cost"`
			Server *map[string]json.RawMessage `json:"server"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	local, broken := doc.Endpoints[0], doc.Endpoints[1]
	for name, got := range map[string]string{
		"slo.attainment":         string(local.SLO["attainment"]),
		"slo.goodput_rps":        string(local.SLO["goodput_rps"]),
		"slo.violations":         string(local.SLO["violations"]),
		"cost.usd":               string(local.Cost["usd"]),
		"cost.usd_per_mtok_out":  string(local.Cost["usd_per_mtok_output"]),
		"broken slo.attainment":  string(broken.SLO["attainment"]),
		"broken cost per mtok":   string(broken.Cost["usd_per_mtok_output"]),
		"server.kind":            string((*local.Server)["kind"]),
		"server.kv_cache_usage":  string((*local.Server)["kv_cache_usage"]),
		"server.prefix_hit_rate": string((*local.Server)["prefix_cache_hit_rate"]),
		"server.gen_tps":         string((*local.Server)["gen_tps"]),
	} {
		want := map[string]string{
			"slo.attainment":         "0.667",
			"slo.goodput_rps":        "0.089",
			"slo.violations":         `{"itl":1,"ttft":1}`,
			"cost.usd":               "0.0027324", // 6 significant digits, not the 3 decimals of other figures
			"cost.usd_per_mtok_out":  "1.18594",
			"broken slo.attainment":  "null",
			"broken cost per mtok":   "null",
			"server.kind":            `"vllm"`,
			"server.kv_cache_usage":  `{"p50":0.41,"p90":0.7,"p99":0.78,"mean":0.43,"min":0,"max":0.78}`,
			"server.prefix_hit_rate": "0.123",
			"server.gen_tps":         "456.789",
		}[name]
		if got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	if len(local.SLO) != 3 || len(local.Cost) != 2 || len(*local.Server) != 6 {
		t.Errorf("keys: slo %d, cost %d, server %d; want docs/metrics.md's 3, 2 and 6", len(local.SLO), len(local.Cost), len(*local.Server))
	}
	if broken.Server != nil {
		t.Errorf("nothing scraped: server must be null, got %v", *broken.Server)
	}
}

func TestSLOCostServerCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, sloSnapshot()); err != nil {
		t.Fatal(err)
	}
	rows, col := csvOf(t, buf.Bytes())
	for _, c := range []struct {
		row       int
		key, want string
	}{
		{1, "slo_attainment", "0.667"},
		{1, "slo_violations_ttft", "1"},
		{1, "slo_violations_tpot", ""}, // no such objective
		{1, "cost_usd_per_mtok_output", "1.18594"},
		{1, "server_kind", "vllm"},
		{1, "server_requests_running_max", "8"},
		{1, "server_gen_tps", "456.789"},
		{2, "slo_attainment", ""},
		{2, "slo_violations_ttft", "0"},
		{2, "cost_usd", "0.05"},
		{2, "server_kind", ""},
	} {
		i, ok := col[c.key]
		if !ok {
			t.Fatalf("no column %s", c.key)
		}
		if got := rows[c.row][i]; got != c.want {
			t.Errorf("row %d %s = %q, want %q", c.row, c.key, got, c.want)
		}
	}
}

func TestSLOCostServerTable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, sloSnapshot()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"slo ttft≤500ms itl≤200ms: 66.7% met (8 of 12)  goodput 0.089 req/s  missed ttft 1, itl 1  failed 3",
		"cost $0.00273  $1.186 per 1M output tokens  ($0.150 in, $0.600 out per 1M tokens)",
		"server vllm  90 scrapes  prefix cache hit 12.3%  gen 456.8 tok/s",
		"server metrics: HTTP 404",
		"cost $0.0500  ($2.000 per GPU hour over 0s)",
		"slo ttft≤500ms itl≤200ms: no request yet",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "server KV %") || !strings.Contains(out, "41.00") {
		t.Errorf("table lacks the KV row in percent:\n%s", out)
	}
}

func TestUSD(t *testing.T) {
	for v, want := range map[float64]string{0: "$0", 0.0123456: "$0.0123", 0.00000123: "$0.00000123", 1.5: "$1.500", 1234.5: "$1234.50"} {
		if got := feature.USD(v); got != want {
			t.Errorf("USD(%v) = %q, want %q", v, got, want)
		}
	}
}
