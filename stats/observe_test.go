package stats

import (
	"math"
	"testing"
	"time"

	"tokscope/sample"
	"tokscope/sample/sampletest"
)

// Observe is what headless, replay and the UI feed events through: counted Done samples and
// the back-off their 429s started count, interactive requests and other events (a Status
// announcing a back-off included: the Sample that started it carries it) do not.
func TestObserve(t *testing.T) {
	a := newAgg()
	now := time.Now()
	ok := sampletest.OK("a", "m", 0, now).Stream(50*time.Millisecond, 4, 10*time.Millisecond, 4).Sample()
	limited := sampletest.Err("a", "", 0, now, "http_429", 429, "boom http_429").Times(msD, 5*msD).
		EndAt(6 * msD).Sample()
	limited.Backoff = 2 * time.Second
	cases := []struct {
		name    string
		ev      sample.Event
		changed bool
	}{
		{"background done", &sample.Done{Endpoint: 0, Sample: ok}, true},
		{"interactive done", &sample.Done{Endpoint: 0, Stream: 3, Sample: ok}, false},
		{"out-of-range endpoint", &sample.Done{Endpoint: 9, Sample: ok}, false},
		{"429 that started a back-off", &sample.Done{Endpoint: 0, Sample: limited}, true},
		{"back-off status", &sample.Status{Endpoint: 0, State: sample.StateBackoff, Backoff: 2 * time.Second}, false},
		{"other status", &sample.Status{Endpoint: 0, State: sample.StateStreaming, Backoff: time.Second}, false},
		{"started", &sample.Started{Endpoint: 0}, false},
	}
	for _, c := range cases {
		if got := a.Observe(c.ev); got != c.changed {
			t.Errorf("%s: Observe = %v, want %v", c.name, got, c.changed)
		}
	}
	e := a.Snapshot(now.Add(time.Second)).Endpoints[0]
	if e.Requests != 2 || e.OK != 1 {
		t.Errorf("requests %d ok %d, want 2 and 1", e.Requests, e.OK)
	}
	if e.BackoffTotal != 2*time.Second {
		t.Errorf("backoff %v, want 2s", e.BackoffTotal)
	}
}

// Prompt and cached token counts are whole numbers: their quantiles must read back whole,
// not as the top of an HdrHistogram bucket.
func TestTokenCountQuantilesAreWhole(t *testing.T) {
	a := newAgg()
	now := time.Now()
	for i, n := range []int{785, 785, 786, 4099, 123457} {
		s := sampletest.OK("a", "m", 0, now).Stream(50*time.Millisecond, 4, 10*time.Millisecond, 4).Ptr()
		s.Seq = uint64(i + 1)
		s.PromptTokens, s.CachedTokens = n, n/2
		a.AddAt(0, s)
	}
	w := a.Snapshot(now.Add(time.Second)).Endpoints[0].Whole
	for name, d := range map[string]Dist{"prompt": w.PromptTokens, "cached": w.CachedTokens} {
		for _, q := range []float64{d.P10, d.P50, d.P90, d.P95, d.P99} {
			if q != math.Trunc(q) {
				t.Errorf("%s tokens: quantile %v is not a whole number (%+v)", name, q, d)
			}
		}
	}
	if w.PromptTokens.P50 != 786 && w.PromptTokens.P50 != 785 {
		t.Errorf("prompt tokens p50 %v, want 785 or 786", w.PromptTokens.P50)
	}
}
