package cli

import (
	"context"
	"math"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/probe"
	"tokscope/promexport"
	"tokscope/sample"
	"tokscope/sim"
	"tokscope/stats"
)

// counterValue reads tokscope_generation_tokens_total of endpoint name from e's registry.
func counterValue(t *testing.T, e *promexport.Exporter, name string) float64 {
	t.Helper()
	fams, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
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
	t.Fatalf("no tokscope_generation_tokens_total for %s", name)
	return 0
}

// While one long steady stream is still running, the live aggregate tok/s and the
// Prometheus token counter follow the server's schedule (50 tok/s) within 10 % in every 2 s
// window from the first token on; when it ends, both hold its exact usage count. The server
// sends usage only at the end, so what is live is the probe's estimate, and the run is wired
// as a real one: Runner events into stats.Observe, the Runner's hooks into the exporter.
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
	runner := probe.NewRunner(eps, probe.Options{Requests: 1,
		OnDone: []func(*sample.Sample){exp.Observe}, OnStart: []func(string, uint64){exp.Started},
		OnEnd: []func(string, uint64){exp.Finished}, OnProgress: []func(*sample.Progress){exp.Progress}})
	agg := stats.New(eps)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() { _ = runner.Run(ctx) }()

	// One goroutine, as in a real run, feeds the statistics and reads them.
	var first time.Time // the long stream's first token
	var done *sample.Done
	observe := func(ev sample.Event) {
		switch ev := ev.(type) {
		case *sample.Progress:
			if first.IsZero() {
				first = ev.Start.Add(ev.FirstToken)
			}
		case *sample.Done:
			done = ev
		}
		agg.Observe(ev)
	}
	drain := func() bool { // what is queued, without waiting; false once closed
		for {
			select {
			case ev, ok := <-runner.Events():
				if !ok {
					return false
				}
				observe(ev)
			default:
				return true
			}
		}
	}
	for first.IsZero() {
		ev, ok := <-runner.Events()
		if !ok {
			t.Fatal("the run ended before the long stream's first token")
		}
		observe(ev)
	}

	type reading struct {
		at             time.Time
		tokens, stored float64 // by the aggregate, by the counter
	}
	var readings []reading
	for k := 1; k <= 3; k++ {
		for time.Now().Before(first.Add(time.Duration(k) * window)) {
			if !drain() {
				t.Fatal("the run ended early")
			}
			time.Sleep(5 * time.Millisecond)
		}
		drain()
		now := time.Now()
		st := agg.Snapshot(now).Endpoints[0]
		// The whole stream is inside AggregateWindow: the tokens so far are the rate × the
		// time since the first token.
		readings = append(readings, reading{now, st.AggregateTPS * now.Sub(first).Seconds(), counterValue(t, exp, "steady")})
		if done != nil {
			t.Fatalf("the stream ended before the %v reading: the test no longer measures a stream in flight", now.Sub(first))
		}
		if !st.InFlight.Estimated || st.InFlight.Requests != 1 {
			t.Errorf("in flight: %+v", st.InFlight)
		}
		if math.Abs(st.AggregateTPS-trueRate) > 0.1*trueRate {
			t.Errorf("%v after the first token: aggregate %.1f tok/s, the server sends %.0f", now.Sub(first).Round(time.Millisecond), st.AggregateTPS, trueRate)
		}
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

	for drain() {
		time.Sleep(20 * time.Millisecond)
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
