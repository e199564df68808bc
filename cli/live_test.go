package cli

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/probe"
	"tokscope/promexport"
	"tokscope/stats"
)

// steadyServer streams every request on a known schedule: a role chunk at once, then one
// content chunk per gap from ttft on, each worth 2 tokens by the server's count (its text, one
// word, is 1 to the offline tokenizer), and the usage only at the end. The first request is
// short (the warm-up), the next ones long.
func steadyServer(t *testing.T, ttft, gap time.Duration, shortChunks, longChunks int) *httptest.Server {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		chunks := longChunks
		if n.Add(1) == 1 {
			chunks = shortChunks
		}
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		send := func(at time.Duration, data string) bool {
			if d := time.Until(start.Add(at)); d > 0 {
				select {
				case <-time.After(d):
				case <-r.Context().Done():
					return false
				}
			}
			_, err := fmt.Fprintf(w, "data: %s\n\n", data)
			return err == nil && rc.Flush() == nil
		}
		const head = `{"id":"chatcmpl-steady","object":"chat.completion.chunk","created":1,"model":"m","choices":`
		send(0, head+`[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)
		for i := range chunks {
			if !send(ttft+time.Duration(i)*gap, head+`[{"index":0,"delta":{"content":" word"},"finish_reason":null}]}`) {
				return
			}
		}
		last := ttft + time.Duration(chunks-1)*gap
		send(last, head+`[{"index":0,"delta":{},"finish_reason":"length"}]}`)
		send(last, fmt.Sprintf(`{"id":"chatcmpl-steady","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":%d,"total_tokens":%d}}`, 2*chunks, 2*chunks+3))
		send(last, "[DONE]")
	}))
	t.Cleanup(srv.Close)
	return srv
}

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
// sends usage only at the end, so what is live is the estimate (the endpoint's tokens per
// chunk, learned from the warm-up), and the run is wired as a real one: Runner events into
// stats.Observe, the Runner's hooks into the exporter.
func TestLiveAggregateAndCounterFollowTheSchedule(t *testing.T) {
	const (
		gap        = 40 * time.Millisecond // 25 chunks/s × 2 tokens = 50 tok/s
		trueRate   = 50.0
		longChunks = 175 // 7 s
		window     = 2 * time.Second
	)
	srv := steadyServer(t, 300*time.Millisecond, gap, 10, longChunks)
	ep := config.Endpoint{Name: "steady", BaseURL: srv.URL + "/v1", Model: "m", Prompt: "hi", MaxTokens: 2 * longChunks,
		Concurrency: 1, Timeout: time.Minute, Stall: 10 * time.Second}
	eps := []config.Endpoint{ep}
	exp := promexport.New(eps)
	runner := probe.NewRunner(eps, probe.Options{Warmup: 1, Requests: 1,
		OnDone: []func(*probe.Sample){exp.Observe}, OnStart: []func(string, uint64){exp.Started},
		OnEnd: []func(string, uint64){exp.Finished}, OnProgress: []func(*probe.Progress){exp.Progress}})
	agg := stats.New(eps)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() { _ = runner.Run(ctx) }()

	// One goroutine, as in a real run, feeds the statistics and reads them.
	var first time.Time // the long stream's first token
	var done *probe.Done
	observe := func(ev probe.Event) {
		switch ev := ev.(type) {
		case *probe.Progress:
			if !ev.Warmup && first.IsZero() {
				first = ev.Start.Add(ev.FirstToken)
			}
		case *probe.Done:
			if !ev.Sample.Warmup {
				done = ev
			}
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
	if done == nil || done.Sample.Tokens != 2*longChunks {
		t.Fatalf("the long stream's Done: %+v", done)
	}
	st := agg.Snapshot(time.Now().Add(time.Second)).Endpoints[0] // the series ends with the last whole second
	var series float64
	for _, s := range st.Seconds {
		series += s.Tokens
	}
	if st.OutputTokens != 2*longChunks || math.Abs(series-2*longChunks) > 1e-6 {
		t.Errorf("after the end: %d output tokens, %.3f in the per-second series; want %d, exact", st.OutputTokens, series, 2*longChunks)
	}
	if c := counterValue(t, exp, "steady"); c != 2*longChunks {
		t.Errorf("after the end: counter %.3f, want %d, exact", c, 2*longChunks)
	}
}
