package export

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"tokscope/feature"

	"tokscope/servermetrics"
	"tokscope/stats"
)

func gpuSnapshot() stats.Snapshot {
	snap := testSnapshot()
	snap.Endpoints[0].GPU = &stats.GPUStats{
		Scrapes:       3,
		Latest:        servermetrics.GPUReading{GPUs: 2, Model: "NVIDIA H100 80GB HBM3"},
		PowerW:        stats.Dist{Count: 3, P50: 400, P90: 450, P99: 450, Mean: 410, Min: 380, Max: 450},
		Util:          stats.Dist{Count: 3, P50: 90, P90: 95, P99: 95, Mean: 88, Min: 80, Max: 95},
		MemoryUsedMiB: stats.Dist{Count: 3, P50: 150000, P90: 150000, P99: 150000, Mean: 150000, Min: 150000, Max: 150000},
		Window:        2 * time.Second, EnergyJ: 800, Tokens: 1200, FromCounter: true,
		TokensPerJoule: servermetrics.Value{V: 1.5, OK: true},
	}
	return snap
}

// "gpu" is in the JSON of an endpoint with a GPU exporter only, with docs/outputs.md's keys.
func TestGPUJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, gpuSnapshot()); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Endpoints []map[string]json.RawMessage `json:"endpoints"`
	}
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(out.Endpoints[0]["gpu"], &g); err != nil {
		t.Fatalf("gpu: %v in %s", err, out.Endpoints[0]["gpu"])
	}
	if g["tokens_per_joule"] != 1.5 || g["energy_from"] != "counter" || g["gpus"] != 2.0 {
		t.Errorf("gpu = %v", g)
	}
	for _, k := range []string{"power_w", "util", "memory_used_mib"} {
		if d, ok := g[k].(map[string]any); !ok || d["p50"] == nil {
			t.Errorf("gpu.%s = %v, want a distribution", k, g[k])
		}
	}
	if len(out.Endpoints) > 1 {
		if _, ok := out.Endpoints[1]["gpu"]; ok {
			t.Error("an endpoint without a GPU exporter has a \"gpu\" key")
		}
	}
	b.Reset()
	if err := WriteJSON(&b, testSnapshot()); err != nil || strings.Contains(b.String(), `"gpu"`) {
		t.Errorf("a run without --gpu-metrics writes \"gpu\": %v", err)
	}
}

func TestGPUCSVAndTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, gpuSnapshot()); err != nil {
		t.Fatal(err)
	}
	rows, cols := csvOf(t, b.Bytes())
	if col, ok := cols["gpu_tokens_per_joule"]; !ok || rows[1][col] != "1.5" {
		t.Fatalf("gpu_tokens_per_joule column %d (%v) in %v", col, ok, rows[0])
	}
	snap := gpuSnapshot()
	if l := feature.GPULine(&snap.Endpoints[0]); !strings.Contains(l, "1.50 tok/J (1200 tokens over 800 J, counter)") || !strings.Contains(l, "2× NVIDIA H100") {
		t.Errorf("GPULine = %q", l)
	}
}

// A GPU exporter that never answered leaves every figure of "gpu" null, no 0 stand-ins, and
// its CSV cells empty; the table says no scrape answered.
func TestGPUNeverScrapedIsNull(t *testing.T) {
	snap := testSnapshot()
	snap.Endpoints[0].GPU = &stats.GPUStats{}
	var b bytes.Buffer
	if err := WriteJSON(&b, snap); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Endpoints []struct {
			GPU map[string]any `json:"gpu"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	g := out.Endpoints[0].GPU
	if g["scrapes"] != 0.0 {
		t.Errorf("scrapes = %v, want 0", g["scrapes"])
	}
	for k, v := range g {
		if k != "scrapes" && v != nil {
			t.Errorf("gpu.%s = %v before any scrape, want null", k, v)
		}
	}
	gpu := featureNamed(t, "gpu")
	for i, c := range gpu.CSV(&snap, &snap.Endpoints[0]) {
		if c != "" {
			t.Errorf("CSV %s = %q before any scrape, want empty", gpu.CSVHeader(&snap)[i], c)
		}
	}
	if l := feature.GPULine(&snap.Endpoints[0]); l != "gpu metrics: no scrape answered" {
		t.Errorf("table line %q", l)
	}
}
