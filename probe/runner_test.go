package probe

import (
	"context"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
)

// counted yields the Sample of each counted (not warm-up) request of r's events, and drains
// them to the end even when the loop stops early.
func counted(r *Runner) iter.Seq[*sample.Sample] {
	return func(yield func(*sample.Sample) bool) {
		more := true
		for ev := range r.Events() {
			if d, ok := ev.(*sample.Done); ok && more && !d.Sample.Warmup {
				more = yield(&d.Sample)
			}
		}
	}
}

// collect runs r until it stops and returns its Done events; it fails the test if Run takes
// longer than 30 s or the channel is not closed.
func collect(t *testing.T, r *Runner) []*sample.Done {
	t.Helper()
	done, _ := collectAll(t, r, context.Background())
	return done
}

func collectAll(t *testing.T, r *Runner, ctx context.Context) ([]*sample.Done, []sample.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- r.Run(ctx) }()
	var dones []*sample.Done
	var all []sample.Event
	for ev := range r.Events() {
		all = append(all, ev)
		if d, ok := ev.(*sample.Done); ok {
			dones = append(dones, d)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("Run did not stop by itself")
	}
	return dones, all
}

func quickStream(tokens int, every time.Duration) script {
	evs := []event{{0, roleChunk()}}
	for i := range tokens {
		evs = append(evs, event{every * time.Duration(i+1), contentChunk(" x")})
	}
	last := every * time.Duration(tokens)
	return script{events: append(evs, event{last, finishChunk("stop")}, event{last, usageChunk(1, tokens, 0)}, event{last, doneEvent})}
}

// Requests starts exactly that many counted requests per endpoint, warm-ups apart, and waits
// for all of them: none is sent beyond the limit, none is cancelled, and every request the
// servers saw is one Started and one Done on the channel.
func TestRunnerRequestsStop(t *testing.T) {
	g1 := newGT(t, fixed(quickStream(3, ms(5))))
	g2 := newGT(t, fixed(quickStream(3, ms(15))))
	eps := []config.Endpoint{
		testEndpoint(g1.Server, func(ep *config.Endpoint) { ep.Name, ep.Concurrency = "a", 3 }),
		testEndpoint(g2.Server, func(ep *config.Endpoint) { ep.Name, ep.Concurrency = "b", 2 }),
	}
	r := NewRunner(eps, Options{Warmup: 1, Requests: 7})
	dones, all := collectAll(t, r, context.Background())
	counted := map[int]int{}
	warm := map[int]int{}
	seqs := map[int]map[uint64]bool{0: {}, 1: {}}
	for _, d := range dones {
		if d.Sample.Warmup {
			warm[int(d.Endpoint)]++
			if d.Sample.Seq != 1 {
				t.Errorf("warm-up seq %d", d.Sample.Seq)
			}
		} else {
			counted[int(d.Endpoint)]++
		}
		if d.Sample.Outcome != sample.OutcomeOK {
			t.Errorf("ep %d seq %d: %s %s", d.Endpoint, d.Sample.Seq, d.Sample.Outcome, d.Sample.ErrorMessage)
		}
		if seqs[int(d.Endpoint)][d.Sample.Seq] {
			t.Errorf("duplicate seq %d", d.Sample.Seq)
		}
		seqs[int(d.Endpoint)][d.Sample.Seq] = true
	}
	if counted[0] != 7 || counted[1] != 7 || warm[0] != 1 || warm[1] != 1 {
		t.Errorf("counted %v warm %v", counted, warm)
	}
	if n1, n2 := len(g1.requests()), len(g2.requests()); n1 != 8 || n2 != 8 {
		t.Errorf("the servers got %d and %d requests, want 8 each (one warm-up, 7 counted)", n1, n2)
	}
	stopped := map[int]bool{}
	started := 0
	for _, ev := range all {
		switch ev := ev.(type) {
		case *sample.Status:
			if ev.State == sample.StateStopped {
				stopped[int(ev.Endpoint)] = true
			}
		case *sample.Started:
			started++
			if !seqs[int(ev.Endpoint)][ev.Seq] {
				t.Errorf("ep %d seq %d: Started without a Done", ev.Endpoint, ev.Seq)
			}
		}
	}
	if started != len(dones) {
		t.Errorf("%d Started events for %d Done events", started, len(dones))
	}
	if !stopped[0] || !stopped[1] {
		t.Errorf("stopped statuses %v", stopped)
	}
}

// The warm-up finishes before any counted request starts.
func TestRunnerWarmupFirst(t *testing.T) {
	g := newGT(t, fixed(quickStream(2, ms(30))))
	ep := testEndpoint(g.Server, func(ep *config.Endpoint) { ep.Concurrency = 4 })
	r := NewRunner([]config.Endpoint{ep}, Options{Warmup: 1, Requests: 4})
	dones := collect(t, r)
	var warmEnd time.Time
	for _, d := range dones {
		if d.Sample.Warmup {
			warmEnd = d.Sample.Start.Add(d.Sample.End)
		}
	}
	for _, d := range dones {
		if !d.Sample.Warmup && d.Sample.Start.Before(warmEnd) {
			t.Errorf("seq %d started before the warm-up ended", d.Sample.Seq)
		}
	}
	if g.maxIn.Load() != 4 {
		t.Errorf("max in flight %d, want 4", g.maxIn.Load())
	}
}

// The first counted requests of n streams start on a ramp, one every 0.5 ms, or, beyond 500
// streams, spread evenly over 250 ms: never two streams at one instant, and none past the cap
// (cut off at the cap, 524 of 1024 streams started together and stayed in step).
func TestStaggerDelay(t *testing.T) {
	if got := staggerDelay(63, 64); got != 63*streamStagger {
		t.Errorf("stream 63 of 64 waits %v, want %v", got, 63*streamStagger)
	}
	for _, n := range []int{1, 500, 501, 1024, 4096} {
		prev := time.Duration(-1)
		for i := range n {
			d := staggerDelay(i, n)
			if d <= prev || d >= maxStagger {
				t.Fatalf("%d streams: stream %d waits %v after %v (cap %v)", n, i, d, prev, maxStagger)
			}
			prev = d
		}
	}
}

// A run's streams start on that ramp: 100 streams' first counted requests span 49.5 ms (the
// timers never fire early; the bound above allows a loaded machine).
func TestStreamsStartOnARamp(t *testing.T) {
	g := newGT(t, fixed(quickStream(1, ms(200)))) // longer than the ramp: one request a stream
	ep := testEndpoint(g.Server, func(ep *config.Endpoint) { ep.Concurrency = 100 })
	dones := collect(t, NewRunner([]config.Endpoint{ep}, Options{Warmup: 1, Requests: 100}))
	var first, last time.Time
	for _, d := range dones {
		if at := d.Sample.Start; !d.Sample.Warmup {
			if first.IsZero() || at.Before(first) {
				first = at
			}
			if at.After(last) {
				last = at
			}
		}
	}
	if span := last.Sub(first); span < 99*streamStagger-ms(1) || span > 2*time.Second {
		t.Errorf("100 streams started over %v, want the ramp's %v", span, 99*streamStagger)
	}
}

// Duration without a grace ends everything at once: the request in flight is reported as cut
// (not an error, its TTFT kept), and Run returns promptly.
func TestRunnerDuration(t *testing.T) {
	g := newGT(t, fixed(quickStream(100, ms(10)))) // 1 s streams, cut by the 300 ms stop
	r := NewRunner([]config.Endpoint{testEndpoint(g.Server)}, Options{Duration: ms(300)})
	start := time.Now()
	dones := collect(t, r)
	if el := time.Since(start); el < ms(300) || el > 2*time.Second {
		t.Errorf("Run took %v", el)
	}
	if len(dones) != 1 {
		t.Fatalf("%d samples reported, want the one cut by the stop", len(dones))
	}
	s := dones[0].Sample
	if !s.Cut || s.Failed() || s.Counted() || s.FirstToken < 0 || s.ErrorMessage != cutMessage {
		t.Errorf("cut %v failed %v counted %v first token %v %q", s.Cut, s.Failed(), s.Counted(), s.FirstToken, s.ErrorMessage)
	}
	if end := r.End(); !end.Finished || !end.Cut || end.Grace != 0 {
		t.Errorf("End() = %+v", end)
	}
}

// Pause stops new requests (the one in flight finishes and is reported); resume restarts.
func TestRunnerPause(t *testing.T) {
	g := newGT(t, fixed(quickStream(2, ms(20))))
	r := NewRunner([]config.Endpoint{testEndpoint(g.Server)}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	var paused, resumed bool
	var dones int
	var pausedAt, resumedAt time.Time
	for ev := range r.Events() {
		switch e := ev.(type) {
		case *sample.Done:
			dones++
			if dones == 2 {
				r.SetPaused(0, true)
				if !r.Paused(0) {
					t.Error("Paused false after SetPaused(true)")
				}
				pausedAt = time.Now()
				time.AfterFunc(ms(400), func() {
					resumedAt = time.Now()
					r.SetPaused(0, false)
				})
			}
			if resumed && dones > 4 {
				cancel()
			}
		case *sample.Status:
			if e.State == sample.StatePaused {
				paused = true
			}
			if paused && e.State != sample.StatePaused {
				resumed = true
			}
		}
	}
	if !paused || !resumed {
		t.Fatalf("paused %v resumed %v", paused, resumed)
	}
	// The request in flight at the pause (≤ 40 ms) may arrive just after it; none later.
	for _, q := range g.requests() {
		if q.arrival.After(pausedAt.Add(ms(50))) && q.arrival.Before(resumedAt) {
			t.Errorf("request at %v into the pause", q.arrival.Sub(pausedAt))
		}
	}
}

// SetConcurrency changes the number of loops live, both ways.
func TestRunnerSetConcurrency(t *testing.T) {
	g := newGT(t, fixed(quickStream(4, ms(25))))
	r := NewRunner([]config.Endpoint{testEndpoint(g.Server)}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	var once sync.Once
	statusConc := 0
	phase := 0
	for ev := range r.Events() {
		switch e := ev.(type) {
		case *sample.Status:
			statusConc = e.Concurrency
		case *sample.Done:
			switch phase {
			case 0:
				if g.maxIn.Load() != 1 {
					t.Errorf("max in flight %d at concurrency 1", g.maxIn.Load())
				}
				r.SetConcurrency(0, 5)
				phase = 1
			case 1:
				if g.maxIn.Load() == 5 {
					r.SetConcurrency(0, 1)
					phase = 2
				}
			case 2:
				if g.inFlight.Load() <= 1 {
					once.Do(func() {
						time.AfterFunc(ms(300), cancel)
					})
				}
			}
		}
	}
	if r.Concurrency(0) != 1 || statusConc != 1 || phase != 2 {
		t.Errorf("concurrency %d, last status %d, phase %d", r.Concurrency(0), statusConc, phase)
	}
	if g.inFlight.Load() > 1 {
		t.Errorf("in flight %d after lowering to 1", g.inFlight.Load())
	}
}

// Stream: an interactive request tagged with its id, deltas always on; before Run it waits for
// Run. Race: one id, every endpoint, released together.
func TestRunnerStreamAndRace(t *testing.T) {
	var gs []*gtServer
	var eps []config.Endpoint
	for range 3 {
		g := newGT(t, fixed(quickStream(3, ms(100)))) // 300 ms answers
		gs = append(gs, g)
		eps = append(eps, testEndpoint(g.Server))
	}
	r := NewRunner(eps, Options{})
	for i := range sample.EndpointIndex(len(eps)) {
		r.SetPaused(i, true) // only interactive requests
	}
	sid := r.Stream(1, "tell me")
	if sid == 0 || r.Stream(7, "x") != 0 {
		t.Fatal("stream ids")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	var raceID uint64
	deltas := map[uint64]int{}
	doneFor := map[uint64]int{}
	for ev := range r.Events() {
		switch e := ev.(type) {
		case *sample.Delta:
			deltas[e.Stream]++
		case *sample.Done:
			doneFor[e.Stream]++
			if e.Stream == 0 || e.Sample.Stream != e.Stream || e.Sample.Counted() {
				t.Errorf("done %+v", e)
			}
			if e.Stream == sid && raceID == 0 {
				if e.Endpoint != 1 || e.Sample.Outcome != sample.OutcomeOK {
					t.Errorf("stream done on %d: %s", e.Endpoint, e.Sample.Outcome)
				}
				raceID = r.Race("race me")
			}
			if raceID != 0 && doneFor[raceID] == 3 {
				cancel()
			}
		}
	}
	if deltas[sid] != 3 || deltas[raceID] != 9 || doneFor[sid] != 1 || doneFor[raceID] != 3 || raceID == sid {
		t.Errorf("deltas %v dones %v", deltas, doneFor)
	}
	// Under the default --cache bust, the typed prompt goes behind its own tag.
	if c, _ := gs[1].requests()[0].body["messages"].([]any)[0].(map[string]any)["content"].(string); !strings.HasPrefix(c, "[tokscope ") ||
		!strings.HasSuffix(c, "-s1] tell me") {
		t.Errorf("prompt sent as %q", c)
	}
	var first, last time.Time
	for _, g := range gs {
		reqs := g.requests()
		at := reqs[len(reqs)-1].arrival
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	// Released together: within 150 ms (a margin for a loaded 2-core machine under -race),
	// where sending one after another would spread them over two 300 ms answers.
	if last.Sub(first) > 150*time.Millisecond {
		t.Errorf("race arrivals spread over %v", last.Sub(first))
	}
	if r.Stream(0, "late") != 0 {
		t.Error("Stream after stop returned an id")
	}
}

// A 429 with Retry-After: the endpoint backs off for that long (Status says until when), then
// resumes; the wait is in no latency.
func TestRunner429RetryAfter(t *testing.T) {
	g := newGT(t, func(n int) script {
		if n == 2 {
			return script{status: 429, header: map[string]string{"Retry-After": "1"}, contentType: "application/json",
				body: `{"error":{"message":"slow down","code":"rate_limit_exceeded"}}`}
		}
		return quickStream(2, ms(5))
	})
	r := NewRunner([]config.Endpoint{testEndpoint(g.Server)}, Options{Warmup: 1, Requests: 3})
	dones, all := collectAll(t, r, context.Background())
	backoff, reqs := retriedAfterOneSecond(t, g, all)
	// Until counts from when the client read the 429, which a loaded machine delays: the
	// same 500 ms margin as the retry's gap.
	if until := backoff.Until.Sub(reqs[1].arrival); until < time.Second || until > time.Second+500*time.Millisecond {
		t.Errorf("Until %v after the 429", until)
	}
	kinds := map[string]int{}
	for _, d := range dones {
		kinds[d.Sample.ErrorKind]++
		// The 429's Sample carries the back-off it started (what a record keeps and a replay
		// sums), the others none.
		if want := map[string]time.Duration{"http_429": time.Second}[d.Sample.ErrorKind]; d.Sample.Backoff != want {
			t.Errorf("%q request: Backoff %v, want %v", d.Sample.ErrorKind, d.Sample.Backoff, want)
		}
		if d.Sample.ErrorKind == "" {
			if v, _ := d.Sample.TTFT(); v > 200*time.Millisecond {
				t.Errorf("TTFT %v includes the back-off", v)
			}
		}
	}
	if kinds["http_429"] != 1 || kinds[""] != 3 {
		t.Errorf("kinds %v", kinds)
	}
}

// Deltas never block the producer: with a tiny buffer and a slow consumer they are dropped and
// counted, while every Done arrives.
func TestRunnerDroppedDeltas(t *testing.T) {
	g := newGT(t, fixed(quickStream(50, ms(1))))
	ep := testEndpoint(g.Server, func(ep *config.Endpoint) { ep.Concurrency = 2 })
	r := NewRunner([]config.Endpoint{ep}, Options{Requests: 4, Deltas: true, EventBuffer: 4})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	dones := 0
	for ev := range r.Events() {
		if _, ok := ev.(*sample.Done); ok {
			dones++
		}
		time.Sleep(ms(2))
	}
	if dones != 4 || r.DroppedDeltas() == 0 {
		t.Errorf("dones %d dropped %d", dones, r.DroppedDeltas())
	}
}

// A dead endpoint fails fast and is retried with growing pauses, never slowing the other.
func TestRunnerFailingEndpointIsolated(t *testing.T) {
	good := newGT(t, fixed(quickStream(2, ms(5))))
	bad := newGT(t, fixed(script{status: 500, body: "down"}))
	eps := []config.Endpoint{testEndpoint(bad.Server), testEndpoint(good.Server)}
	r := NewRunner(eps, Options{Duration: time.Second})
	dones := collect(t, r)
	per := map[int]int{}
	for _, d := range dones {
		per[int(d.Endpoint)]++
	}
	// 50+100+200+400 ms pauses: ~5 failures in 1 s; the good one ~100 requests.
	if per[0] < 3 || per[0] > 8 || per[1] < 30 {
		t.Errorf("requests per endpoint %v", per)
	}
}

func TestRunnerRunTwice(t *testing.T) {
	r := NewRunner(nil, Options{Requests: 1})
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background()); err == nil {
		t.Fatal("second Run succeeded")
	}
}

// retriedAfterOneSecond checks a run whose second request was told "Retry-After: 1": a
// back-off Status of 1 s, four requests in all, the third sent a second after the second.
// It returns the back-off Status and the requests the server received.
func retriedAfterOneSecond(t *testing.T, g *gtServer, all []sample.Event) (*sample.Status, []received) {
	t.Helper()
	var backoff *sample.Status
	for _, ev := range all {
		if st, ok := ev.(*sample.Status); ok && st.State == sample.StateBackoff && backoff == nil {
			backoff = st
		}
	}
	if backoff == nil || backoff.Backoff != time.Second {
		t.Fatalf("no back-off status of 1 s: %+v", backoff)
	}
	reqs := g.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	if gap := reqs[2].arrival.Sub(reqs[1].arrival); gap < time.Second || gap > time.Second+500*time.Millisecond {
		t.Errorf("retry after %v, want ≥ 1 s", gap)
	}
	return backoff, reqs
}
