package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/metric"
	"tokscope/sample"
	"tokscope/sample/sampletest"
	"tokscope/servermetrics"
	"tokscope/workload"
)

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

const msD = time.Millisecond

func newAgg() *Aggregator {
	return New([]config.Endpoint{{Name: "a", Model: "m", BaseURL: "http://x/v1"}, {Name: "b", Model: "n"}})
}

// near asserts got is within rel (relative) of want.
func near(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*math.Abs(want)+1e-9 {
		t.Errorf("%s = %v, want %v (±%g%%)", what, got, want, rel*100)
	}
}

func exact(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

const hdrRel = 0.001 // 3 significant digits

func TestDistributions(t *testing.T) {
	a := newAgg()
	// Three requests: TTFT 100/200/300 ms, 11 content chunks 100 ms apart, 11 tokens, so
	// decode = 10 tok/s, TPOT = 100 ms, e2e = 11/(ttft+1 s).
	for i, ttft := range []time.Duration{100 * msD, 200 * msD, 300 * msD} {
		a.Add(sampletest.OK("a", "m", 0, t0.Add(time.Duration(i)*time.Second)).Stream(ttft, 11, 100*msD, 11).Ptr())
	}
	st := a.Snapshot(t0.Add(5 * time.Second)).Endpoints[0]
	w := st.Whole
	if w.TTFT.Count != 3 {
		t.Fatalf("TTFT count %d", w.TTFT.Count)
	}
	exact(t, "TTFT min", w.TTFT.Min, 100)
	exact(t, "TTFT max", w.TTFT.Max, 300)
	exact(t, "TTFT mean", w.TTFT.Mean, 200)
	near(t, "TTFT p10", w.TTFT.P10, 100, hdrRel)
	near(t, "TTFT p50", w.TTFT.P50, 200, hdrRel)
	exact(t, "TTFT p99", w.TTFT.P99, 300) // clamped to the exact max
	exact(t, "TTFB mean", w.TTFB.Mean, 100)
	exact(t, "TTFA mean", w.TTFA.Mean, 200)
	exact(t, "TTFEvent mean", w.TTFEvent.Mean, 199)
	exact(t, "decode p50", w.DecodeTPS.P50, 10)
	exact(t, "decode mean", w.DecodeTPS.Mean, 10)
	exact(t, "TPOT mean", w.TPOT.Mean, 100)
	exact(t, "e2e min", w.E2ETPS.Min, 11/1.3)
	exact(t, "e2e max", w.E2ETPS.Max, 11/1.1)
	if w.ITL.Count != 30 {
		t.Errorf("ITL count %d, want 30 gaps", w.ITL.Count)
	}
	exact(t, "ITL p99", w.ITL.P99, 100)
	exact(t, "max stall", w.MaxStall.Max, 100)
	exact(t, "tokens/chunk", w.TokensPerChunk.Mean, 1)
	exact(t, "wait headers", w.WaitHeaders.Mean, 50) // headers − wrote = ttft/4
	exact(t, "headers→first token", w.HeadersToFirstToken.Mean, 100)
	for name, d := range map[string]Dist{"DNS": w.DNS, "Connect": w.Connect, "TLS": w.TLS, "reasoning": w.ReasoningTPS} {
		if d != (Dist{}) {
			t.Errorf("%s = %+v, want no data on reused connections / no reasoning", name, d)
		}
	}
	if st.OutputTokens != 33 || st.TokenSource != "usage" {
		t.Errorf("tokens %d source %q", st.OutputTokens, st.TokenSource)
	}
	if st.Recent.TTFT.Count != 3 || st.Recent.TTFT.Mean != 200 {
		t.Errorf("recent TTFT %+v", st.Recent.TTFT)
	}
	if len(st.History) != 3 || !st.History[0].At.Equal(t0) || st.History[2].TTFT != 300 || !st.History[1].DecodeOK {
		t.Errorf("history %+v", st.History)
	}
	if got := st.LastTTFT; len(got) != 3 || got[0] != 100 || got[2] != 300 {
		t.Errorf("LastTTFT %v", got)
	}
	if got := st.LastDecodeTPS; len(got) != 3 || got[0] != 10 {
		t.Errorf("LastDecodeTPS %v", got)
	}
}

func TestQuantilesResolution(t *testing.T) {
	a := newAgg()
	// TTFT 1..1000 ms in 1 ms steps, plus sub-ms values on endpoint b.
	for i := 1; i <= 1000; i++ {
		a.Add(sampletest.OK("a", "m", 0, t0).Stream(time.Duration(i)*msD, 2, 10*msD, 2).Ptr())
	}
	s := &sample.Sample{Endpoint: "b", Start: t0, Outcome: sample.OutcomeOK, FirstToken: 1234 * time.Microsecond,
		Headers: sample.Absent, FirstEvent: sample.Absent, FirstAnswer: sample.Absent, LastToken: sample.Absent,
		DNS: sample.Absent, Connect: sample.Absent, TLS: sample.Absent, Wrote: sample.Absent, End: sample.Absent}
	a.Add(s)
	snap := a.Snapshot(t0)
	d := snap.Endpoints[0].Whole.TTFT
	exact(t, "mean", d.Mean, 500.5)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p10", d.P10, 100}, {"p50", d.P50, 500}, {"p90", d.P90, 900}, {"p95", d.P95, 950}, {"p99", d.P99, 990}} {
		near(t, c.name, c.got, c.want, hdrRel)
	}
	// 1.234 ms is below 2.048 ms, where the histogram is exact to the microsecond.
	exact(t, "sub-ms p50", snap.Endpoints[1].Whole.TTFT.P50, 1.234)
}

func TestCountsAndErrorExclusion(t *testing.T) {
	a := newAgg()
	a.Add(sampletest.OK("a", "m", 0, t0).Stream(100*msD, 5, 10*msD, 5).Ptr())
	a.Add(sampletest.Err("a", "", 0, t0.Add(time.Second), "http_429", 429, "boom http_429").Times(msD, 5*msD).
		EndAt(6 * msD).Ptr())
	a.Add(sampletest.Err("a", "", 0, t0.Add(2*time.Second), "http_429", 429, "boom http_429").
		Times(msD, 5*msD).EndAt(6 * msD).Ptr())
	a.Add(sampletest.Err("a", "", 0, t0.Add(3*time.Second), "timeout", 429, "boom timeout").Times(msD, 5*msD).
		EndAt(6 * msD).Ptr())
	tr := sampletest.OK("a", "m", 0, t0).Stream(1*msD, 5, 900*msD, 500).Ptr() // would skew every figure if it counted
	tr.Outcome, tr.FinishReason = sample.OutcomeTruncated, ""
	a.Add(tr)
	wu := sampletest.OK("a", "m", 0, t0).Stream(5000*msD, 5, 10*msD, 5).Ptr()
	wu.Warmup = true
	a.Add(wu)
	wuErr := sampletest.Err("a", "", 0, t0, "dns", 429, "boom dns").Times(msD, 5*msD).EndAt(6 * msD).Ptr()
	wuErr.Warmup = true
	a.Add(wuErr)
	weird := sampletest.Err("a", "", 0, t0.Add(4*time.Second), "", 429, "boom ").Times(msD, 5*msD).EndAt(6 * msD).Ptr()
	weird.Outcome = ""
	a.Add(weird)

	st := a.Snapshot(t0.Add(10 * time.Second)).Endpoints[0]
	if st.Requests != 6 || st.OK != 1 || st.Errors != 4 || st.Truncated != 1 || st.Warmups != 2 {
		t.Errorf("counts req %d ok %d err %d trunc %d warm %d", st.Requests, st.OK, st.Errors, st.Truncated, st.Warmups)
	}
	want := map[string]int{"http_429": 2, "timeout": 1, "unknown": 1}
	if fmt.Sprint(st.ErrorKinds) != fmt.Sprint(want) {
		t.Errorf("error kinds %v", st.ErrorKinds)
	}
	w := st.Whole
	if w.TTFT.Count != 1 || w.TTFT.Mean != 100 || w.TTFB.Count != 1 || w.ITL.Count != 4 || w.DecodeTPS.Count != 1 {
		t.Errorf("errors, truncations or warm-ups leaked into distributions: %+v", w)
	}
	if st.OutputTokens != 5 || len(st.History) != 1 {
		t.Errorf("tokens %d history %d", st.OutputTokens, len(st.History))
	}
	if st.Queue.Count != 6 {
		t.Errorf("queue count %d, want every non-warm-up request", st.Queue.Count)
	}
	if len(st.RecentErrors) != 4 || st.RecentErrors[0].Kind != "http_429" ||
		!st.RecentErrors[0].At.Equal(t0.Add(time.Second+6*msD)) {
		t.Errorf("recent errors %+v", st.RecentErrors)
	}
	if st.LastError == nil || st.LastError.Kind != "unknown" || st.LastError.Message != "boom " {
		t.Errorf("last error %+v", st.LastError)
	}
}

func TestRecentWindowExpiry(t *testing.T) {
	a := newAgg()
	s := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr() // finishes at t0 + 121 ms, in second t0
	a.Add(s)
	for _, c := range []struct {
		after time.Duration
		want  int
	}{{0, 1}, {59*time.Second + 999*msD, 1}, {60 * time.Second, 0}, {time.Hour, 0}, {-time.Second, 0}} {
		st := a.Snapshot(t0.Add(c.after)).Endpoints[0]
		if st.Recent.TTFT.Count != c.want || st.Whole.TTFT.Count != 1 {
			t.Errorf("now=t0%+v: recent %d (want %d) whole %d", c.after, st.Recent.TTFT.Count, c.want, st.Whole.TTFT.Count)
		}
	}
	// 60 s later the same slot is reused: the old second is dropped, not merged.
	a.Add(sampletest.OK("a", "m", 0, t0.Add(60*time.Second)).Stream(300*msD, 3, 10*msD, 3).Ptr())
	st := a.Snapshot(t0.Add(60 * time.Second)).Endpoints[0]
	if st.Recent.TTFT.Count != 1 || st.Recent.TTFT.Mean != 300 || st.Whole.TTFT.Count != 2 {
		t.Errorf("slot reuse: recent %+v whole %d", st.Recent.TTFT, st.Whole.TTFT.Count)
	}
	// A sample that finished more than a window before the newest enters the whole run only.
	a.Add(sampletest.OK("a", "m", 0, t0.Add(-5*time.Second)).Stream(50*msD, 3, 10*msD, 3).Ptr())
	st = a.Snapshot(t0.Add(60 * time.Second)).Endpoints[0]
	if st.Recent.TTFT.Count != 1 || st.Whole.TTFT.Count != 3 || st.Whole.TTFT.Min != 50 {
		t.Errorf("late sample: recent %d whole %+v", st.Recent.TTFT.Count, st.Whole.TTFT)
	}
	// The window spans many slots and merges them, with exact mean/min/max.
	b := newAgg()
	for i := range 120 {
		b.Add(sampletest.OK("a", "m", 0, t0.Add(time.Duration(i)*time.Second)).
			Stream(time.Duration(i+1)*msD, 3, 10*msD, 3).Ptr())
	}
	st = b.Snapshot(t0.Add(119*time.Second + 500*msD)).Endpoints[0]
	r := st.Recent.TTFT
	if r.Count != 60 || r.Min != 61 || r.Max != 120 {
		t.Errorf("recent over 60 slots: %+v", r)
	}
	exact(t, "recent mean", r.Mean, 90.5)
	near(t, "recent p50", r.P50, 90, hdrRel)
	if st.Whole.TTFT.Count != 120 {
		t.Errorf("whole %d", st.Whole.TTFT.Count)
	}
}

func TestAggregateTPS(t *testing.T) {
	a := newAgg()
	// Endpoint a: 10 chunks 100 ms apart from t0+1 s, 20 tokens by usage → 2 per chunk.
	a.Add(sampletest.OK("a", "m", 0, t0).Stream(time.Second, 10, 100*msD, 20).Ptr())
	// Endpoint b: per-chunk token counts, reported as 1,2,3 but usage says 12 → scaled ×2.
	s := sampletest.OK("a", "m", 0, t0).Stream(500*msD, 3, 100*msD, 12).Ptr()
	s.Endpoint = "b"
	s.Chunks[1].Tokens, s.Chunks[2].Tokens, s.Chunks[3].Tokens = 1, 2, 3
	a.Add(s)

	// A run younger than the window is per second since its first token (a's at t0+1 s, b's at
	// t0+0.5 s): the wait for the first token is not throughput lost.
	snap := a.Snapshot(t0.Add(5 * time.Second))
	exact(t, "a young run", snap.Endpoints[0].AggregateTPS, 20.0/4)
	exact(t, "b young run", snap.Endpoints[1].AggregateTPS, 12.0/4.5)
	// At t0+10.95 s the window (t0+0.95 s, t0+10.95 s] still holds every chunk (first at t0+1 s),
	// and the run's first token is 9.95 s old.
	exact(t, "a full window", a.Snapshot(t0.Add(10950 * msD)).Endpoints[0].AggregateTPS, 20.0/9.95)
	exact(t, "a older run", a.Snapshot(t0.Add(11050 * msD)).Endpoints[0].AggregateTPS, 18.0/10)
	// At t0+11.15 s the buckets of t0+1.0 s and t0+1.1 s have left the window: 16 tokens remain.
	exact(t, "a sliding", a.Snapshot(t0.Add(11150 * msD)).Endpoints[0].AggregateTPS, 16.0/10)
	// Endpoint b's chunks at 0.5/0.6/0.7 s carried 2/4/6 tokens: at t0+10.65 s only 0.7 s remains.
	exact(t, "b per-chunk", a.Snapshot(t0.Add(10650 * msD)).Endpoints[1].AggregateTPS, 6.0/10)
	exact(t, "expired", a.Snapshot(t0.Add(time.Minute)).Endpoints[0].AggregateTPS, 0)

	// Concurrent streams of one endpoint add up.
	c := newAgg()
	for i := range 4 {
		c.Add(sampletest.OK("a", "m", 0, t0.Add(time.Duration(i)*msD)).Stream(100*msD, 50, 20*msD, 50).Ptr())
	}
	exact(t, "4 streams", c.Snapshot(t0.Add(20 * time.Second)).Endpoints[0].AggregateTPS, 0)
	exact(t, "4 streams live", c.Snapshot(t0.Add(10 * time.Second)).Endpoints[0].AggregateTPS, 200.0/9.9)

	// Errors and truncations never enter the aggregate.
	d := newAgg()
	tr := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 5, 10*msD, 5).Ptr()
	tr.Outcome = sample.OutcomeTruncated
	d.Add(tr)
	exact(t, "truncated", d.Snapshot(t0.Add(time.Second)).Endpoints[0].AggregateTPS, 0)
}

func TestTokenSources(t *testing.T) {
	a := newAgg()
	if got := a.Snapshot(t0).Endpoints[0].TokenSource; got != "" {
		t.Errorf("no requests: %q", got)
	}
	e := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr()
	e.Source = sample.SourceEstimate
	a.Add(e)
	a.Add(e)
	// No source; must not make the endpoint "mixed".
	errS := sampletest.Err("a", "", 0, t0, "timeout", 429, "boom timeout").Times(msD, 5*msD).EndAt(6 * msD).Ptr()
	a.Add(errS)
	if got := a.Snapshot(t0).Endpoints[0].TokenSource; got != "estimate" {
		t.Errorf("all estimate: %q", got)
	}
	a.Add(sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr()) // usage
	if got := a.Snapshot(t0).Endpoints[0].TokenSource; got != "mixed" {
		t.Errorf("estimate+usage: %q", got)
	}
	c := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr()
	c.Endpoint, c.Source = "b", sample.SourceChunks
	a.Add(c)
	if got := a.Snapshot(t0).Endpoints[1].TokenSource; got != "chunks" {
		t.Errorf("chunks: %q", got)
	}
}

func TestPhasesAndConnection(t *testing.T) {
	a := newAgg()
	s := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 21, 10*msD, 21).Ptr()
	// A fresh connection with every phase, and a reasoning model: 11 reasoning chunks then
	// 10 content chunks, 11 reasoning tokens.
	s.Reused, s.DNS, s.Connect, s.TLS = false, 2*msD, 3*msD, 4*msD
	for i := 1; i <= 11; i++ {
		s.Chunks[i].Content, s.Chunks[i].Reasoning = 0, 5
	}
	s.ReasoningTokens = 11
	s.FirstAnswer = s.Chunks[12].At
	a.Add(s)
	w := a.Snapshot(t0).Endpoints[0].Whole
	exact(t, "DNS", w.DNS.Mean, 2)
	exact(t, "connect", w.Connect.Mean, 3)
	exact(t, "TLS", w.TLS.Mean, 4)
	exact(t, "reasoning tok/s", w.ReasoningTPS.Mean, 10/0.1) // 10 tokens over 100 ms
	exact(t, "answer tok/s", w.AnswerTPS.Mean, 9/0.09)       // 9 tokens over 90 ms
	exact(t, "TTFA", w.TTFA.Mean, 210)
	exact(t, "TTFT", w.TTFT.Mean, 100)
}

func TestResetAndBounds(t *testing.T) {
	a := newAgg()
	for i := range 1500 {
		at := t0.Add(time.Duration(i) * time.Second)
		a.Add(sampletest.OK("a", "m", 0, at).Stream(100*msD, 3, 10*msD, 3).Ptr())
		a.Add(sampletest.Err("a", "", 0, at, "stall", 429, "boom stall").Times(msD, 5*msD).EndAt(6 * msD).Ptr())
	}
	for _, d := range []time.Duration{3 * time.Second, 2 * time.Second} { // 429s' back-offs, carried by their requests
		limited := sampletest.Err("a", "", 0, t0.Add(1499*time.Second), "http_429", 429, "boom http_429").Times(msD, 5*msD).EndAt(6 * msD).Ptr()
		limited.Backoff = d
		a.Add(limited)
	}
	st := a.Snapshot(t0.Add(1500 * time.Second)).Endpoints[0]
	if len(st.History) != historyLen || len(st.RecentErrors) != recentErrorsLen ||
		len(st.LastTTFT) != reservoirLen || len(st.LastDecodeTPS) != reservoirLen {
		t.Errorf("bounds: history %d errors %d ttft %d decode %d", len(st.History), len(st.RecentErrors), len(st.LastTTFT), len(st.LastDecodeTPS))
	}
	if !st.History[historyLen-1].At.Equal(t0.Add(1499*time.Second)) || !st.History[0].At.Equal(t0.Add(900*time.Second)) {
		t.Errorf("history not the newest, oldest first: %v … %v", st.History[0].At, st.History[historyLen-1].At)
	}
	if st.BackoffTotal != 5*time.Second {
		t.Errorf("backoff %v", st.BackoffTotal)
	}

	a.Reset()
	snap := a.Snapshot(t0.Add(1500 * time.Second))
	if len(snap.Endpoints) != 2 || snap.Endpoints[0].Name != "a" || snap.Endpoints[0].BaseURL != "http://x/v1" {
		t.Fatalf("reset lost the endpoints: %+v", snap.Endpoints)
	}
	z := snap.Endpoints[0]
	if z.Requests != 0 || z.Errors != 0 || len(z.ErrorKinds) != 0 || z.Whole != (Window{}) || z.Recent != (Window{}) ||
		z.AggregateTPS != 0 || z.History != nil || z.RecentErrors != nil || z.LastError != nil ||
		z.BackoffTotal != 0 || z.TokenSource != "" || z.OutputTokens != 0 || z.Queue.Count != 0 || z.LastTTFT != nil {
		t.Errorf("after Reset: %+v", z)
	}
	a.Add(sampletest.OK("a", "m", 0, t0.Add(1500*time.Second)).Stream(42*msD, 3, 10*msD, 3).Ptr())
	z = a.Snapshot(t0.Add(1501 * time.Second)).Endpoints[0]
	if z.Whole.TTFT.Count != 1 || z.Recent.TTFT.Mean != 42 || z.AggregateTPS == 0 {
		t.Errorf("after Reset and Add: %+v", z.Whole.TTFT)
	}
}

func TestUnknownEndpointIsAdded(t *testing.T) {
	a := newAgg()
	s := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr()
	s.Endpoint, s.Model = "replayed", "mx"
	a.Add(s)
	a.AddAt(2, s)
	snap := a.Snapshot(t0)
	if len(snap.Endpoints) != 3 || snap.Endpoints[2].Name != "replayed" || snap.Endpoints[2].Model != "mx" || snap.Endpoints[2].OK != 2 {
		t.Errorf("%+v", snap.Endpoints)
	}
}

// Snapshots share nothing mutable with the Aggregator: run with -race.
func TestSnapshotIsolated(t *testing.T) {
	a := newAgg()
	a.Add(sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr())
	a.Add(sampletest.Err("a", "", 0, t0, "http_500", 429, "boom http_500").Times(msD, 5*msD).EndAt(6 * msD).Ptr())
	snaps := make(chan Snapshot)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s := range snaps {
			e := &s.Endpoints[0]
			e.ErrorKinds["x"]++
			e.History[0].TTFT = -1
			e.RecentErrors[0].Kind = "mutated"
			e.LastTTFT[0] = -1
			e.LastError.Kind = "mutated"
		}
	}()
	for i := range 200 {
		snaps <- a.Snapshot(t0)
		a.Add(sampletest.OK("a", "m", 0, t0.Add(time.Duration(i)*msD)).Stream(100*msD, 3, 10*msD, 3).Ptr())
		a.Add(sampletest.Err("a", "", 0, t0, "http_500", 429, "boom http_500").Times(msD, 5*msD).EndAt(6 * msD).Ptr())
	}
	close(snaps)
	<-done
	st := a.Snapshot(t0).Endpoints[0]
	if st.ErrorKinds["x"] != 0 || st.History[0].TTFT != 100 || st.RecentErrors[0].Kind != "http_500" ||
		st.LastTTFT[0] != 100 || st.LastError.Kind != "http_500" {
		t.Errorf("a snapshot's consumer changed the aggregator: %+v", st)
	}
}

func TestBootstrapMedianDiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	a := make([]float64, 400)
	b := make([]float64, 400)
	for i := range a {
		a[i] = 100 + rng.NormFloat64()*10
		b[i] = 120 + rng.NormFloat64()*10
	}
	aCopy := append([]float64(nil), a...)
	diff, lo, hi, ok := BootstrapMedianDiff(a, b, 500, rand.New(rand.NewPCG(1, 1)))
	if !ok || !(lo < diff && diff < hi) || hi >= 0 || diff > -15 || diff < -25 {
		t.Errorf("clear difference: diff %v [%v, %v] ok %v", diff, lo, hi, ok)
	}
	if !slices.Equal(a, aCopy) {
		t.Error("input modified")
	}
	diff, lo, hi, _ = BootstrapMedianDiff(a, a, 500, nil)
	if diff != 0 || lo > 0 || hi < 0 {
		t.Errorf("same data: diff %v [%v, %v]", diff, lo, hi)
	}
	if _, _, _, ok := BootstrapMedianDiff(nil, b, 10, nil); ok {
		t.Error("empty set must not be ok")
	}
	exact(t, "even median", median([]float64{4, 1, 3, 2}), 2.5)
}

// realistic is the benchmarks' traffic: n 256-token requests 100 ms apart, each a role chunk
// then 256 content chunks 10–14 ms apart, counted by usage.
func realistic(n int) []*sample.Sample {
	samples := make([]*sample.Sample, n)
	for i := range samples {
		ttft, gap := time.Duration(80+i%50)*msD, time.Duration(10+i%5)*msD
		samples[i] = sampletest.OK("a", "m", 0, t0.Add(time.Duration(i)*100*msD)).Stream(ttft, 256, gap, 256).Ptr()
	}
	return samples
}

func BenchmarkAdd(b *testing.B) {
	a := newAgg()
	samples := realistic(1000)
	b.ReportAllocs()
	// One copy, reused: Add's accumulators are interface calls, so the Sample escapes; a run's
	// Samples are on the heap already (in their Done events), and a fresh copy per request
	// would charge the benchmark's own allocation to Add.
	s := new(sample.Sample)
	for i := 0; b.Loop(); i++ {
		*s = *samples[i%len(samples)]
		s.Start = t0.Add(time.Duration(i) * 100 * msD) // keep the recent slots turning over
		a.Add(s)
	}
}

func BenchmarkSnapshot(b *testing.B) {
	eps := make([]config.Endpoint, 4)
	for i := range eps {
		eps[i] = config.Endpoint{Name: fmt.Sprint("ep", i)}
	}
	a := New(eps)
	for i, s := range realistic(3000) { // 5 minutes at 10 req/s: full history, every recent slot populated
		for e := range eps {
			s := *s
			s.Endpoint = eps[e].Name
			a.Add(&s)
		}
		if i%10 == 0 {
			a.Add(sampletest.Err("a", "", 0, t0.Add(time.Duration(i)*100*msD), "http_429", 429, "boom http_429").Times(msD, 5*msD).EndAt(6 * msD).Ptr())
		}
	}
	now := t0.Add(300 * time.Second)
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range a.eps {
			e.version++ // as if a sample had arrived: recompute every window
		}
		_ = a.Snapshot(now)
	}
}

// BenchmarkSnapshotUnchanged is the common UI case: no sample since the last Snapshot in the
// same second, so the cached windows are reused.
func BenchmarkSnapshotUnchanged(b *testing.B) {
	a := New([]config.Endpoint{{Name: "a"}})
	for _, s := range realistic(3000) {
		a.Add(s)
	}
	now := t0.Add(300 * time.Second)
	b.ReportAllocs()
	for b.Loop() {
		_ = a.Snapshot(now)
	}
}

// Snapshot fills every field: a rich run leaves no field of EndpointStats or Window at its
// zero value, so a field added to the contract and forgotten here fails this test.
func TestSnapshotFillsEveryField(t *testing.T) {
	a := New([]config.Endpoint{{Name: "a", Model: "m", BaseURL: "http://x/v1", SLO: config.SLO{TTFT: time.Second},
		Price: &config.Price{Output: 1}}, {Name: "b", Model: "n"}})
	for i := range 5 {
		s := sampletest.OK("a", "m", 0, t0.Add(time.Duration(i)*time.Second)).Stream(100*msD, 21, 10*msD, 21).Ptr()
		s.Reused, s.DNS, s.Connect, s.TLS, s.Queue = false, 2*msD, 3*msD, 4*msD, 5*msD
		for j := 1; j <= 11; j++ {
			s.Chunks[j].Content, s.Chunks[j].Reasoning = 0, 5
		}
		s.ReasoningTokens, s.FirstAnswer = 11, s.Chunks[12].At
		s.PromptTokens, s.CachedTokens, s.Cache, s.OutputTarget = 500, 100+i, "bust", 21
		srv := sample.NoServerTiming("llamacpp")
		srv.TTFTms, srv.QueueMs, srv.DecodeMs, srv.DecodeTokens, srv.DraftN, srv.DraftAccepted = 80, 2, 190, 21, 10, 7
		s.Server = &srv
		s.Conversation, s.Turn = 1, i+1 // a conversation: figures by turn
		a.Add(s)
	}
	sess := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr() // an agent session's turn
	sess.Session = &workload.SessionTurn{ID: 7, Root: 7, Lane: 1, Turn: 1, SessionTurns: 1, PromptTokens: 10}
	a.Add(sess)
	limited := sampletest.Err("a", "", 0, t0, "http_429", 429, "boom http_429").Times(msD, 5*msD).EndAt(6 * msD).Ptr()
	limited.RateLimitRemainingRequests, limited.RateLimitRemainingTokens, limited.RetryAfter = 3, 1200, 2*time.Second
	limited.Backoff = time.Second
	a.Add(limited)
	tr := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr()
	tr.Outcome = sample.OutcomeTruncated
	a.Add(tr)
	wu := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr()
	wu.Warmup = true
	a.Add(wu)
	cut := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr()
	cut.Outcome, cut.ErrorKind, cut.Cut = sample.OutcomeError, sample.ErrCanceled, true
	a.Add(cut)
	WithRate(2)(a)
	a.SetArrivals(0, 9, 1)
	a.SetWaiting(0, []time.Time{t0})
	a.ObserveServer(servermetrics.Update{Endpoint: 0, Reading: servermetrics.Reading{Kind: servermetrics.KindVLLM}})
	a.ObserveServer(servermetrics.Update{Endpoint: 0, Source: servermetrics.SourceGPU, GPU: servermetrics.GPUReading{GPUs: 1}})
	a.Observe(&sample.Progress{Endpoint: 0, Seq: 99, Start: t0.Add(4 * time.Second), At: 300 * msD,
		FirstEvent: 90 * msD, FirstToken: 100 * msD, FirstAnswer: 100 * msD, Tokens: 12, Estimated: true, Chunks: 12, MaxTokens: 64})
	snap := a.Snapshot(t0.Add(5 * time.Second))
	if snap.At.IsZero() {
		t.Error("Snapshot.At not set")
	}
	if snap.Rate != 2 {
		t.Errorf("Snapshot.Rate = %v, want 2", snap.Rate)
	}
	st := snap.Endpoints[0]
	v := reflect.ValueOf(st)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("EndpointStats.%s is not filled", v.Type().Field(i).Name)
		}
	}
	for _, w := range []Window{st.Whole, st.Recent} {
		wv := reflect.ValueOf(w)
		for i := range wv.NumField() {
			if !wv.Type().Field(i).IsExported() {
				continue // the registered distributions, checked by Of below
			}
			if d := wv.Field(i).Interface().(Dist); d.Count == 0 || d.P50 == 0 || d.Max == 0 {
				t.Errorf("Window.%s is not filled: %+v", wv.Type().Field(i).Name, d)
			}
		}
		for _, id := range metric.IDs() {
			if d := w.Of(id); d.Count == 0 || d.P50 == 0 || d.Max == 0 {
				t.Errorf("Window.Of(%s) is not filled: %+v", metric.Get(id).Key, d)
			}
		}
	}
}

// The client queue counts the arrivals still waiting with their wait so far: when an
// endpoint falls behind, its longest waits are those that have not ended.
func TestQueueIncludesWaitingArrivals(t *testing.T) {
	a := New([]config.Endpoint{{Name: "a"}})
	WithRate(4)(a)
	for i := range 4 {
		s := sampletest.OK("a", "m", 0, t0.Add(time.Duration(i)*time.Second)).Stream(100*msD, 21, 10*msD, 21).Ptr()
		s.Queue = 200 * msD
		a.Add(s)
	}
	now := t0.Add(30 * time.Second)
	before := a.Snapshot(now).Endpoints[0]
	if before.Queue.Max != 200 || before.Waiting != 0 {
		t.Fatalf("queue max %v waiting %d before", before.Queue.Max, before.Waiting)
	}
	a.SetWaiting(0, []time.Time{now.Add(-12800 * msD), now.Add(-3 * time.Second)})
	st := a.Snapshot(now).Endpoints[0]
	if st.Waiting != 2 || st.Queue.Count != 6 || st.Queue.Max != 12800 || st.Queue.P99 < 12000 {
		t.Errorf("with two waiting: waiting %d, queue %+v", st.Waiting, st.Queue)
	}
	if st.Requests != 4 {
		t.Errorf("waiting arrivals counted as requests: %d", st.Requests)
	}
	a.SetWaiting(0, nil)
	if st := a.Snapshot(now).Endpoints[0]; st.Waiting != 0 || st.Queue.Count != 4 {
		t.Errorf("after they started: waiting %d, queue %+v", st.Waiting, st.Queue)
	}
}
