package probe

import (
	"context"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
)

// runEvents runs r to its end and returns its Done and Status events and how long Run took.
func runEvents(t *testing.T, r *Runner, during func()) ([]*sample.Done, []*sample.Status, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	errc := make(chan error, 1)
	go func() { errc <- r.Run(ctx) }()
	if during != nil {
		go during()
	}
	var dones []*sample.Done
	var statuses []*sample.Status
	for ev := range r.Events() {
		switch ev := ev.(type) {
		case *sample.Done:
			dones = append(dones, ev)
		case *sample.Status:
			statuses = append(statuses, ev)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return dones, statuses, time.Since(start)
}

// At the end of --duration no new request starts, and those in flight finish within the
// grace and count as usual; the endpoint says how many are finishing, then that it stopped.
func TestGraceLetsRequestsFinish(t *testing.T) {
	g := newGT(t, fixed(quickStream(20, ms(10)))) // 200 ms answers
	ep := testEndpoint(g.Server, func(e *config.Endpoint) { e.Concurrency = 2 })
	const duration = 300 * time.Millisecond
	r := NewRunner([]config.Endpoint{ep}, Options{Duration: duration, Grace: 5 * time.Second})
	dones, statuses, took := runEvents(t, r, nil)
	if len(dones) < 2 {
		t.Fatalf("%d requests", len(dones))
	}
	for _, d := range dones {
		s := d.Sample
		if s.Outcome != sample.OutcomeOK || s.Cut {
			t.Errorf("request %d: %s cut %v %s", s.Seq, s.Outcome, s.Cut, s.ErrorMessage)
		}
	}
	// No request starts after the duration: a count, not the start instants (a loaded
	// machine starts requests late, never early). Each of the 2 streams can start at most 2
	// answers of 200 ms within 300 ms; a stream that went on starting them during the 5 s
	// grace would start many more.
	if len(dones) > 4 {
		t.Errorf("%d requests in a %v run of 2 streams with %v answers, want ≤ 4", len(dones), duration, 200*time.Millisecond)
	}
	if n := len(g.requests()); n != len(dones) {
		t.Errorf("the server got %d requests, %d reported", n, len(dones))
	}
	// Run ends with its last request (≈ 0.5 s), not at the end of the 5 s grace: the bound is
	// half the grace, a margin for a loaded 2-core machine under -race.
	if took > duration+2500*time.Millisecond {
		t.Errorf("Run took %v: it should end when the last request does", took)
	}
	finishing, stopped := 0, false
	for _, st := range statuses {
		if st.State == sample.StateFinishing {
			finishing = max(finishing, st.InFlight)
		}
		stopped = st.State == sample.StateStopped
	}
	if finishing != 2 || !stopped {
		t.Errorf("finishing statuses said %d in flight, last stopped %v; want 2, then stopped", finishing, stopped)
	}
	if end := r.End(); !end.Finished || end.Cut || end.Grace != 5*time.Second || end.Waited <= 0 || end.Waited > 2500*time.Millisecond {
		t.Errorf("End() = %+v", end)
	}
}

// What the grace does not let finish is cut when it runs out: reported with Cut and the TTFT
// it had, not failed.
func TestGraceCutsWhatIsLeft(t *testing.T) {
	g := newGT(t, fixed(quickStream(1000, ms(10)))) // 10 s answers
	const duration, grace = 300 * time.Millisecond, 400 * time.Millisecond
	r := NewRunner([]config.Endpoint{testEndpoint(g.Server)}, Options{Duration: duration, Grace: grace})
	dones, _, took := runEvents(t, r, nil)
	// Never before the grace ran out; after it, by 3 s at most: a margin for a loaded 2-core
	// machine under -race, short of the 10 s answer a missed cut would wait for.
	if took < duration+grace || took > duration+grace+3*time.Second {
		t.Errorf("Run took %v, want about %v", took, duration+grace)
	}
	if len(dones) != 1 {
		t.Fatalf("%d requests reported, want the one cut", len(dones))
	}
	s := dones[0].Sample
	// Cut when the grace ran out, not at the end of the duration: End is counted from the
	// request's own start, which a loaded machine delays, so the bound sits halfway between.
	if !s.Cut || s.Failed() || s.FirstToken < 0 || s.End < duration+grace/2 {
		t.Errorf("cut %v failed %v first token %v end %v", s.Cut, s.Failed(), s.FirstToken, s.End)
	}
	if end := r.End(); !end.Cut || end.Waited < grace {
		t.Errorf("End() = %+v", end)
	}
}

// Stop(0) (Ctrl-C in headless) ends the run at once: what is in flight is cut and reported.
// Stop during the grace cuts at once too.
func TestStopCutsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		stop func(r *Runner)
	}{
		{"Stop(0)", Options{}, func(r *Runner) { r.Stop(0) }},
		{"Stop during the grace", Options{Duration: 100 * time.Millisecond, Grace: time.Minute}, func(r *Runner) { r.Stop(time.Minute) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGT(t, fixed(quickStream(1000, ms(10)))) // 10 s answers
			r := NewRunner([]config.Endpoint{testEndpoint(g.Server)}, tc.opts)
			dones, _, took := runEvents(t, r, func() {
				time.Sleep(400 * time.Millisecond)
				tc.stop(r)
			})
			// At once: within 3 s of the stop (a margin for a loaded 2-core machine under
			// -race), short of the 10 s answer or the minute of grace a missed cut waits for.
			if took > 3400*time.Millisecond {
				t.Errorf("Run took %v after a stop at 400 ms", took)
			}
			if len(dones) != 1 || !dones[0].Sample.Cut {
				t.Fatalf("%d requests reported, want one cut", len(dones))
			}
		})
	}
}

// CutBefore cuts the background requests that started before an instant and no others.
func TestCutBefore(t *testing.T) {
	g := newGT(t, fixed(quickStream(100, ms(10)))) // 1 s answers
	ep := testEndpoint(g.Server, func(e *config.Endpoint) { e.Concurrency = 2 })
	r := NewRunner([]config.Endpoint{ep}, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	var mark time.Time
	cut, n := 0, 0
	for ev := range r.Events() {
		switch ev := ev.(type) {
		case *sample.Started:
			if n++; n == 2 {
				time.Sleep(50 * time.Millisecond)
				mark = time.Now()
				if got := r.CutBefore(mark); got != 2 {
					t.Errorf("CutBefore cut %d, want 2", got)
				}
			}
		case *sample.Done:
			s := ev.Sample
			if s.Cut != s.Start.Before(mark) {
				t.Errorf("request %d (started %v before the mark): cut %v", s.Seq, mark.Sub(s.Start), s.Cut)
			}
			if s.Cut {
				cut++
			}
			if !s.Cut && s.Outcome == sample.OutcomeOK {
				cancel() // a request after the mark finished normally
			}
		}
	}
	if cut != 2 {
		t.Errorf("%d requests cut, want 2", cut)
	}
}
