package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/probe"
	"tokscope/sample"
	"tokscope/servermetrics"
	"tokscope/sim"
	"tokscope/stats"
)

// gpuSim is a simulator whose GPUs draw nothing idle and 250 W per running request, split over
// two GPUs: the energy of a run is exactly what its requests ran.
func gpuSim(t *testing.T, noEnergy bool) *sim.Server {
	t.Helper()
	s, err := sim.Start(sim.Options{}, sim.Profile{Name: "g", Model: "m", TTFT: 30 * time.Millisecond,
		TokensPerSecond: 200, MaxTokens: 20, GPU: sim.GPU{Count: 2, SlotWatts: 250, NoEnergy: noEnergy}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

const gpuRequests = 6

// runGPU scrapes the simulator's GPUs every interval, reads them once before any request, runs
// gpuRequests requests of 20 tokens two at a time, reads them once after the last has ended at
// the server too, and returns the GPU figures and the energy the simulator's GPUs used.
func runGPU(t *testing.T, s *sim.Server, interval time.Duration) (*stats.GPUStats, float64) {
	t.Helper()
	ep := config.NewEndpoint(s.BaseURL("g"), "m")
	ep.Name, ep.GPUMetrics, ep.Interval, ep.Concurrency, ep.MaxTokens = "g", s.GPUMetricsURL("g"), 0, 2, 20
	eps := []config.Endpoint{ep}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	scraper := servermetrics.New(eps, servermetrics.Mode{Off: true}, servermetrics.Options{Interval: interval})
	go scraper.Run(ctx)
	agg := stats.New(eps)
	// waitGPU reads until a reading taken after `after` shows the GPUs idle: the simulator
	// counts a request as running until its handler returns, which can be a moment after the
	// client has read the last byte, and the energy grows until then.
	waitGPU := func(after time.Time) {
		for u := range scraper.Updates() {
			if u.Source != servermetrics.SourceGPU {
				t.Fatalf("a server update with --server-metrics off: %+v", u)
			}
			agg.ObserveServer(u)
			if u.State == servermetrics.StateOK && u.GPU.At.After(after) && u.GPU.PowerW.OK && u.GPU.PowerW.V == 0 {
				return
			}
		}
		t.Fatal("the scraper stopped")
	}
	waitGPU(time.Time{}) // the first reading: no request has run yet
	runner := probe.NewRunner(eps, probe.Options{Requests: gpuRequests})
	go func() { _ = runner.Run(ctx) }()
	var last time.Time
	for events := runner.Events(); events != nil; { // as a headless run reads both
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				break
			}
			agg.Observe(ev)
			if d, ok := ev.(*sample.Done); ok && d.Sample.Outcome != sample.OutcomeOK {
				t.Fatalf("request failed: %s", d.Sample.ErrorMessage)
			}
			last = time.Now()
		case u := <-scraper.Updates():
			agg.ObserveServer(u)
		}
	}
	waitGPU(last) // a reading taken after the last request ended, with nothing running
	energy, _ := s.GPUEnergy("g")
	g := agg.Snapshot(time.Now()).Endpoints[0].GPU
	if g == nil || !g.TokensPerJoule.OK {
		t.Fatalf("no tokens per joule: %+v", g)
	}
	if g.Tokens != gpuRequests*20 {
		t.Errorf("tokens in the window %v, want %d (every token of every request)", g.Tokens, gpuRequests*20)
	}
	return g, energy
}

// Tokens per joule, end to end and exact: the scraper reads the simulator's dcgm exposition
// once before any request and again after the last, the requests' tokens all arrive between,
// and the energy between is all the simulator's GPUs used, which it knows.
func TestGPUTokensPerJouleExact(t *testing.T) {
	s := gpuSim(t, false)
	g, energy := runGPU(t, s, 50*time.Millisecond)
	if math.Abs(g.EnergyJ-energy) > 1e-9*energy || !g.FromCounter {
		t.Errorf("energy %v J (from counter %v), the simulator's GPUs used %v J", g.EnergyJ, g.FromCounter, energy)
	}
	if want := gpuRequests * 20 / energy; math.Abs(g.TokensPerJoule.V-want) > 1e-9*want {
		t.Errorf("tokens per joule %v, want %v", g.TokensPerJoule.V, want)
	}
	// And the energy follows the work: each request ran at least its TTFT and 19 gaps at 200 tok/s.
	if floor := gpuRequests * 250 * (0.030 + 19.0/200); energy < floor || energy > 3*floor {
		t.Errorf("the simulator's energy %v J is not its requests' work (≥ %v J)", energy, floor)
	}
	if g.Latest.GPUs != 2 || g.PowerW.Count < 2 || g.PowerW.Max != 500 {
		t.Errorf("GPUs %d, power %+v: want 2 GPUs and 500 W with two requests running", g.Latest.GPUs, g.PowerW)
	}
}

// Without the energy counter, power is integrated over the scrapes: 20 ms apart, within 15 %
// of the simulator's energy (the power steps when a request starts or ends, between scrapes).
func TestGPUTokensPerJoulePowerIntegrated(t *testing.T) {
	s := gpuSim(t, true)
	g, energy := runGPU(t, s, 20*time.Millisecond)
	if g.FromCounter || math.Abs(g.EnergyJ-energy) > 0.15*energy {
		t.Errorf("energy %v J (from counter %v), the simulator's GPUs used %v J", g.EnergyJ, g.FromCounter, energy)
	}
	t.Logf("power integrated: %.2f J, the simulator's %.2f J (%+.1f %%)", g.EnergyJ, energy, 100*(g.EnergyJ/energy-1))
}

// --gpu-metrics through the command line: "gpu" in the JSON summary, and a replay of the
// record gives the same "gpu" object; an exporter that is not there is a quiet note.
func TestGPUMetricsFlagAndReplay(t *testing.T) {
	s := gpuSim(t, false)
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	var stdout, stderr bytes.Buffer
	args := []string{"--no-tui", "-o", "json", "--max-tokens", "20", "--requests", "8", "-n", "2", "-i", "0s", "--warmup", "0", "--server-metrics", "off",
		"--gpu-metrics", s.GPUMetricsURL("g"), "--record", rec, "-u", s.BaseURL("g"), "-m", "m"}
	if code := Main("", args, &stdout, &stderr); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	live := gpuOf(t, stdout.Bytes())
	if live["tokens_per_joule"] == nil || live["energy_from"] != "counter" {
		t.Fatalf("live gpu %v", live)
	}
	stdout.Reset()
	if code := Main("", []string{"replay", rec, "--no-tui", "-o", "json"}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("replay: exit %d: %s", code, stderr.String())
	}
	replayed := gpuOf(t, stdout.Bytes())
	a, _ := json.Marshal(live)
	b, _ := json.Marshal(replayed)
	if !bytes.Equal(a, b) {
		t.Errorf("replay gpu\n%s\nlive gpu\n%s", b, a)
	}

	// Nothing listens there: the run succeeds, and "gpu" says why it has no figures.
	stdout.Reset()
	stderr.Reset()
	args = []string{"--no-tui", "-o", "json", "--max-tokens", "20", "--requests", "2", "-i", "0s", "--server-metrics", "off",
		"--gpu-metrics", s.URL() + "/nope/gpu/metrics", "-u", s.BaseURL("g"), "-m", "m"}
	if code := Main("", args, &stdout, &stderr); code != ExitOK || stderr.Len() != 0 {
		t.Fatalf("a missing exporter: exit %d, stderr %q", code, stderr.String())
	}
	if g := gpuOf(t, stdout.Bytes()); g["note"] == nil || g["tokens_per_joule"] != nil {
		t.Errorf("missing exporter: gpu %v, want a note and no figure", g)
	}
}

func gpuOf(t *testing.T, out []byte) map[string]any {
	t.Helper()
	var doc struct {
		Endpoints []struct {
			GPU map[string]any `json:"gpu"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Endpoints) != 1 {
		t.Fatalf("summary: %v\n%s", err, out)
	}
	return doc.Endpoints[0].GPU
}
