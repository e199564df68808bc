package probe

import (
	"context"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
	"tokscope/sim"
)

// CutEndpointBefore cuts one endpoint's requests and leaves the other's running; InFlight
// counts each endpoint's own.
func TestCutEndpointBefore(t *testing.T) {
	p := sim.Profile{Name: "slow", Model: "m", TTFT: 3 * time.Second, TokensPerSecond: 100, MaxTokens: 3}
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	eps := []config.Endpoint{
		{Name: "a", Model: "m", BaseURL: srv.BaseURL("slow"), Prompt: "hi", Concurrency: 2, Timeout: 20 * time.Second, Stall: 10 * time.Second},
		{Name: "b", Model: "m", BaseURL: srv.BaseURL("slow"), Prompt: "hi", Concurrency: 1, Timeout: 20 * time.Second, Stall: 10 * time.Second},
	}
	r := NewRunner(eps, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go r.Run(ctx)
	for r.InFlight(0) < 2 || r.InFlight(1) < 1 {
		if ctx.Err() != nil {
			t.Fatal("the requests did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.SetPaused(0, true)
	r.SetPaused(1, true)
	if n := r.CutEndpointBefore(0, time.Now()); n != 2 {
		t.Errorf("cut %d requests of a, want 2", n)
	}
	var cut []string
	for ev := range r.Events() {
		if d, ok := ev.(*sample.Done); ok {
			if !d.Sample.Cut {
				t.Errorf("endpoint %d: a request ended uncut before the cut endpoint's were reported", d.Endpoint)
			}
			cut = append(cut, eps[d.Endpoint].Name)
			if len(cut) == 2 {
				break
			}
		}
	}
	if cut[0] != "a" || cut[1] != "a" || r.InFlight(1) != 1 {
		t.Errorf("cut %v, b in flight %d: want a's two cut, b's running", cut, r.InFlight(1))
	}
	if r.Warming(0) || r.Warming(1) {
		t.Error("warming with no stream added")
	}
}

// SetRate changes an open-loop endpoint's arrivals at once: from 1 per second to 200, the
// next second has about 200.
func TestSetRate(t *testing.T) {
	p := sim.Profile{Name: "fast", Model: "m", TTFT: time.Millisecond, TokensPerSecond: 1000, MaxTokens: 2}
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	eps := []config.Endpoint{{Name: "a", Model: "m", BaseURL: srv.BaseURL("fast"), Prompt: "hi", MaxTokens: 2, Concurrency: 64, Timeout: 20 * time.Second, Stall: 10 * time.Second}}
	r := NewRunner(eps, Options{Rate: 1, RateSeed: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go r.Run(ctx)
	go func() {
		for range r.Events() {
		}
	}()
	time.Sleep(300 * time.Millisecond)
	r.SetRate(0, 200)
	before, _ := r.Arrivals(0)
	time.Sleep(time.Second)
	after, _ := r.Arrivals(0)
	if n := after - before; n < 140 || n > 260 {
		t.Errorf("%d arrivals in the second after SetRate(200)", n)
	}
	r.SetRate(0, 0) // ignored
	r.Stop(0)
}
