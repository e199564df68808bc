package cli

import (
	"context"
	"math"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/fanout"
	"tokscope/probe"
	"tokscope/promexport"
	"tokscope/sample"
	"tokscope/sim"
	"tokscope/stats"
)

// counterValue reads tokscope_generation_tokens_total of endpoint name from e's registry (NaN,
// and the test failed, when there is none). Safe off the test's goroutine.
func counterValue(t *testing.T, e *promexport.Exporter, name string) float64 {
	t.Helper()
	fams, err := e.Registry().Gather()
	if err != nil {
		t.Error(err)
		return math.NaN()
	}
	for _, f := range fams {
		if f.GetName() != "tokscope_generation_tokens_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "endpoint" && l.GetValue() == name {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Errorf("no tokscope_generation_tokens_total for %s", name)
	return math.NaN()
}

// While one long steady stream is still running, the live aggregate tok/s and the
// Prometheus token counter follow the server's schedule (50 tok/s) within 10 % in every 2 s
// window from the first token on; when it ends, both hold its exact usage count. The server
// sends usage only at the end, so what is live is the probe's estimate, and the run is wired
// as a real one: one fanout.Loop reads the Runner's events into the exporter's and the
// statistics' observers (exportTap, statsTap), and its Beat reads both, on the Loop's goroutine.
func TestLiveAggregateAndCounterFollowTheSchedule(t *testing.T) {
	const (
		trueRate = 50.0
		tokens   = 350 // 7 s
		window   = 2 * time.Second
	)
	// The simulator on a fixed schedule: 2 tokens per chunk at 50 tok/s, the usage only at the end.
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "steady", Model: "m", TTFT: 300 * time.Millisecond,
		TokensPerSecond: trueRate, TokensPerChunk: 2, MaxTokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ep := config.Endpoint{Name: "steady", BaseURL: srv.BaseURL("steady"), Model: "m", Prompt: "hi", MaxTokens: tokens,
		Concurrency: 1, Timeout: time.Minute, Stall: 10 * time.Second}
	eps := []config.Endpoint{ep}
	exp := promexport.New(eps)
	runner := probe.NewRunner(eps, probe.Options{Requests: 1})
	agg := stats.New(eps)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	type reading struct {
		at             time.Time
		tokens, stored float64 // by the aggregate, by the counter
	}
	var readings []reading
	var first time.Time // the long stream's first token
	var done *sample.Done
	var doneBefore time.Duration // after the first token, when the stream ended before a reading
	watchStream := fanout.Func(func(ev sample.Event) bool {
		switch ev := ev.(type) {
		case *sample.Progress:
			if first.IsZero() {
				first = ev.Start.Add(ev.FirstToken)
			}
		case *sample.Done:
			done = ev
		}
		return false
	})
	// A reading every window from the first token on, once the Loop has handed on what came before it.
	beat := func(now time.Time) {
		k := len(readings) + 1
		if first.IsZero() || k > 3 || now.Before(first.Add(time.Duration(k)*window)) {
			return
		}
		if done != nil {
			doneBefore = now.Sub(first)
		}
		st := agg.Snapshot(now).Endpoints[0]
		// The whole stream is inside AggregateWindow: the tokens so far are the rate × the
		// time since the first token.
		readings = append(readings, reading{now, st.AggregateTPS * now.Sub(first).Seconds(), counterValue(t, exp, "steady")})
		if !st.InFlight.Estimated || st.InFlight.Requests != 1 {
			t.Errorf("in flight: %+v", st.InFlight)
		}
		if math.Abs(st.AggregateTPS-trueRate) > 0.1*trueRate {
			t.Errorf("%v after the first token: aggregate %.1f tok/s, the server sends %.0f", now.Sub(first).Round(time.Millisecond), st.AggregateTPS, trueRate)
		}
	}
	loop := fanout.NewLoop(runner.Events(), fanout.Config{
		Observers: fanout.List{exportTap{exp, eps}, statsTap{agg}, watchStream},
		Beat:      beat, Every: 5 * time.Millisecond}).Start()
	go func() { _ = runner.Run(ctx) }()
	loop.Wait()

	if ctx.Err() != nil {
		t.Fatal("the run did not end by itself")
	}
	if len(readings) != 3 || doneBefore != 0 {
		t.Fatalf("%d readings of 3; the stream ended %v after its first token, before a reading: the test no longer measures a stream in flight",
			len(readings), doneBefore)
	}
	prev := reading{at: first, tokens: 2, stored: 2} // the first chunk's 2 tokens, at the first token
	for i, r := range readings {
		want := trueRate * r.at.Sub(prev.at).Seconds()
		if got := r.tokens - prev.tokens; math.Abs(got-want) > 0.1*want {
			t.Errorf("window %d (%.2f s): the aggregate counted %.1f tokens, the server sent %.1f", i+1, r.at.Sub(prev.at).Seconds(), got, want)
		}
		if got := r.stored - prev.stored; math.Abs(got-want) > 0.1*want {
			t.Errorf("window %d (%.2f s): the counter rose by %.1f tokens, the server sent %.1f", i+1, r.at.Sub(prev.at).Seconds(), got, want)
		}
		t.Logf("window %d: %.2f s, server %.1f tokens, aggregate %.1f, counter %.1f", i+1, r.at.Sub(prev.at).Seconds(), want, r.tokens-prev.tokens, r.stored-prev.stored)
		prev = r
	}

	if done == nil || done.Sample.Tokens != tokens {
		t.Fatalf("the long stream's Done: %+v", done)
	}
	st := agg.Snapshot(time.Now().Add(time.Second)).Endpoints[0] // the series ends with the last whole second
	var series float64
	for _, s := range st.Seconds {
		series += s.Tokens
	}
	if st.OutputTokens != tokens || math.Abs(series-tokens) > 1e-6 {
		t.Errorf("after the end: %d output tokens, %.3f in the per-second series; want %d, exact", st.OutputTokens, series, tokens)
	}
	if c := counterValue(t, exp, "steady"); c != tokens {
		t.Errorf("after the end: counter %.3f, want %d, exact", c, tokens)
	}
}
