package stats

import (
	"math"
	"testing"
	"time"

	"tokscope/sample"
	"tokscope/sample/sampletest"
)

// progressOf is the Progress a request like s would have reported with its first n token
// chunks arrived, its tokens estimated at one per chunk.
func progressOf(s *sample.Sample, seq uint64, n int) *sample.Progress {
	p := &sample.Progress{Endpoint: 0, Seq: seq, Start: s.Start, FirstEvent: s.FirstEvent,
		FirstToken: sample.Absent, FirstAnswer: sample.Absent, Estimated: true, MaxTokens: 64}
	for _, c := range s.Chunks {
		if !c.TokenBearing() || p.Chunks == n {
			continue
		}
		if p.Chunks == 0 {
			p.FirstToken, p.FirstAnswer = c.At, c.At
		}
		p.Chunks++
		p.Tokens++
		p.At = c.At
	}
	return p
}

// sumTokens is the tokens of a snapshot's per-second series.
func sumTokens(st EndpointStats) float64 {
	var n float64
	for _, s := range st.Seconds {
		n += s.Tokens
	}
	return n
}

// Tokens count as their chunks arrive: aggregate tok/s, the per-second series, the TTFT of the
// second of the first token, the request's progress and decode rate so far all move while the
// request streams. Its Done replaces the live count with the Sample's exact one: the figures
// are then those of an Aggregator that only ever saw the Done.
func TestProgressCountsTokensAsTheyArrive(t *testing.T) {
	// 40 chunks 50 ms apart from t0+0.5 s (last at t0+2.45 s), 80 tokens by usage.
	s := sampletest.OK("a", "m", 0, t0).Stream(500*msD, 40, 50*msD, 80).Ptr()
	s.Seq = 7
	a := newAgg()
	a.Observe(progressOf(s, 7, 1))
	st := a.Snapshot(t0.Add(600 * msD)).Endpoints[0]
	if !st.Latest.TTFTOK || st.Latest.TTFT != 500 || st.InFlight.Requests != 1 || st.InFlight.TokensMax != 1 {
		t.Errorf("after the first token: latest %+v, in flight %+v", st.Latest, st.InFlight)
	}
	for n := 3; n <= 21; n += 2 { // a Progress every 100 ms: 21 chunks by t0+1.5 s
		a.Observe(progressOf(s, 7, n))
	}
	st = a.Snapshot(t0.Add(2 * time.Second)).Endpoints[0]
	// 21 tokens over the 1.5 s since the first token.
	exact(t, "aggregate in flight", st.AggregateTPS, 21/1.5)
	exact(t, "tokens per second so far", sumTokens(st), 21)
	// The chunks of t0+0.5 … 0.9 s were reported in second t0; the one of 0.95 s with the
	// Progress of 1.0 s (a Progress counts the chunks since the last one at its own instant).
	if sec := st.Seconds[len(st.Seconds)-3]; !sec.At.Equal(t0) || sec.TTFTs != 1 || sec.TTFT != 500 || !sec.Active || sec.Tokens != 9 {
		t.Errorf("second t0: %+v, want the TTFT 500 ms, 9 tokens, active", sec)
	}
	in := st.InFlight
	if in.Requests != 1 || in.TokensMin != 21 || in.TokensMax != 21 || in.MaxTokens != 64 || !in.Estimated || !in.DecodeOK {
		t.Errorf("in flight: %+v", in)
	}
	exact(t, "decode so far", in.DecodeTPS, 20/1.0)
	if !st.Latest.DecodeLive || st.Latest.DecodeTPS != in.DecodeTPS {
		t.Errorf("latest decode %+v: want the one in flight", st.Latest)
	}
	if st.Requests != 0 || st.OutputTokens != 0 || st.Whole.TTFT.Count != 0 {
		t.Errorf("a request in flight entered the finished figures: %d requests, %d tokens", st.Requests, st.OutputTokens)
	}

	a.Observe(&sample.Done{Endpoint: 0, Sample: *s})
	only := newAgg()
	only.Observe(&sample.Done{Endpoint: 0, Sample: *s})
	for _, at := range []time.Duration{2 * time.Second, 3 * time.Second, 9 * time.Second} {
		got, want := a.Snapshot(t0.Add(at)).Endpoints[0], only.Snapshot(t0.Add(at)).Endpoints[0]
		exact(t, "reconciled aggregate", got.AggregateTPS, want.AggregateTPS)
		for i := range got.Seconds {
			if g, w := got.Seconds[i], want.Seconds[i]; math.Abs(g.Tokens-w.Tokens) > 1e-9 || g.TTFTs != w.TTFTs || g.TTFT != w.TTFT || g.Active != w.Active {
				t.Fatalf("at +%v second %v: %+v, want %+v", at, g.At, g, w)
			}
		}
		if got.InFlight.Requests != 0 {
			t.Errorf("finished request still in flight: %+v", got.InFlight)
		}
	}
	exact(t, "exact total", sumTokens(a.Snapshot(t0.Add(3 * time.Second)).Endpoints[0]), 80)
}

// A request that fails takes back every live figure: errors never count in speed or latency
// figures, in flight or not.
func TestFailedRequestTakesBackItsProgress(t *testing.T) {
	s := sampletest.OK("a", "m", 0, t0).Stream(500*msD, 40, 50*msD, 80).Ptr()
	s.Seq = 3
	a := newAgg()
	a.Observe(progressOf(s, 3, 30))
	if st := a.Snapshot(t0.Add(2 * time.Second)).Endpoints[0]; st.AggregateTPS == 0 || sumTokens(st) != 30 {
		t.Fatalf("in flight: %.1f tok/s, %.0f tokens", st.AggregateTPS, sumTokens(st))
	}
	s.Outcome, s.ErrorKind, s.FinishReason = sample.OutcomeError, sample.ErrStreamError, ""
	a.Observe(&sample.Done{Endpoint: 0, Sample: *s})
	st := a.Snapshot(t0.Add(3 * time.Second)).Endpoints[0]
	if st.AggregateTPS != 0 || sumTokens(st) != 0 || st.Latest.TTFTOK || st.InFlight.Requests != 0 {
		t.Errorf("after the error: %.2f tok/s, %.1f tokens, latest %+v, in flight %+v", st.AggregateTPS, sumTokens(st), st.Latest, st.InFlight)
	}
	for _, sec := range st.Seconds {
		if sec.TTFTs != 0 {
			t.Errorf("second %v keeps a TTFT of the failed request", sec.At)
		}
		if sec.At.Unix() == t0.Unix() && !sec.Active {
			t.Errorf("second %v: the failed request was in flight, yet not active", sec.At)
		}
	}
}

// Warm-ups and interactive requests report Progress too; none of it counts.
func TestProgressOfWarmupsAndStreamsIgnored(t *testing.T) {
	s := sampletest.OK("a", "m", 0, t0).Stream(500*msD, 10, 50*msD, 10).Ptr()
	a := newAgg()
	w := progressOf(s, 1, 10)
	w.Warmup = true
	i := progressOf(s, 2, 10)
	i.Stream = 5
	if a.Observe(w) || a.Observe(i) {
		t.Error("Observe reported a change for a warm-up's or a stream's Progress")
	}
	if st := a.Snapshot(t0.Add(2 * time.Second)).Endpoints[0]; sumTokens(st) != 0 || st.InFlight.Requests != 0 || st.Latest.TTFTOK {
		t.Errorf("counted: %+v", st.InFlight)
	}
}

// Seconds with no request in flight are gaps (not active); a second in flight without tokens
// is a true zero; the series ends with the snapshot's own second, partly over.
func TestSecondsGapsAndZeros(t *testing.T) {
	a := newAgg()
	// In flight from t0+10 s, first token at t0+12.5 s: seconds 10 and 11 are zeros.
	s := sampletest.OK("a", "m", 0, t0.Add(10*time.Second)).Stream(2500*msD, 10, 50*msD, 10).Ptr()
	s.Seq = 1
	a.Observe(progressOf(s, 1, 5))
	st := a.Snapshot(t0.Add(13*time.Second + 300*msD)).Endpoints[0]
	n := len(st.Seconds)
	if last := st.Seconds[n-1]; n != SecondsKept || !last.At.Equal(t0.Add(13*time.Second)) || last.Span != 300*msD || !last.Active {
		t.Fatalf("%d seconds, the last %+v: want %d ending with t0+13 s, 300 ms of it over, active", n, last, SecondsKept)
	}
	if st.Seconds[n-2].Span != time.Second {
		t.Errorf("a whole second's span %v", st.Seconds[n-2].Span)
	}
	bySec := map[int]Second{}
	for _, sec := range st.Seconds {
		bySec[int(sec.At.Sub(t0)/time.Second)] = sec
	}
	for s, want := range map[int]struct {
		active bool
		tokens float64
	}{8: {false, 0}, 9: {false, 0}, 10: {true, 0}, 11: {true, 0}, 12: {true, 5}} {
		if got := bySec[s]; got.Active != want.active || got.Tokens != want.tokens {
			t.Errorf("second %d: active %v, %.1f tokens; want %v, %.1f", s, got.Active, got.Tokens, want.active, want.tokens)
		}
	}
}

// Reset while requests stream: what they counted before stays out of the new figures, and
// their further tokens count from the reset on.
func TestResetWithRequestsInFlight(t *testing.T) {
	s := sampletest.OK("a", "m", 0, t0).Stream(500*msD, 40, 50*msD, 40).Ptr()
	s.Seq = 1
	a := newAgg()
	a.Observe(progressOf(s, 1, 20))
	a.Reset()
	a.Observe(progressOf(s, 1, 30))
	if got := sumTokens(a.Snapshot(t0.Add(3 * time.Second)).Endpoints[0]); got != 10 {
		t.Errorf("after Reset: %.0f tokens in the series, want the 10 that came after", got)
	}
}

// A request cut by the end of the run (Sample.Cut) keeps its TTFT, in the per-second series
// too; its tokens leave the speed figures, as docs/metrics.md says of cut requests.
func TestCutRequestKeepsItsTTFTOnly(t *testing.T) {
	s := sampletest.OK("a", "m", 0, t0).Stream(500*msD, 40, 50*msD, 40).Ptr()
	s.Seq = 5
	a := newAgg()
	a.Observe(progressOf(s, 5, 20))
	s.Cut, s.Outcome, s.FinishReason = true, sample.OutcomeTruncated, ""
	a.Observe(&sample.Done{Endpoint: 0, Sample: *s})
	st := a.Snapshot(t0.Add(3 * time.Second)).Endpoints[0]
	if sumTokens(st) != 0 || st.AggregateTPS != 0 {
		t.Errorf("a cut request's tokens stayed: %.0f in the series, %.1f tok/s", sumTokens(st), st.AggregateTPS)
	}
	ttfts := 0
	for _, sec := range st.Seconds {
		ttfts += sec.TTFTs
	}
	if ttfts != 1 || !st.Latest.TTFTOK || st.Latest.TTFT != 500 {
		t.Errorf("a cut request's TTFT: %d in the series, latest %+v; want it kept", ttfts, st.Latest)
	}
}
