package stats

import (
	"math"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/sample/sampletest"
	"tokscope/servermetrics"
)

func gpuUpdate(at time.Time, energyJ float64, span time.Duration, watts float64) servermetrics.Update {
	r := servermetrics.GPUReading{At: at, GPUs: 2, PowerW: servermetrics.Value{V: watts, OK: true},
		Util: servermetrics.Value{V: 50, OK: true}, MemoryUsedMiB: servermetrics.Value{V: 1000, OK: true}}
	if span > 0 {
		r.EnergyJ, r.Span, r.FromCounter = servermetrics.Value{V: energyJ, OK: true}, span, true
	}
	return servermetrics.Update{Source: servermetrics.SourceGPU, State: servermetrics.StateOK, GPU: r}
}

// Tokens per joule counts the tokens whose chunks arrived between the first and the last
// scrape with an energy, over that energy, in whatever order requests and scrapes come.
func TestGPUTokensPerJoule(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// Ten one-token chunks, 300 ms apart, at t0−0.3 s … t0+2.4 s: six lie in (t0, t0+2 s].
	sample := sampletest.OK("gpu", "m", 1, t0.Add(-500*time.Millisecond)).
		Chunks(10, 200*time.Millisecond, 300*time.Millisecond, 1).Tokens(10, sample.SourceUsage).
		EndAfter(3 * time.Second).Ptr()
	ups := []servermetrics.Update{
		gpuUpdate(t0, 0, 0, 100),
		gpuUpdate(t0.Add(time.Second), 100, time.Second, 100),
		gpuUpdate(t0.Add(2*time.Second), 50, time.Second, 50),
	}
	eps := []config.Endpoint{{Name: "gpu", Model: "m", GPUMetrics: "http://127.0.0.1:9400/metrics"}}
	orders := map[string]func(a *Aggregator){
		"request first": func(a *Aggregator) {
			a.Add(sample)
			for _, u := range ups {
				a.ObserveServer(u)
			}
		},
		"scrapes first": func(a *Aggregator) {
			for _, u := range ups {
				a.ObserveServer(u)
			}
			a.Add(sample)
		},
		"between": func(a *Aggregator) {
			a.ObserveServer(ups[0])
			a.ObserveServer(ups[1])
			a.Add(sample)
			a.ObserveServer(ups[2])
		},
	}
	for name, feed := range orders {
		a := New(eps)
		feed(a)
		g := a.Snapshot(t0.Add(5 * time.Second)).Endpoints[0].GPU
		if g == nil {
			t.Fatalf("%s: no GPU figures", name)
		}
		if g.Tokens != 6 || g.EnergyJ != 150 || g.Window != 2*time.Second {
			t.Errorf("%s: tokens %v energy %v J window %v, want 6, 150 J, 2s", name, g.Tokens, g.EnergyJ, g.Window)
		}
		if !g.TokensPerJoule.OK || math.Abs(g.TokensPerJoule.V-0.04) > 1e-12 {
			t.Errorf("%s: tokens per joule %+v, want 0.04", name, g.TokensPerJoule)
		}
		if g.PowerW.Count != 3 || math.Abs(g.PowerW.Mean-250.0/3) > 1e-9 || g.Scrapes != 3 {
			t.Errorf("%s: power %+v over %d scrapes, want 3 scrapes of mean 83.3 W", name, g.PowerW, g.Scrapes)
		}
	}

	// After a Reset the window starts again at the next scrape: the span that reaches back
	// before the Reset has lost its tokens, so its energy does not count either.
	a := New(eps)
	orders["between"](a)
	a.Reset()
	a.ObserveServer(gpuUpdate(t0.Add(3*time.Second), 70, time.Second, 70))
	a.ObserveServer(gpuUpdate(t0.Add(4*time.Second), 30, time.Second, 30))
	if g := a.Snapshot(t0.Add(5 * time.Second)).Endpoints[0].GPU; g.EnergyJ != 30 || g.Tokens != 0 || g.Scrapes != 2 {
		t.Errorf("after a reset: energy %v J, %v tokens, %d scrapes; want 30 J, 0, 2", g.EnergyJ, g.Tokens, g.Scrapes)
	}

	// Without --gpu-metrics there is no GPU figure, and no token is kept for one.
	a = New([]config.Endpoint{{Name: "gpu", Model: "m"}})
	a.Add(sample)
	if a.Snapshot(t0).Endpoints[0].GPU != nil || len(a.eps[0].gpu.pending) != 0 {
		t.Error("an endpoint without a GPU exporter has GPU figures or keeps tokens for them")
	}
}

// A failed scrape is a note: the figures so far stay, and the endpoint has no error.
func TestGPUScrapeFailureIsANote(t *testing.T) {
	t0 := time.Now()
	a := New([]config.Endpoint{{Name: "gpu", Model: "m", GPUMetrics: "http://127.0.0.1:1/metrics"}})
	a.ObserveServer(gpuUpdate(t0, 0, 0, 80))
	a.ObserveServer(servermetrics.Update{Source: servermetrics.SourceGPU, State: servermetrics.StateUnavailable, Note: "connection refused"})
	ep := a.Snapshot(t0).Endpoints[0]
	if ep.GPU == nil || ep.GPU.Note != "connection refused" || ep.GPU.Scrapes != 1 || ep.Errors != 0 {
		t.Errorf("GPU %+v, errors %d: want the note, the earlier scrape kept, no error", ep.GPU, ep.Errors)
	}
	if ep.Server != nil {
		t.Error("a GPU update reached the server's figures")
	}
}
