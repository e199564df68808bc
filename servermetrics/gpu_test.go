package servermetrics

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"tokscope/config"
)

func parseGPUFile(t *testing.T, name string) gpuInstant {
	t.Helper()
	in, ok := extractGPU(parseTestdata(t, name))
	if !ok {
		t.Fatalf("%s: not recognised", name)
	}
	return in
}

// The dcgm expositions are read with the values written in them: one real T4, and two H100s
// whose second is MIG-partitioned (its whole-GPU series counts, not its instance's), with a
// blank sentinel that is never a figure.
func TestDCGMExpositions(t *testing.T) {
	t4 := parseGPUFile(t, "dcgm-t4.txt")
	wantValue(t, "t4 power", t4.power, 8.969)
	wantValue(t, "t4 energy", t4.mj, 128996013)
	wantValue(t, "t4 util", t4.util, 0)
	wantValue(t, "t4 memory", t4.fb, 0)
	if t4.gpus != 1 || t4.model != "Tesla T4" || t4.host != "424773df46e0" {
		t.Errorf("t4: %d GPUs, model %q, host %q", t4.gpus, t4.model, t4.host)
	}

	h := parseGPUFile(t, "dcgm-2xh100-mig.txt")
	wantValue(t, "h100 power (summed, MIG instance not added)", h.power, 612.433+598.849)
	wantValue(t, "h100 energy (summed)", h.mj, 31035686671+30998123456)
	wantValue(t, "h100 util (mean)", h.util, (100+93)/2.0)
	wantValue(t, "h100 memory (summed)", h.fb, 2*74967)
	if h.gpus != 2 || h.model != "NVIDIA H100 80GB HBM3" {
		t.Errorf("h100: %d GPUs, model %q", h.gpus, h.model)
	}

	// Energy over two readings: the counter's increase, in joules, else power integrated.
	var tr gpuTracker
	t0 := time.Now()
	first := tr.reading(t0, h)
	wantAbsent(t, "energy on the first reading", first.EnergyJ)
	later := h
	later.mj.V += 1_211_282 // 1211.282 J in one second: the two GPUs' 1211 W
	r := tr.reading(t0.Add(time.Second), later)
	wantValue(t, "energy from the counter", r.EnergyJ, 1211.282)
	if !r.FromCounter || r.Span != time.Second {
		t.Errorf("from counter %v, span %v", r.FromCounter, r.Span)
	}
	reset := later
	reset.mj.V = 1000
	wantAbsent(t, "energy across a counter reset", tr.reading(t0.Add(2*time.Second), reset).EnergyJ)

	var pw gpuTracker
	noCounter := h
	noCounter.mj = Value{}
	pw.reading(t0, noCounter)
	noCounter.power = some(1000)
	r = pw.reading(t0.Add(2*time.Second), noCounter)
	wantValue(t, "energy from power (trapezoid)", r.EnergyJ, (612.433+598.849+1000)/2*2)
	if r.FromCounter {
		t.Error("power-integrated energy marked as the counter's")
	}
}

// A GPU exporter that fails or is not one is a quiet note per endpoint, never fatal; one
// that answers gives every endpoint behind it the same reading, with no server target when
// --server-metrics is off.
func TestGPUScrapeNotes(t *testing.T) {
	// The counter served at each scrape (mJ, as written): a reading's energy is the increase
	// between two of them. The server's clock and the scraper's differ by when each got a
	// CPU, so the rate over a 50 ms interval is not checked to the watt: on a loaded machine
	// 36 ms of scrapes held 38 ms of the server's time (324 W).
	var mu sync.Mutex
	var served []float64
	s := newScripted(t, func(el float64) string {
		counter := fmt.Sprintf("%f", el*300_000) // 300 W
		v, _ := strconv.ParseFloat(counter, 64)
		mu.Lock()
		served = append(served, v)
		mu.Unlock()
		return "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\"} 300\n" +
			"# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-a\"} " + counter + "\n"
	})
	gpuEP := func(name, url string) config.Endpoint {
		ep := endpoint("http://127.0.0.1:1", name)
		ep.GPUMetrics = url
		return ep
	}
	eps := []config.Endpoint{gpuEP("a", s.srv.URL+"/metrics"), gpuEP("b", s.srv.URL+"/metrics")}
	got := collect(t, eps, Mode{Off: true}, func(u Update) bool { return u.State == StateOK && u.GPU.EnergyJ.OK })
	mu.Lock()
	increases := make([]float64, 0, len(served))
	for i := 1; i < len(served); i++ {
		increases = append(increases, (served[i]-served[i-1])/1000)
	}
	mu.Unlock()
	for _, u := range got {
		fromCounter := slices.ContainsFunc(increases, func(j float64) bool { return math.Abs(j-u.GPU.EnergyJ.V) < 1e-6 })
		if u.Source != SourceGPU || !u.GPU.FromCounter || !fromCounter || u.GPU.Span <= 0 {
			t.Errorf("endpoint %d: %+v, want the counter's increase between two scrapes, one of %v J", u.Endpoint, u.GPU, increases)
		}
	}

	dead := httptestURLRefusing(t)
	for _, tc := range []struct {
		url, note string
		state     State
	}{
		{dead, "connection refused", StateUnavailable},
		{s.srv.URL + "/nope", "HTTP 404", StateUnavailable},
		{s.srv.URL + "/slots", "HTTP 501", StateUnavailable},
	} {
		got := collect(t, []config.Endpoint{gpuEP("a", tc.url)}, Mode{Off: true}, func(u Update) bool { return u.State != StateOK })
		if u := got[0]; u.State != tc.state || u.Note != tc.note || u.Source != SourceGPU || strings.Contains(u.Note, "127.0.0.1") {
			t.Errorf("%s: %+v, want the quiet note %q", tc.url, u, tc.note)
		}
	}
	notDCGM := newScripted(t, func(float64) string { return "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n" })
	got = collect(t, []config.Endpoint{gpuEP("a", notDCGM.srv.URL+"/metrics")}, Mode{Off: true}, func(u Update) bool { return u.State != StateOK })
	if u := got[0]; u.State != StateUnrecognised || !strings.Contains(u.Note, "not recognised") {
		t.Errorf("a server's metrics as GPU metrics: %+v", u)
	}
	if New([]config.Endpoint{endpoint("http://127.0.0.1:1", "x")}, Mode{Off: true}, Options{}) != nil {
		t.Error("a scraper with nothing to scrape")
	}
}

// httptestURLRefusing is a URL on a port where nothing listens.
func httptestURLRefusing(t *testing.T) string {
	t.Helper()
	s := newScripted(t, func(float64) string { return "" })
	u := s.srv.URL + "/metrics"
	s.srv.Close()
	return u
}
