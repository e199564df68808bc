package stats

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/sample/sampletest"
)

// normal is n values around mean with standard deviation sd, from a fixed seed.
func normal(seed uint64, n int, mean, sd float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, seed))
	v := make([]float64, n)
	for i := range v {
		v[i] = mean + rng.NormFloat64()*sd
	}
	return v
}

func h2hRow(t *testing.T, rows []HeadToHead, name, metric string) HeadToHead {
	t.Helper()
	for _, r := range rows {
		if r.EndpointName == name && r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no %s row for %s in %+v", metric, name, rows)
	return HeadToHead{}
}

func TestHeadToHeadClearDifference(t *testing.T) {
	snap := &Snapshot{Endpoints: []EndpointStats{
		{Name: "slow", LastTTFT: normal(1, 60, 300, 30), LastDecodeTPS: normal(2, 60, 40, 4)},
		{Name: "fast", LastTTFT: normal(3, 60, 100, 10), LastDecodeTPS: normal(4, 60, 120, 10)},
	}}
	rows := HeadToHeads(snap)
	if len(rows) != 2 {
		t.Fatalf("want one row per metric (the best has none), got %+v", rows)
	}
	ttft := h2hRow(t, rows, "slow", H2HTTFT)
	if ttft.VersusName != "fast" || ttft.Versus != 1 || ttft.Endpoint != 0 {
		t.Errorf("TTFT compared with %q (%d), want fast", ttft.VersusName, ttft.Versus)
	}
	if !ttft.OK || ttft.Verdict != VerdictSlower || !(ttft.Lo > 0) || !(ttft.Lo <= ttft.Diff && ttft.Diff <= ttft.Hi) {
		t.Errorf("TTFT 300 vs 100 ms: %+v", ttft)
	}
	near(t, "TTFT diff", ttft.Diff, 200, 0.1)
	dec := h2hRow(t, rows, "slow", H2HDecode)
	if dec.VersusName != "fast" || dec.Verdict != VerdictSlower || !(dec.Hi < 0) {
		t.Errorf("decode 40 vs 120 tok/s: %+v", dec)
	}
	near(t, "decode diff", dec.Diff, -80, 0.1)

	// Reproducible: the same values give the same intervals.
	if again := HeadToHeads(snap); !reflect.DeepEqual(rows, again) {
		t.Errorf("not reproducible:\n%+v\n%+v", rows, again)
	}
}

func TestHeadToHeadIdentical(t *testing.T) {
	same := normal(5, 80, 200, 40)
	snap := &Snapshot{Endpoints: []EndpointStats{
		{Name: "a", LastTTFT: same, LastDecodeTPS: normal(6, 80, 50, 5)},
		{Name: "b", LastTTFT: same, LastDecodeTPS: normal(7, 80, 50, 5)}, // same distribution
	}}
	for _, r := range HeadToHeads(snap) {
		if r.Verdict != VerdictUndecided || !(r.Lo <= 0 && 0 <= r.Hi) {
			t.Errorf("identical distributions: %+v", r)
		}
	}
}

func TestHeadToHeadFewSamplesAndMissingData(t *testing.T) {
	snap := &Snapshot{Endpoints: []EndpointStats{
		{Name: "few", LastTTFT: []float64{900, 950, 1000}},                  // clearly slower, but only 3
		{Name: "many", LastTTFT: normal(8, 20, 100, 5), LastDecodeTPS: nil}, // the best
		{Name: "none"}, // only errors
		{Name: "fast-few", LastTTFT: []float64{10, 11}, LastDecodeTPS: []float64{5}}, // fastest median, too few to be best
	}}
	rows := HeadToHeads(snap)
	few := h2hRow(t, rows, "few", H2HTTFT)
	if few.VersusName != "many" || few.Verdict != VerdictUndecided || !few.OK || few.N != 3 {
		t.Errorf("3 samples: %+v", few)
	}
	if none := h2hRow(t, rows, "none", H2HTTFT); none.OK || none.Verdict != VerdictUndecided {
		t.Errorf("no data: %+v", none)
	}
	// Decode: only fast-few has values: it is the best for lack of others, and every other
	// endpoint has a row without data.
	for _, r := range rows {
		if r.Metric == H2HDecode && (r.VersusName != "fast-few" || r.OK) {
			t.Errorf("decode row %+v", r)
		}
	}
	if got := HeadToHeads(&Snapshot{Endpoints: snap.Endpoints[:1]}); got != nil {
		t.Errorf("one endpoint: %+v", got)
	}
}

// The values compared come from the aggregator's retained per-request values.
func TestHeadToHeadFromAggregator(t *testing.T) {
	a := New([]config.Endpoint{{Name: "a"}, {Name: "b"}})
	for i := range 30 {
		at := t0.Add(time.Duration(i) * time.Second)
		s := sampletest.OK("a", "m", 0, at).Stream(time.Duration(100+i%7)*msD, 11, 10*msD, 11).Ptr()
		a.AddAt(0, s)
		s = sampletest.OK("a", "m", 0, at).Stream(time.Duration(200+i%7)*msD, 11, 20*msD, 11).Ptr()
		s.Endpoint = "b"
		a.AddAt(1, s)
	}
	snap := a.Snapshot(t0.Add(time.Minute))
	rows := HeadToHeads(&snap)
	ttft, dec := h2hRow(t, rows, "b", H2HTTFT), h2hRow(t, rows, "b", H2HDecode)
	if ttft.Verdict != VerdictSlower || ttft.N != 30 {
		t.Errorf("ttft %+v", ttft)
	}
	exact(t, "ttft diff", ttft.Diff, 100)
	if dec.Verdict != VerdictSlower {
		t.Errorf("decode %+v", dec)
	}
	exact(t, "decode diff", dec.Diff, 50-100)
}

func TestTTFTFrom(t *testing.T) {
	for _, c := range []struct {
		from      sample.TTFTFrom
		ttft, dec float64
	}{
		{"", 100, 10},
		{sample.TTFTFirstToken, 100, 10},
		{sample.TTFTFirstEvent, 99, 10}, // the role chunk 1 ms before; decode unchanged
		{sample.TTFTFirstAnswer, 100, 10},
	} {
		a := newAgg()
		WithTTFTFrom(c.from)(a)
		a.Add(sampletest.OK("a", "m", 0, t0).Stream(100*msD, 11, 100*msD, 11).Ptr())
		snap := a.Snapshot(t0.Add(2 * time.Second))
		e := snap.Endpoints[0]
		exact(t, string(c.from)+" ttft p50", e.Whole.TTFT.P50, c.ttft)
		exact(t, string(c.from)+" recent ttft", e.Recent.TTFT.P50, c.ttft)
		exact(t, string(c.from)+" history ttft", e.History[0].TTFT, c.ttft)
		exact(t, string(c.from)+" last ttft", e.LastTTFT[0], c.ttft)
		exact(t, string(c.from)+" decode", e.Whole.DecodeTPS.P50, c.dec)
		exact(t, string(c.from)+" ttfevent", e.Whole.TTFEvent.P50, 99)
		if snap.TTFTFrom != c.from.Name() || snap.TTFTFrom == "" {
			t.Errorf("snapshot says TTFT from %q, want %q", snap.TTFTFrom, c.from.Name())
		}
	}
	// A reasoning request: first-answer is later than first-token.
	a := newAgg()
	WithTTFTFrom(sample.TTFTFirstAnswer)(a)
	s := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 11, 100*msD, 11).Ptr()
	s.FirstAnswer = 400 * msD
	a.Add(s)
	exact(t, "first-answer ttft", a.Snapshot(t0).Endpoints[0].Whole.TTFT.P50, 400)
}

func TestRateLimitsAndBackoff(t *testing.T) {
	a := newAgg()
	e := a.Snapshot(t0).Endpoints[0]
	if e.RateLimitRemainingRequests != -1 || e.RateLimitRemainingTokens != -1 || !e.RateLimitAt.IsZero() || e.LastRetryAfter != 0 {
		t.Fatalf("no headers yet: %+v", e)
	}
	s := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 11, 10*msD, 11).Ptr()
	s.RateLimitRemainingRequests, s.RateLimitRemainingTokens = 99, 40000
	a.Add(s)
	older := sampletest.OK("a", "m", 0, t0.Add(-time.Second)).Stream(100*msD, 11, 10*msD, 11).
		Ptr() // finished later, started earlier
	older.RateLimitRemainingRequests = 100
	a.Add(older)
	plain := sampletest.OK("a", "m", 0, t0.Add(time.Second)).Stream(100*msD, 11, 10*msD, 11).
		Ptr() // no headers: keeps the last seen
	a.Add(plain)
	limited := sampletest.Err("a", "", 0, t0.Add(2*time.Second), "http_429", 429, "boom http_429").
		Times(msD, 5*msD).EndAt(6 * msD).Ptr()
	limited.RateLimitRemainingRequests, limited.RateLimitRemainingTokens = 0, -1
	limited.RetryAfter, limited.Backoff = 12*time.Second, 12*time.Second // the back-off it started
	a.Add(limited)
	again := sampletest.Err("a", "", 0, t0.Add(2500*time.Millisecond), "http_429", 429, "boom http_429").
		Times(msD, 5*msD).EndAt(6 * msD).Ptr() // a second 429, without Retry-After: its own back-off
	again.RateLimitRemainingRequests, again.RateLimitRemainingTokens = -1, -1
	again.Backoff = 3 * time.Second
	a.Add(again)
	warm := sampletest.OK("a", "m", 0, t0.Add(3*time.Second)).Stream(100*msD, 11, 10*msD, 11).Ptr()
	warm.Warmup, warm.RateLimitRemainingRequests, warm.RateLimitRemainingTokens = true, -1, 5
	a.Add(warm)

	e = a.Snapshot(t0.Add(5 * time.Second)).Endpoints[0]
	if e.RateLimitRemainingRequests != -1 || e.RateLimitRemainingTokens != 5 || !e.RateLimitAt.Equal(warm.Start) {
		t.Errorf("latest headers (the warm-up's): %d requests, %d tokens at %v", e.RateLimitRemainingRequests, e.RateLimitRemainingTokens, e.RateLimitAt)
	}
	if e.LastRetryAfter != 12*time.Second || e.BackoffTotal != 15*time.Second {
		t.Errorf("retry-after %v, backoff %v", e.LastRetryAfter, e.BackoffTotal)
	}
	// Back-off is never latency: TTFT holds only the three ok requests.
	if e.Whole.TTFT.Count != 3 || e.Whole.TTFT.Max != 100 {
		t.Errorf("ttft %+v", e.Whole.TTFT)
	}
	a.Reset()
	if e = a.Snapshot(t0).Endpoints[0]; e.RateLimitRemainingTokens != -1 || e.BackoffTotal != 0 || e.LastRetryAfter != 0 {
		t.Errorf("after reset: %+v", e)
	}
}
