package stats

import (
	"testing"
	"time"

	"tokscope/probe"
)

// Observe is what headless, replay and the UI feed events through: counted Done samples and
// back-off time count, interactive requests and other events do not.
func TestObserve(t *testing.T) {
	a := newAgg()
	now := time.Now()
	cases := []struct {
		name    string
		ev      probe.Event
		changed bool
	}{
		{"background done", &probe.Done{Endpoint: 0, Sample: *okSample(now, 50*time.Millisecond, 4, 10*time.Millisecond, 4)}, true},
		{"interactive done", &probe.Done{Endpoint: 0, Stream: 3, Sample: *okSample(now, 50*time.Millisecond, 4, 10*time.Millisecond, 4)}, false},
		{"out-of-range endpoint", &probe.Done{Endpoint: 9, Sample: *okSample(now, 50*time.Millisecond, 4, 10*time.Millisecond, 4)}, false},
		{"back-off", &probe.Status{Endpoint: 0, State: probe.StateBackoff, Backoff: 2 * time.Second}, true},
		{"back-off of zero", &probe.Status{Endpoint: 0, State: probe.StateBackoff}, false},
		{"other status", &probe.Status{Endpoint: 0, State: probe.StateStreaming, Backoff: time.Second}, false},
		{"started", &probe.Started{Endpoint: 0}, false},
	}
	for _, c := range cases {
		if got := a.Observe(c.ev); got != c.changed {
			t.Errorf("%s: Observe = %v, want %v", c.name, got, c.changed)
		}
	}
	e := a.Snapshot(now.Add(time.Second)).Endpoints[0]
	if e.Requests != 1 || e.OK != 1 {
		t.Errorf("requests %d ok %d, want 1 and 1", e.Requests, e.OK)
	}
	if e.BackoffTotal != 2*time.Second {
		t.Errorf("backoff %v, want 2s", e.BackoffTotal)
	}
}
