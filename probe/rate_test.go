package probe

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
	"tokscope/sim"
)

// The gaps are exponential with mean 1/rate, reproducible from the seed, and differ between
// endpoints.
func TestArrivalGapsExponential(t *testing.T) {
	const rate, n = 8.0, 40000
	rng := arrivalRand(7, 0)
	mean := time.Second / rate
	var sum, sumSq float64
	below := 0
	for range n {
		g := arrivalGap(rng, rate)
		if g < 0 {
			t.Fatalf("negative gap %v", g)
		}
		v := g.Seconds()
		sum += v
		sumSq += v * v
		if g < time.Duration(mean) {
			below++
		}
	}
	m := sum / n
	sd := math.Sqrt(sumSq/n - m*m)
	if math.Abs(m*rate-1) > 0.02 {
		t.Errorf("mean gap %.4fs, want %.4fs ±2%%", m, 1/rate)
	}
	if cv := sd / m; math.Abs(cv-1) > 0.03 {
		t.Errorf("coefficient of variation %.3f, exponential gaps have 1", cv)
	}
	if f := float64(below) / n; math.Abs(f-(1-math.Exp(-1))) > 0.01 {
		t.Errorf("P(gap < mean) = %.3f, exponential gaps have 0.632", f)
	}
	a, b, c := arrivalRand(7, 0), arrivalRand(7, 0), arrivalRand(7, 1)
	same, other := 0, 0
	for range 100 {
		ga, gb, gc := arrivalGap(a, rate), arrivalGap(b, rate), arrivalGap(c, rate)
		if ga == gb {
			same++
		}
		if ga == gc {
			other++
		}
	}
	if same != 100 || other > 0 {
		t.Errorf("same seed gave %d/100 equal gaps (want 100), another endpoint %d (want 0)", same, other)
	}
}

// The queue is a FIFO bounded by the limit (or 4 × the slots); beyond it arrivals are dropped
// and counted; take gives up when woken.
func TestArrivalQueue(t *testing.T) {
	base := time.Now()
	a := newArrivals(1, 3, 1, 0)
	for i := range 5 {
		a.push(base.Add(time.Duration(i)*time.Second), 1)
	}
	if off, drop := a.offered.Load(), a.dropped.Load(); off != 5 || drop != 2 {
		t.Fatalf("offered %d dropped %d, want 5 and 2", off, drop)
	}
	for i := range 3 {
		at, _, ok := a.take(context.Background(), nil)
		if !ok || !at.Equal(base.Add(time.Duration(i)*time.Second)) {
			t.Fatalf("take %d = %v %v, want arrival %d in order", i, at, ok, i)
		}
	}
	wake := make(chan struct{})
	close(wake)
	if _, _, ok := a.take(context.Background(), wake); ok {
		t.Fatal("take on an empty queue returned an arrival after wake")
	}

	d := newArrivals(1, 0, 1, 0) // default bound: DefaultQueueFactor per slot
	for range 20 {
		d.push(base, 2)
	}
	if got := d.dropped.Load(); got != 20-2*DefaultQueueFactor {
		t.Fatalf("default bound with 2 slots dropped %d of 20, want %d", got, 20-2*DefaultQueueFactor)
	}
}

func startSim(t *testing.T, p sim.Profile) *sim.Server {
	t.Helper()
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func simEndpoint(srv *sim.Server, p sim.Profile, concurrency, maxTokens int) config.Endpoint {
	return config.Endpoint{
		Name: p.Name, BaseURL: srv.BaseURL(p.Name), Model: p.Name, Prompt: "hi", MaxTokens: maxTokens,
		Concurrency: concurrency, Timeout: 20 * time.Second, Stall: 10 * time.Second,
	}
}

// arrivalOf is the open-loop arrival a sample served: t0 minus its client queue.
func arrivalOf(s *sample.Sample) time.Time { return s.Start.Add(-s.Queue) }

// With slots to spare, every request is sent at its arrival: the served arrivals are exactly
// the seeded schedule (to the nanosecond), the rate is the configured one, and the client
// queue is only scheduling noise.
func TestOpenLoopFollowsSchedule(t *testing.T) {
	p := sim.Profile{Name: "fast", TTFT: 5 * time.Millisecond, TokensPerSecond: 2000, MaxTokens: 4}
	srv := startSim(t, p)
	const rate, seed = 40.0, 11
	r := NewRunner([]config.Endpoint{simEndpoint(srv, p, 8, 4)},
		Options{Rate: rate, RateSeed: seed, Duration: 2500 * time.Millisecond})
	dones := collect(t, r)
	var served []*sample.Sample
	cut := 0
	for _, d := range dones {
		if d.Sample.Cut {
			cut++ // in flight when the run ended
			continue
		}
		if d.Sample.Outcome != sample.OutcomeOK {
			t.Fatalf("request %d: %s %s", d.Sample.Seq, d.Sample.ErrorKind, d.Sample.ErrorMessage)
		}
		served = append(served, &d.Sample)
	}
	offered, dropped := r.Arrivals(0)
	if dropped != 0 {
		t.Fatalf("%d of %d arrivals dropped with 8 free slots", dropped, offered)
	}
	if len(served) < 40 {
		t.Fatalf("only %d requests in 2.5 s at %v/s", len(served), rate)
	}
	slices.SortFunc(served, func(a, b *sample.Sample) int { return arrivalOf(a).Compare(arrivalOf(b)) })

	// The known schedule: the same generator, cumulative gaps from the first arrival. A request
	// cut by the run's end is not served, and it need not be among the last: on a loaded
	// machine one sent at +2.471 s was still in flight at the end while the next, sent at
	// +2.475 s, had finished. So an arrival of the schedule may be skipped, at most once per
	// cut request; every served one is on the schedule to the microsecond.
	rng := arrivalRand(seed, 0)
	first := arrivalOf(served[0])
	arrivalGap(rng, rate) // the first gap: from the start of the process to the first arrival
	var offset time.Duration
	skipped := 0
	for i, s := range served {
		if i > 0 {
			offset += arrivalGap(rng, rate)
		}
		got := arrivalOf(s).Sub(first)
		for got-offset > time.Microsecond && skipped < cut {
			offset += arrivalGap(rng, rate)
			skipped++
		}
		if absDur(got-offset) > time.Microsecond {
			t.Fatalf("arrival %d at +%v, the schedule says +%v (%d of %d cut requests skipped)", i, got, offset, skipped, cut)
		}
	}
	span := arrivalOf(served[len(served)-1]).Sub(first).Seconds()
	if got := float64(len(served)-1) / span; math.Abs(got/rate-1) > 0.25 {
		t.Errorf("arrival rate %.1f/s, want %v/s ±25%%", got, rate)
	}
	var queue []time.Duration
	for _, s := range served {
		if s.Queue < 0 {
			t.Fatalf("negative client queue %v", s.Queue)
		}
		queue = append(queue, s.Queue)
	}
	slices.Sort(queue)
	// Scheduling noise: 50 ms is a margin for a loaded 2-core machine under -race; a request
	// that waited for a slot would wait for whole requests, many of them.
	if p50 := queue[len(queue)/2]; p50 > 50*time.Millisecond {
		t.Errorf("client queue p50 %v with free slots, want scheduling noise (< 50 ms)", p50)
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// With one slot for four times the arrivals it can serve, the client queue grows request
// after request, and TTFT stays the server's: t0 is taken after the queue.
func TestOpenLoopQueueGrowsTTFTDoesNot(t *testing.T) {
	const ttft = 40 * time.Millisecond
	p := sim.Profile{Name: "slow", TTFT: ttft, TokensPerSecond: 100, MaxTokens: 8} // ≈ 110 ms a request
	srv := startSim(t, p)
	r := NewRunner([]config.Endpoint{simEndpoint(srv, p, 1, 8)},
		Options{Rate: 36, RateSeed: 3, QueueLimit: 1000, Duration: 2500 * time.Millisecond})
	var served []*sample.Sample
	for _, d := range collect(t, r) {
		if d.Sample.Cut {
			continue // in flight when the run ended
		}
		if d.Sample.Outcome != sample.OutcomeOK {
			t.Fatalf("request %d: %s %s", d.Sample.Seq, d.Sample.ErrorKind, d.Sample.ErrorMessage)
		}
		served = append(served, &d.Sample)
	}
	if len(served) < 9 {
		t.Fatalf("only %d requests served", len(served))
	}
	slices.SortFunc(served, func(a, b *sample.Sample) int { return a.Start.Compare(b.Start) })
	third := len(served) / 3
	mean := func(ss []*sample.Sample) time.Duration {
		var sum time.Duration
		for _, s := range ss {
			sum += s.Queue
		}
		return sum / time.Duration(len(ss))
	}
	early, late := mean(served[:third]), mean(served[len(served)-third:])
	if late < early+300*time.Millisecond {
		t.Errorf("client queue did not grow: first third %v, last third %v", early, late)
	}
	// TTFT is the server's, never less, and not the queue: its median within 150 ms of the
	// schedule (a margin for a loaded 2-core machine under -race), and in the last third,
	// where the queue is ≥ 300 ms, the mean TTFT well under the mean queue (a TTFT counted
	// from the arrival would hold it).
	var ttfts []time.Duration
	var lateTTFT time.Duration
	for i, s := range served {
		got, ok := s.TTFT()
		if !ok {
			t.Fatalf("request %d has no TTFT", s.Seq)
		}
		if got < ttft {
			t.Errorf("request %d: TTFT %v with client queue %v; the server's TTFT is %v", s.Seq, got, s.Queue, ttft)
		}
		ttfts = append(ttfts, got)
		if i >= len(served)-third {
			lateTTFT += got / time.Duration(third)
		}
	}
	slices.Sort(ttfts)
	if med := ttfts[len(ttfts)/2]; med > ttft+150*time.Millisecond {
		t.Errorf("TTFT p50 %v; the server's TTFT is %v", med, ttft)
	}
	if lateTTFT > late/2 {
		t.Errorf("last third: mean TTFT %v, mean client queue %v: TTFT holds the queue", lateTTFT, late)
	}
	if _, dropped := r.Arrivals(0); dropped != 0 {
		t.Errorf("%d arrivals dropped below the queue limit", dropped)
	}
}

// Beyond the bound (default: 4 per slot) arrivals are dropped and counted; the wait stays
// bounded by about bound+1 request durations.
func TestOpenLoopDropsBeyondBound(t *testing.T) {
	p := sim.Profile{Name: "slow", TTFT: 40 * time.Millisecond, TokensPerSecond: 100, MaxTokens: 8}
	srv := startSim(t, p)
	r := NewRunner([]config.Endpoint{simEndpoint(srv, p, 1, 8)},
		Options{Rate: 60, RateSeed: 5, Duration: 2 * time.Second})
	dones := collect(t, r)
	offered, dropped := r.Arrivals(0)
	if dropped == 0 {
		t.Fatalf("no arrival dropped: %d offered, %d served with one slot", offered, len(dones))
	}
	if waiting := int(offered-dropped) - len(dones); waiting < 0 || waiting > DefaultQueueFactor+1 {
		t.Errorf("offered %d − dropped %d − served %d = %d, want at most the bound %d + 1 in flight",
			offered, dropped, len(dones), waiting, DefaultQueueFactor)
	}
	// The arrivals never served are still there, oldest first, for the client queue (but for
	// the one a slot may have taken as the run ended).
	left := r.Waiting(0)
	if waiting := int(offered-dropped) - len(dones); len(left) < waiting-1 || len(left) > waiting || len(left) < DefaultQueueFactor-1 {
		t.Errorf("Waiting lists %d arrivals, %d were never served", len(left), waiting)
	}
	if !slices.IsSortedFunc(left, func(a, b time.Time) int { return a.Compare(b) }) {
		t.Errorf("Waiting not oldest first: %v", left)
	}
	for _, d := range dones {
		if d.Sample.Queue > time.Duration(DefaultQueueFactor+2)*150*time.Millisecond {
			t.Errorf("request %d waited %v with at most %d ahead of it", d.Sample.Seq, d.Sample.Queue, DefaultQueueFactor)
		}
	}
}

// While paused no arrival is generated; after resume arrivals flow again.
func TestOpenLoopPause(t *testing.T) {
	p := sim.Profile{Name: "fast", TTFT: 2 * time.Millisecond, TokensPerSecond: 2000, MaxTokens: 2}
	srv := startSim(t, p)
	r := NewRunner([]config.Endpoint{simEndpoint(srv, p, 2, 2)}, Options{Rate: 100, RateSeed: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- r.Run(ctx) }()
	go func() {
		for range r.Events() {
		}
	}()
	time.Sleep(300 * time.Millisecond)
	r.SetPaused(0, true)
	time.Sleep(100 * time.Millisecond) // the generator notices at its next arrival
	before, _ := r.Arrivals(0)
	time.Sleep(400 * time.Millisecond)
	during, _ := r.Arrivals(0)
	r.SetPaused(0, false)
	time.Sleep(300 * time.Millisecond)
	after, _ := r.Arrivals(0)
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if during != before {
		t.Errorf("%d arrivals generated while paused", during-before)
	}
	if after-during < 10 {
		t.Errorf("only %d arrivals in 300 ms after resume at 100/s", after-during)
	}
}
