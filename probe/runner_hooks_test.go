package probe

import (
	"context"
	"sync"
	"testing"

	"tokscope/config"
)

// Every OnStart is matched by exactly one OnEnd, including the requests a Requests stop
// cancels (they get no Done), so an in-flight gauge built on the hooks returns to zero.
func TestRunnerStartEndHooksBalance(t *testing.T) {
	g := newGT(t, fixed(quickStream(3, ms(10))))
	eps := []config.Endpoint{testEndpoint(g.Server, func(ep *config.Endpoint) { ep.Name, ep.Concurrency = "a", 4 })}
	var mu sync.Mutex
	open := map[uint64]int{}
	starts := 0
	r := NewRunner(eps, Options{Warmup: 1, Requests: 5,
		OnStart: []func(string, uint64){func(name string, seq uint64) {
			mu.Lock()
			defer mu.Unlock()
			if name != "a" {
				t.Errorf("hook for endpoint %q", name)
			}
			open[seq]++
			starts++
		}},
		OnEnd: []func(string, uint64){func(_ string, seq uint64) {
			mu.Lock()
			defer mu.Unlock()
			open[seq]--
		}},
	})
	dones, _ := collectAll(t, r, context.Background())
	mu.Lock()
	defer mu.Unlock()
	for seq, n := range open {
		if n != 0 {
			t.Errorf("seq %d: OnStart−OnEnd = %d", seq, n)
		}
	}
	if starts < len(dones) {
		t.Errorf("%d OnStart calls for %d Done events", starts, len(dones))
	}
}
