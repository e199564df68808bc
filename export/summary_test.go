package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"tokscope/feature"

	"tokscope/export/exporttest"
	"tokscope/metric"
	"tokscope/sample"
	"tokscope/stats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./export -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

// endpointKeys are the keys of every endpoint of the JSON summary: docs/outputs.md's contract
// and its additions ("slo" and "cost" only with objectives and a price: not here), the
// registered metrics' read from the registry.
var endpointKeys = exporttest.EndpointKeys()

func dist(n int, p50, p90, p99, mean, min, max float64) stats.Dist {
	return stats.Dist{Count: n, P10: min, P50: p50, P90: p90, P95: p99, P99: p99, Mean: mean, Min: min, Max: max}
}

// testSnapshot has one endpoint with every figure (values chosen to exercise rounding) and
// one that only failed, so every figure is null / empty / —.
func testSnapshot() stats.Snapshot {
	snap := stats.Snapshot{
		At: time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC),
		Endpoints: []stats.EndpointStats{
			{
				Name: "local", Model: "llama-3.1-8b", BaseURL: "http://127.0.0.1:8080/v1?a=1&b=<2>",
				Requests: 12, OK: 9, Errors: 2, Truncated: 1, Cut: 2,
				ErrorKinds:   map[string]int{"timeout": 1, "http_429": 1},
				TokenSource:  "usage",
				OutputTokens: 2304,
				Whole: stats.Window{
					TTFB:           dist(9, 10.0004, 12.5, 20.1239, 11.33333333, 9.0005, 20.125),
					TTFT:           dist(9, 41.2346, 55, 80.9999, 45.5, 38.001, 81),
					TTFA:           dist(9, 41.2346, 55, 80.9999, 45.5, 38.001, 81),
					DecodeTPS:      dist(9, 85.3, 90.25, 95.1, 86.123456, 70, 96),
					E2ETPS:         dist(9, 60, 65, 70, 61, 50, 71),
					TPOT:           dist(9, 11.723, 12.1, 14.2857, 11.9, 10.4, 14.3),
					ITL:            dist(2295, 11.5, 13, 30.002, 11.95, 0.001, 250.5),
					TokensPerChunk: dist(9, 1, 1, 1, 1.0004, 1, 1),
					PromptTokens:   dist(9, 519, 583, 640, 530.4444, 420, 640),
					CachedTokens:   dist(9, 0, 16, 16, 3.5556, 0, 16),
					PrefillTPS:     dist(9, 12345.6789, 14000, 15000.5, 12001.25, 9000, 15100),
					E2E:            dist(9, 3100.0004, 3400, 3900.25, 3150.5, 2900, 3950),
				},
				RunSpan: 12 * time.Second, OutputTPS: 192.0004, RequestsPerS: 0.75,
				Cache: "bust", TargetRequests: 9, TargetReached: 8,
				LastError: &stats.ErrorRecord{Kind: "timeout", Message: "request deadline exceeded after 2m0s"},
			},
			{
				Name: "broken", Model: "gpt-x", BaseURL: "https://api.example.com/v1", API: "anthropic",
				Requests: 3, Errors: 3,
				ErrorKinds: map[string]int{"http_401": 3},
				LastError:  &stats.ErrorRecord{Kind: "http_401", Message: `http_401: Incorrect API key provided: [redacted] (code invalid_api_key)`},
			},
		},
		End: sample.RunEnd{Finished: true, Grace: 30 * time.Second, Waited: 30 * time.Second, Cut: true},
	}
	snap.Endpoints[0].Whole.Set(metric.OutputLen, dist(9, 256, 256, 256, 255.8889, 254, 256))
	return snap
}

func TestWriteJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, testSnapshot()); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.json", buf.Bytes())

	// The document has exactly docs/outputs.md's keys ("server" null: nothing scraped; "slo" and
	// "cost" absent: no objectives, no price).
	var doc struct {
		Endpoints []map[string]json.RawMessage `json:"endpoints"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	wantKeys := endpointKeys
	for _, e := range doc.Endpoints {
		if len(e) != len(wantKeys) {
			t.Errorf("%d keys, want %d", len(e), len(wantKeys))
		}
		for _, k := range wantKeys {
			if _, ok := e[k]; !ok {
				t.Errorf("missing key %q", k)
			}
		}
	}
	broken := doc.Endpoints[1]
	for _, k := range []string{"token_source", "ttft_ms", "itl_ms", "tokens_per_chunk", "server", "prompt_tokens", "cached_tokens", "prefill_tps",
		"e2e_ms", "output_tps", "requests_per_s", "cache", "output_target"} {
		if string(broken[k]) != "null" {
			t.Errorf("%s = %s, want null", k, broken[k])
		}
	}
	if got := string(broken["last_error"]); got != `"http_401: Incorrect API key provided: [redacted] (code invalid_api_key)"` {
		t.Errorf("last_error = %s", got)
	}
	local := doc.Endpoints[0]
	for k, want := range map[string]string{
		"output_tps": "192", "requests_per_s": "0.75", "cache": `"bust"`, "output_target": `{"requests":9,"reached":8}`,
		"last_error":  `"request deadline exceeded after 2m0s"`,
		"prefill_tps": `{"p50":12345.679,"p90":14000,"p99":15000.5,"mean":12001.25,"min":9000,"max":15100}`,
	} {
		if got := string(local[k]); got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
	}
	var ttft map[string]float64
	if err := json.Unmarshal(doc.Endpoints[0]["ttft_ms"], &ttft); err != nil || len(ttft) != 6 || ttft["p50"] != 41.235 {
		t.Errorf("ttft_ms %v %v", ttft, err)
	}

	buf.Reset()
	if err := WriteJSON(&buf, stats.Snapshot{}); err != nil || buf.String() != "{\"endpoints\":[]}\n" {
		t.Errorf("empty snapshot: %q %v", buf.String(), err)
	}
	buf.Reset()
	_ = WriteJSON(&buf, stats.Snapshot{Endpoints: []stats.EndpointStats{{Name: "x"}}})
	if !strings.Contains(buf.String(), `"error_kinds":{}`) {
		t.Errorf("nil error kinds must be {}: %s", buf.String())
	}
}

// csvOf parses a CSV output: its rows, the header first, and each column's index by name.
func csvOf(t *testing.T, b []byte) ([][]string, map[string]int) {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("CSV %v: %d rows\n%s", err, len(rows), b)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	return rows, col
}

func TestWriteCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, testSnapshot()); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.csv", buf.Bytes())
	rows, col := csvOf(t, buf.Bytes())
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	// The counts, a column per registered statistic (feature.TableColumns of a distribution, one of a
	// mean) of the Core and Workload metrics, the workload's figures, then each feature's
	// columns in this run (those of the server's scrapes and the server's own clock always).
	want := len(strings.Fields("name model base_url api requests ok errors truncated cut error_kinds token_source output_tokens"))
	for _, id := range metric.IDs() {
		switch m := metric.Get(id); {
		case m.Group == metric.Server || m.JSON == metric.None:
		case m.JSON == metric.Mean:
			want++
		default:
			want += len(feature.TableColumns)
		}
	}
	want += len(workloadCSVHeader())
	snap := testSnapshot()
	for _, f := range feature.All() {
		if f.CSVHeader != nil {
			cols := f.CSVHeader(&snap)
			want += len(cols)
			for _, c := range cols {
				if _, ok := col[c]; !ok {
					t.Errorf("feature %s: no column %s", f.Name, c)
				}
			}
		}
	}
	if len(col) != want {
		t.Errorf("%d columns, want %d", len(col), want)
	}
	for _, c := range []struct {
		row       int
		key, want string
	}{
		{1, "ttft_ms_p50", "41.235"},
		{1, "itl_ms_min", "0.001"},
		{1, "error_kinds", "http_429=1;timeout=1"},
		{1, "tokens_per_chunk", "1"},
		{1, "base_url", "http://127.0.0.1:8080/v1?a=1&b=<2>"},
		{1, "api", "chat"},
		{2, "api", "anthropic"},
		{2, "ttft_ms_p50", ""},
		{2, "token_source", ""},
		{2, "tokens_per_chunk", ""},
		{2, "errors", "3"},
		{1, "prompt_tokens_p50", "519"},
		{1, "cached_tokens_max", "16"},
		{1, "e2e_ms_p50", "3100"},
		{1, "output_tps", "192"},
		{1, "requests_per_s", "0.75"},
		{1, "cache", "bust"},
		{1, "output_target_requests", "9"},
		{1, "output_target_reached", "8"},
		{2, "prefill_tps_p50", ""},
		{2, "output_tps", ""},
		{2, "output_target_reached", ""},
		{2, "last_error", "http_401: Incorrect API key provided: [redacted] (code invalid_api_key)"},
	} {
		if got := rows[c.row][col[c.key]]; got != c.want {
			t.Errorf("row %d %s = %q, want %q", c.row, c.key, got, c.want)
		}
	}
}

func TestWriteTable(t *testing.T) {
	snap := testSnapshot()
	snap.Endpoints = append(snap.Endpoints, stats.EndpointStats{
		Name: "estimated", Model: "m", Requests: 1, OK: 1, TokenSource: "estimate", OutputTokens: 100,
		Whole: stats.Window{DecodeTPS: dist(1, 50, 50, 50, 50, 50, 50)},
	})
	var buf bytes.Buffer
	if err := WriteTable(&buf, snap); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.txt", buf.Bytes())
	out := buf.String()
	for _, want := range []string{"error kinds http_429: 1, timeout: 1", "output tokens ≈100 (estimate)", "decode tok/s ≈", "output tokens 2304 (usage)", "—",
		"cache bust (every prompt starts with a unique tag)", "throughput 192.0 output tok/s  0.750 requests/s",
		"output target reached by 8 of 9 requests", "last error request deadline exceeded after 2m0s", "prefill tok/s   12345.7"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	// Columns line up: every row of a block has its "max" column ending at the same rune.
	for _, block := range strings.Split(out, "\n\n") {
		width := -1
		for _, line := range strings.Split(block, "\n") {
			// Rows and the column header are indented further than the endpoint's lines.
			if !strings.HasPrefix(line, "    ") {
				continue
			}
			n := len([]rune(line))
			if width == -1 {
				width = n
			} else if n != width {
				t.Errorf("misaligned row %q (%d runes, want %d)", line, n, width)
			}
		}
	}
}
