package probe

import (
	"context"
	"sync"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
)

// Every request has one OnStart call, one Started event and one Done event, those the end of
// the run cuts in flight too: what counts requests begun with the hook (the capacity search)
// and what counts them in flight on the stream (Started … Done: the exporter's gauge) agree,
// and the gauge returns to zero.
func TestRunnerStartHookMatchesTheStream(t *testing.T) {
	g := newGT(t, fixed(quickStream(20, ms(10)))) // 200 ms a request: the end of the run finds them in flight
	eps := []config.Endpoint{testEndpoint(g.Server, func(ep *config.Endpoint) { ep.Name, ep.Concurrency = "a", 4 })}
	var mu sync.Mutex
	hooked := map[uint64]int{}
	r := NewRunner(eps, Options{Warmup: 1, Duration: 500 * time.Millisecond,
		OnStart: []func(string, uint64){func(name string, seq uint64) {
			mu.Lock()
			defer mu.Unlock()
			if name != "a" {
				t.Errorf("hook for endpoint %q", name)
			}
			hooked[seq]++
		}},
	})
	_, all := collectAll(t, r, context.Background())
	open := map[uint64]int{} // Started − Done, by request
	cut := 0
	for _, ev := range all {
		switch ev := ev.(type) {
		case *sample.Started:
			open[ev.Seq]++
		case *sample.Done:
			open[ev.Sample.Seq]--
			if ev.Sample.Cut {
				cut++
			}
		}
	}
	if cut == 0 {
		t.Fatal("no request was cut by the end of the run: the test no longer covers them")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hooked) != len(open) {
		t.Errorf("OnStart for %d requests, Started for %d", len(hooked), len(open))
	}
	for seq, n := range open {
		if n != 0 {
			t.Errorf("seq %d: Started − Done = %d", seq, n)
		}
		if hooked[seq] != 1 {
			t.Errorf("seq %d: %d OnStart calls for its Started", seq, hooked[seq])
		}
	}
}
