package ui

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"tokscope/calibrate"
	"tokscope/config"
	"tokscope/fanout"
	"tokscope/probe"
	"tokscope/sample"
	"tokscope/sim"
	"tokscope/stats"
)

// BenchmarkTimingError measures the probes' timing error against the simulator's own flush
// times while the events are consumed headless (the run's loop into stats) and while a real
// bubbletea program renders them (120×40, output discarded). The UI must not slow the probes:
// both report the same error figures, and the TUI receives every Done event.
//
//	go test ./ui -run '^$' -bench BenchmarkTimingError -benchtime 1x
func BenchmarkTimingError(b *testing.B) {
	for _, mode := range []string{"headless", "tui"} {
		b.Run(mode, func(b *testing.B) {
			var res calibrate.Result
			for range b.N {
				res = timingRun(b, mode == "tui")
			}
			b.ReportMetric(res.TTFTErrP50, "ttft_err_p50_ms")
			b.ReportMetric(res.TTFTErrP99, "ttft_err_p99_ms")
			b.ReportMetric(res.ChunkErrP50, "chunk_err_p50_ms")
			b.ReportMetric(res.ChunkErrP99, "chunk_err_p99_ms")
		})
	}
}

const (
	timingEndpoints   = 4
	timingConcurrency = 8
	timingRequests    = 16 // per endpoint
)

func timingRun(b *testing.B, tui bool) calibrate.Result {
	srv, err := sim.Start(sim.Options{TrackSends: true}, calibrate.Profile)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	var eps []config.Endpoint
	for i := range timingEndpoints {
		ep := config.NewEndpoint(srv.BaseURL(calibrate.Profile.Name), calibrate.Profile.Model)
		ep.Name, ep.Concurrency, ep.Interval = fmt.Sprintf("ep%d", i), timingConcurrency, 0
		eps = append(eps, ep)
	}
	runner := probe.NewRunner(eps, probe.Options{Warmup: 1, Requests: timingRequests})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- runner.Run(ctx) }()

	// Both modes read the events through the run's loop, as a real run does; one of its
	// observers keeps the finished requests (the counted ones for the error figures).
	var samples []sample.Sample
	reported := 0
	keep := fanout.Func(func(ev sample.Event) bool {
		if d, ok := ev.(*sample.Done); ok {
			reported++
			if d.Sample.Counted() {
				samples = append(samples, d.Sample)
			}
		}
		return false
	})
	received := 0
	if tui {
		board := NewBoard(eps, nil, nil) // the run's statistics, fed by its loop as in a TUI run
		loop := fanout.NewLoop(runner.Events(), fanout.Config{Observers: fanout.List{board, keep}, Screen: true}).Start()
		p := tea.NewProgram(New(runner, eps, loop.Screen(), Options{Board: board}),
			tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignalHandler())
		go p.Send(tea.WindowSizeMsg{Width: 120, Height: 40}) // Send blocks until Run reads messages
		go func() {
			if err := <-runErr; err != nil {
				b.Error(err)
			}
			loop.Wait()                        // the observers have every event
			time.Sleep(300 * time.Millisecond) // the UI handled its last batch
			p.Quit()
		}()
		final, err := p.Run()
		if err != nil {
			b.Fatal(err)
		}
		loop.Wait()
		m := final.(Model)
		m.takeSnapshot()
		for _, e := range m.snap.Endpoints {
			received += e.Requests + e.Warmups
		}
	} else {
		agg := stats.New(eps)
		loop := fanout.NewLoop(runner.Events(), fanout.Config{Observers: fanout.List{agg, keep}}).Start()
		loop.Wait()
		if err := <-runErr; err != nil {
			b.Fatal(err)
		}
		for _, e := range agg.Snapshot(time.Now()).Endpoints {
			received += e.Requests + e.Warmups
		}
	}
	if received != reported {
		b.Fatalf("the consumer received %d finished requests, the Runner reported %d", received, reported)
	}
	res, err := calibrate.Compare(srv, timingConcurrency, samples)
	if err != nil {
		b.Fatal(err)
	}
	return res
}
