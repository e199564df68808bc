package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"tokscope/servermetrics"
	"tokscope/stats"
)

// The GPU section shows tokens per joule and the GPUs' power over the run when an endpoint
// had a GPU exporter, and is not in the report otherwise.
func TestGPUSection(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w := func(v float64) servermetrics.Value { return servermetrics.Value{V: v, OK: true} }
	snap := stats.Snapshot{Endpoints: []stats.EndpointStats{{Name: "h100", Model: "m"}, {Name: "plain", Model: "m"}}}
	snap.Endpoints[0].GPU = &stats.GPUStats{
		Scrapes: 2, Latest: servermetrics.GPUReading{GPUs: 2, Model: "NVIDIA H100 80GB HBM3"},
		PowerW: stats.Dist{Count: 2, P50: 600, Max: 700}, Util: stats.Dist{Count: 2, P50: 90, Max: 100},
		Window: time.Second, EnergyJ: 650, Tokens: 1300, FromCounter: true, TokensPerJoule: w(2),
		History: []stats.GPUPoint{{At: t0, PowerW: w(600), Util: w(90)}, {At: t0.Add(time.Second), PowerW: w(700), Util: w(100)}},
	}
	var b bytes.Buffer
	if err := Write(&b, Input{Summary: snap}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GPUs and energy", "2.000", "650 (counter, over 1 s)", "2 × NVIDIA H100 80GB HBM3", `id="gpu-power"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report without %q", want)
		}
	}
	snap.Endpoints[0].GPU = nil
	b.Reset()
	if err := Write(&b, Input{Summary: snap}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "GPUs and energy") {
		t.Error("a GPU section without any GPU exporter")
	}
}
