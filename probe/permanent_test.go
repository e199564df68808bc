package probe

import (
	"context"
	"strings"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
)

var notFound = script{status: 404, contentType: "application/json",
	body: "{\"error\":{\"message\":\"The model `m` does not exist\",\"code\":\"model_not_found\"}}"}

// After the second identical permanent error in a row an endpoint backs off 1 s, 2 s, 4 s …,
// and its Status says why.
func TestPermanentErrorsBackOff(t *testing.T) {
	g := newGT(t, fixed(notFound))
	r := NewRunner([]config.Endpoint{testEndpoint(g.Server)}, Options{Duration: 3500 * time.Millisecond})
	dones, statuses, _ := runEvents(t, r, nil)
	if len(dones) < 3 || len(dones) > 4 {
		t.Fatalf("%d requests in 3.5 s, want 3 or 4 (back-offs of 1 s and 2 s after the second)", len(dones))
	}
	gap := func(i int) time.Duration {
		prev := dones[i-1].Sample
		return dones[i].Sample.Start.Sub(prev.Start.Add(prev.End))
	}
	if g2, g3 := gap(2), gap(1); g2 < 950*time.Millisecond || g3 > 900*time.Millisecond {
		t.Errorf("gaps %v then %v: want a short error pause, then a 1 s back-off", g3, g2)
	}
	if len(dones) == 4 && gap(3) < 1950*time.Millisecond {
		t.Errorf("third gap %v, want the 2 s back-off", gap(3))
	}
	var backoff *sample.Status
	for _, st := range statuses {
		if st.State == sample.StateBackoff && backoff == nil {
			backoff = st
		}
	}
	if backoff == nil || backoff.Backoff != time.Second || !strings.Contains(backoff.Reason, "2× http_404 in a row") ||
		!strings.Contains(backoff.Reason, "does not exist") {
		t.Errorf("first back-off status %+v", backoff)
	}
}

// With StopAfterPermanent (headless) the endpoint stops after that many, says why, and a run
// with no endpoint left ends by itself; another error in between starts the count again.
func TestPermanentErrorsStop(t *testing.T) {
	n := 0
	g := newGT(t, func(int) script {
		n++
		if n == 2 {
			return script{status: 500, contentType: "application/json", body: `{"error":{"message":"hiccup"}}`}
		}
		return script{status: 401, contentType: "application/json", body: `{"error":{"message":"Incorrect API key provided"}}`}
	})
	r := NewRunner([]config.Endpoint{testEndpoint(g.Server)}, Options{StopAfterPermanent: 3})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	var dones []*sample.Done
	var stopped *sample.Status
	for ev := range r.Events() {
		switch ev := ev.(type) {
		case *sample.Done:
			dones = append(dones, ev)
		case *sample.Status:
			if ev.State == sample.StateStopped {
				stopped = ev
			}
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the run did not end by itself")
	}
	// 401, 500, then three 401s in a row.
	if len(dones) != 5 {
		t.Errorf("%d requests, want 5", len(dones))
	}
	if stopped == nil || !strings.Contains(stopped.Reason, "stopped after 3 identical http_401 errors in a row") ||
		!strings.Contains(stopped.Reason, "Incorrect API key") {
		t.Errorf("stopped status %+v", stopped)
	}
}
