package sim

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The GPU exposition has dcgm-exporter's families and labels, one series per GPU, and its
// energy counters add up to GPUEnergy, which grows by SlotWatts for each running request.
func TestGPUMetrics(t *testing.T) {
	s, err := Start(Options{}, Profile{Name: "g", TTFT: 20 * time.Millisecond, TokensPerSecond: 50, MaxTokens: 10,
		GPU: GPU{Count: 2, SlotWatts: 300}}, Profile{Name: "none", TokensPerSecond: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get(s.GPUMetricsURL("none")); code != http.StatusNotFound {
		t.Errorf("a profile without GPU: HTTP %d, want 404", code)
	}
	if e, _ := s.GPUEnergy("g"); e != 0 {
		t.Errorf("idle GPUs with IdleWatts 0 used %v J", e)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.BaseURL("g")+"/chat/completions",
		strings.NewReader(`{"model":"g","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	took := time.Since(start).Seconds()
	energy, _ := s.GPUEnergy("g")
	// One request ran for at most the time the client waited for it, at 300 W.
	if energy <= 300*(0.02+9.0/50)*0.9 || energy > 300*took {
		t.Errorf("energy %v J for one request of %.3f s at 300 W", energy, took)
	}
	code, body := get(s.GPUMetricsURL("g"))
	if code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var sumMJ float64
	for _, m := range fams["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"].GetMetric() {
		sumMJ += m.GetCounter().GetValue()
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		for _, k := range []string{"gpu", "UUID", "modelName", "Hostname"} {
			if labels[k] == "" {
				t.Errorf("series without %s: %v", k, labels)
			}
		}
	}
	if n := len(fams["DCGM_FI_DEV_POWER_USAGE"].GetMetric()); n != 2 {
		t.Errorf("%d power series, want one per GPU", n)
	}
	if diff := sumMJ/1000 - energy; diff < -1e-6 || diff > 1e-6 {
		t.Errorf("energy counters add up to %v J, GPUEnergy said %v J just before (idle, nothing runs)", sumMJ/1000, energy)
	}
}
