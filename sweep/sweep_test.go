package sweep

import (
	"context"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/fanout"
	"tokscope/probe"
	"tokscope/sample"
	"tokscope/sample/sampletest"
	"tokscope/sim"
)

var base = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

func at(sec float64) time.Time { return base.Add(time.Duration(sec * float64(time.Second))) }

type clock struct{ t time.Time }

// scriptedSchedule is a sweep's schedule as a test writes it: each step begins, and the last ends, at
// the instants it says.
type scriptedSchedule struct {
	starts []time.Time
	end    time.Time
}

func (s *scriptedSchedule) begin(at time.Time)                 { s.starts = append(s.starts, at) }
func (s *scriptedSchedule) finish(at time.Time)                { s.end = at }
func (s *scriptedSchedule) Schedule() ([]time.Time, time.Time) { return s.starts, s.end }

func (c *clock) now() time.Time { return c.t }

// A request belongs to the step it started in; its tokens count in the aggregate tok/s of
// the windows they arrived in; a step's results wait for the requests started before its end.
func TestStepAttribution(t *testing.T) {
	eps := []config.Endpoint{{Name: "a", Model: "m"}}
	sw := &scriptedSchedule{}
	clk := &clock{t: at(0)}
	tr := NewTracker(Plan{Concurrency: []int{1, 2, 4}, StepDuration: 10 * time.Second}, sw, eps, clk.now)
	done := func(s sample.Sample) { tr.Observe(&sample.Done{Endpoint: 0, Sample: s}) }

	// Before the first step: a warm-up (no step) and a counted request (step 1). Each request
	// is written at 1 ms, its headers half way to its first token, one token per chunk.
	const ms = time.Millisecond
	w := sampletest.OK("a", "m", 1, at(-2)).Times(ms, 50*ms).Chunks(10, 100*ms, 10*ms, 3).
		Tokens(10, sample.SourceUsage).EndAfter(0).Sample()
	w.Warmup = true
	done(w)
	sw.begin(at(0))
	// Its tokens at -0.4 … 0.5.
	done(sampletest.OK("a", "m", 2, at(-0.5)).Times(ms, 50*ms).Chunks(10, 100*ms, 100*ms, 3).
		Tokens(10, sample.SourceUsage).EndAfter(0).Sample())
	// Step 1: one request entirely inside, one crossing into step 2 (10 tokens: 5 in each window).
	done(sampletest.OK("a", "m", 3, at(2)).Times(ms, 0).Chunks(20, 0, 50*ms, 3).Tokens(20, sample.SourceUsage).
		EndAfter(0).Sample())
	tr.Observe(&sample.Started{Endpoint: 0, Seq: 4, At: at(9.5)})
	sw.begin(at(10))
	clk.t = at(11)
	if tr.Refresh(); tr.Progress().Finished != 0 {
		t.Fatal("step 1 final while a request it started is in flight")
	}
	// Its tokens at 9.5 … 10.4.
	done(sampletest.OK("a", "m", 4, at(9.5)).Times(ms, 0).Chunks(10, 0, 100*ms, 3).
		Tokens(10, sample.SourceUsage).EndAfter(0).Sample())
	if p := tr.Progress(); p.Finished != 1 || p.Step != 1 || p.Concurrency != 2 || p.Left != 9*time.Second {
		t.Fatalf("progress %+v, want step 1 final, step 2 of c2 running with 9 s left", p)
	}
	// Step 2: an error and a request; step 3: one request; then one started after the end.
	done(sampletest.Err("a", "m", 5, at(12), "http_500", 500, "").Times(ms, 5*ms).EndAt(5 * ms).Sample())
	done(sampletest.OK("a", "m", 6, at(13)).Times(ms, 0).Chunks(30, 0, 100*ms, 3).
		Tokens(30, sample.SourceUsage).EndAfter(0).Sample())
	sw.begin(at(20))
	done(sampletest.OK("a", "m", 7, at(21)).Times(ms, 100*ms).Chunks(40, 200*ms, 100*ms, 3).
		Tokens(40, sample.SourceUsage).EndAfter(0).Sample())
	sw.finish(at(30))
	// In the drain: no step.
	done(sampletest.OK("a", "m", 8, at(30.1)).Times(ms, 0).Chunks(50, 0, ms, 3).Tokens(50, sample.SourceUsage).
		EndAfter(0).Sample())
	clk.t = at(30.1)
	if tr.Refresh(); tr.Complete() {
		t.Fatal("complete before the settle time")
	}
	clk.t = at(31)
	tr.Refresh()
	if !tr.Complete() {
		t.Fatalf("not complete: %+v", tr.Progress())
	}

	rs := tr.Results()
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3", len(rs))
	}
	want := []struct {
		requests, ok, errors int
		conc                 int
		tokens               float64
	}{
		// Step 1: 6 tokens of seq 2 (at 0.0 … 0.5), 20 of seq 3, 5 of seq 4 (9.5 … 9.9).
		{3, 3, 0, 1, 6 + 20 + 5},
		// Step 2: 5 tokens of seq 4 (10.0 … 10.4) and 30 of seq 6.
		{2, 1, 1, 2, 5 + 30},
		{1, 1, 0, 4, 40},
	}
	for i, w := range want {
		r := rs[i]
		if r.Step != i+1 || r.Concurrency != w.conc || r.Requests != w.requests || r.OK != w.ok || r.Errors != w.errors {
			t.Errorf("step %d: %+v, want c%d requests %d ok %d errors %d", i+1, r, w.conc, w.requests, w.ok, w.errors)
		}
		if got := r.AggregateTPS * r.Duration.Seconds(); math.Abs(got-w.tokens) > 1e-9 {
			t.Errorf("step %d: %.3f tokens in the window, want %v", i+1, got, w.tokens)
		}
		if r.Duration != 10*time.Second {
			t.Errorf("step %d: window %v", i+1, r.Duration)
		}
	}
	if pct, ok := rs[1].ErrorPct(); !ok || pct != 50 {
		t.Errorf("step 2 error %% = %v %v, want 50", pct, ok)
	}
	if d := rs[2].TTFT; d.Count != 1 || d.P50 != 200 {
		t.Errorf("step 3 TTFT %+v, want one request of 200 ms", d)
	}
	if d := rs[2].DecodeTPS; d.Count != 1 || math.Abs(d.P50-10) > 0.02 {
		t.Errorf("step 3 decode %+v, want 10 tok/s", d)
	}
}

// Closing the events makes every ended step final (in-flight requests will never report) and
// leaves a step cut short out.
func TestCloseInterrupted(t *testing.T) {
	eps := []config.Endpoint{{Name: "a", Model: "m"}}
	sw := &scriptedSchedule{}
	clk := &clock{t: at(0)}
	tr := NewTracker(Plan{Concurrency: []int{1, 2}, StepDuration: 10 * time.Second}, sw, eps, clk.now)
	sw.begin(at(0))
	tr.Observe(&sample.Started{Endpoint: 0, Seq: 1, At: at(9)})
	sw.begin(at(10))
	clk.t = at(15)
	tr.Refresh()
	if tr.Progress().Finished != 0 {
		t.Fatal("step 1 final with a request in flight")
	}
	tr.Close()
	p := tr.Progress()
	if p.Finished != 1 || p.Complete || !p.Interrupted {
		t.Fatalf("after Close: %+v, want step 1 final, interrupted", p)
	}
	if len(tr.Results()) != 1 {
		t.Fatalf("%d results, want the one step that ended", len(tr.Results()))
	}
}

type call struct {
	what string
	ep   sample.EndpointIndex
	n    int
	at   time.Time
	cut  time.Time // CutBefore's argument
}

type fakeController struct {
	mu    sync.Mutex
	calls []call
}

func (c *fakeController) SetConcurrency(ep sample.EndpointIndex, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call{what: "conc", ep: ep, n: n, at: time.Now()})
}

func (c *fakeController) SetPaused(ep sample.EndpointIndex, p bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call{what: "pause", ep: ep, at: time.Now()})
}

func (c *fakeController) CutBefore(t time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call{what: "cut", at: time.Now(), cut: t})
	return 0
}

// Run waits for every warm-up, sets the concurrency of every endpoint at each boundary and
// pauses them all after the last step; a grace after each step's end it cuts that step's
// requests still in flight, and returns after the last step's grace.
func TestRunDrivesController(t *testing.T) {
	// Bounds with a 100 ms margin for a loaded 2-core machine under -race (timers fire late,
	// never early), short of what a wrong schedule shows: a step of two steps' length (600 ms),
	// a cut without its grace (0) or at the next step's end (300 ms).
	const step, grace, margin = 300 * time.Millisecond, 60 * time.Millisecond, 100 * time.Millisecond
	sw := New(Plan{Concurrency: []int{1, 3, 2}, StepDuration: step, Grace: grace}, 2, 1)
	ctl := &fakeController{}
	errc := make(chan error, 1)
	go func() { errc <- sw.Run(context.Background(), ctl) }()
	time.Sleep(50 * time.Millisecond)
	sw.Observe(&sample.Done{}) // not a warm-up
	sw.Observe(&sample.Done{Sample: sample.Sample{Warmup: true}})
	time.Sleep(50 * time.Millisecond)
	if starts, _ := sw.Schedule(); len(starts) != 0 {
		t.Fatal("first step began before every warm-up finished")
	}
	sw.Observe(&sample.Done{Sample: sample.Sample{Warmup: true}})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	starts, end := sw.Schedule()
	if len(starts) != 3 || end.IsZero() {
		t.Fatalf("schedule %v – %v", starts, end)
	}
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Sub(starts[i-1]); d < step || d > step+margin {
			t.Errorf("step %d lasted %v, want %v", i, d, step)
		}
	}
	var got []string
	for _, c := range ctl.calls {
		got = append(got, c.what+strconv.Itoa(int(c.ep))+"="+strconv.Itoa(c.n))
	}
	want := []string{"conc0=1", "conc1=1", "conc0=3", "conc1=3", "cut0=0", "conc0=2", "conc1=2", "cut0=0", "pause0=0", "pause1=0", "cut0=0"}
	if !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	ends := []time.Time{starts[1], starts[2], end}
	k := 0
	for _, c := range ctl.calls {
		if c.what != "cut" {
			continue
		}
		if !c.cut.Equal(ends[k]) {
			t.Errorf("cut %d before %v, want the end of step %d (%v)", k, c.cut, k+1, ends[k])
		}
		if late := c.at.Sub(ends[k]); late < grace || late > grace+margin {
			t.Errorf("cut %d came %v after its step's end, want the grace %v", k, late, grace)
		}
		k++
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := New(Plan{Concurrency: []int{1}, StepDuration: time.Hour}, 1, 0).Run(ctx, ctl); err == nil {
		t.Error("Run with a cancelled context returned nil")
	}
}

func TestPlanValidate(t *testing.T) {
	for _, p := range []Plan{
		{},
		{Concurrency: []int{1, 0}, StepDuration: time.Second},
		{Concurrency: []int{MaxConcurrency + 1}, StepDuration: time.Second},
		{Concurrency: []int{1}},
	} {
		if p.Validate() == nil {
			t.Errorf("%+v validated", p)
		}
	}
	if err := (Plan{Concurrency: []int{1, 2}, StepDuration: time.Second}).Validate(); err != nil {
		t.Error(err)
	}
}

// A real Runner against the simulator (whose streams do not slow each other down): the
// aggregate tok/s of a step grows with its concurrency, per-stream decode does not.
func TestSweepAgainstSimulator(t *testing.T) {
	p := sim.Profile{Name: "a", Model: "m", TTFT: 20 * time.Millisecond, TokensPerSecond: 200, MaxTokens: 30}
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	eps := []config.Endpoint{{Name: "a", Model: "m", BaseURL: srv.BaseURL("a"), Prompt: "hi", MaxTokens: 30,
		Concurrency: 1, Timeout: 20 * time.Second, Stall: 10 * time.Second}}
	sw := New(Plan{Concurrency: []int{1, 2, 4}, StepDuration: time.Second}, len(eps), 1)
	r := probe.NewRunner(eps, probe.Options{Warmup: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go r.Run(ctx)
	go sw.Run(ctx, r)
	tr := sw.Track(eps, nil)
	// The run's loop: the schedule and the steps observe the events; once every step is
	// final, the run stops.
	fanout.NewLoop(r.Events(), fanout.Config{Observers: fanout.List{sw, tr}, Every: 50 * time.Millisecond,
		Beat: func(time.Time) {
			if tr.Refresh(); tr.Complete() {
				cancel()
			}
		}}).Run()
	tr.Close()
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatal("sweep did not complete in 30 s")
	}
	rs := tr.Results()
	if len(rs) != 3 {
		t.Fatalf("%d results", len(rs))
	}
	for i, r := range rs {
		t.Logf("c%d: %d requests, aggregate %.1f tok/s, decode p50 %.1f, TTFT p50 %.1f ms",
			r.Concurrency, r.Requests, r.AggregateTPS, r.DecodeTPS.P50, r.TTFT.P50)
		if r.Errors > 0 || r.Requests == 0 {
			t.Errorf("step %d: %d requests, %d errors", i+1, r.Requests, r.Errors)
		}
		if i > 0 && r.AggregateTPS < 1.4*rs[i-1].AggregateTPS {
			t.Errorf("aggregate tok/s %.1f at c%d, not above 1.4 × %.1f at c%d", r.AggregateTPS, r.Concurrency,
				rs[i-1].AggregateTPS, rs[i-1].Concurrency)
		}
		if math.Abs(r.DecodeTPS.P50/200-1) > 0.15 {
			t.Errorf("decode p50 %.1f at c%d, the simulator streams at 200", r.DecodeTPS.P50, r.Concurrency)
		}
	}
}
