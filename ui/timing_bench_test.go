package ui

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"tokscope/calibrate"
	"tokscope/config"
	"tokscope/probe"
	"tokscope/sample"
	"tokscope/sim"
	"tokscope/stats"
)

// BenchmarkTimingError measures the probes' timing error against the simulator's own flush
// times while the events are consumed headless (a plain loop into stats) and while a real
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
	var mu sync.Mutex
	var samples []sample.Sample
	reported := 0
	runner := probe.NewRunner(eps, probe.Options{Warmup: 1, Requests: timingRequests, OnDone: []func(*sample.Sample){
		func(s *sample.Sample) {
			mu.Lock()
			defer mu.Unlock()
			reported++
			if s.Counted() {
				samples = append(samples, *s)
			}
		}}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- runner.Run(ctx) }()

	received := 0
	if tui {
		board := NewBoard(eps, nil, nil) // the run's statistics, fed by its loop as in a TUI run
		p := tea.NewProgram(New(runner, eps, throughLoop(board, runner.Events()), Options{Board: board}),
			tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignalHandler())
		go p.Send(tea.WindowSizeMsg{Width: 120, Height: 40}) // Send blocks until Run reads messages
		go func() {
			if err := <-runErr; err != nil {
				b.Error(err)
			}
			for len(runner.Events()) > 0 { // the UI has taken every queued event
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond) // its last batch is handled
			p.Quit()
		}()
		final, err := p.Run()
		if err != nil {
			b.Fatal(err)
		}
		m := final.(Model)
		m.takeSnapshot()
		for _, e := range m.snap.Endpoints {
			received += e.Requests + e.Warmups
		}
	} else {
		agg := stats.New(eps)
		for ev := range runner.Events() {
			if d, ok := ev.(*sample.Done); ok {
				agg.AddAt(d.Endpoint, &d.Sample)
				received++
			}
		}
		if err := <-runErr; err != nil {
			b.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if received != reported {
		b.Fatalf("the consumer received %d finished requests, the probes reported %d", received, reported)
	}
	res, err := calibrate.Compare(srv, timingConcurrency, samples)
	if err != nil {
		b.Fatal(err)
	}
	return res
}
