package ui

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"tokscope/config"
	"tokscope/fanout"
	"tokscope/probe"
	"tokscope/sample"
	"tokscope/sim"
)

// watched is the real Model under a bubbletea program, counting what it handles: redraws,
// and how late each Progress is handled after its chunk arrived.
type watched struct {
	Model
	redraws *int
	lags    *[]time.Duration
}

func (w watched) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case redrawMsg:
		*w.redraws++
	case eventsMsg:
		now := time.Now()
		for _, ev := range msg.events {
			if p, ok := ev.(*sample.Progress); ok {
				*w.lags = append(*w.lags, now.Sub(p.Start.Add(p.At)))
			}
		}
	}
	next, cmd := w.Model.Update(msg)
	w.Model = next.(Model)
	return w, cmd
}

// BenchmarkLive64x8 runs 8 endpoints × 64 streams (512 in flight, 50 tok/s each: 25,600
// chunks/s, ~5,000 Progress/s) against the simulator for 10 s into a real bubbletea program
// drawing the dashboard at 120×40 (output discarded), and reports whether the UI keeps up:
// every finished request reaches it (the run fails otherwise), how often it redraws (at most
// 4 Hz), how many Progress it handles a second and how late after the chunk arrived, and the
// Progress the run's loop read from the Runner that did not reach it (the screen's queue
// drops them while far behind). A Progress the Runner's full channel dropped is not seen by
// anything and not counted.
//
//	go test ./ui -run '^$' -bench Live64x8 -benchtime 1x
func BenchmarkLive64x8(b *testing.B) {
	const (
		endpoints = 8
		streams   = 64
		run       = 10 * time.Second
	)
	for range b.N {
		var profiles []sim.Profile
		for i := range endpoints {
			profiles = append(profiles, sim.Profile{Name: fmt.Sprintf("ep%d", i), Model: "m", TTFT: 30 * time.Millisecond,
				TTFTJitter: 10 * time.Millisecond, TokensPerSecond: 50, TokensPerChunk: 1, MaxTokens: 64})
		}
		srv, err := sim.Start(sim.Options{}, profiles...)
		if err != nil {
			b.Fatal(err)
		}
		var eps []config.Endpoint
		for _, p := range profiles {
			ep := config.NewEndpoint(srv.BaseURL(p.Name), p.Model)
			ep.Name, ep.Concurrency, ep.Interval, ep.MaxTokens = p.Name, streams, 0, p.MaxTokens
			eps = append(eps, ep)
		}
		runner := probe.NewRunner(eps, probe.Options{Warmup: 1, Duration: run})
		ctx, cancel := context.WithTimeout(context.Background(), 2*run)
		runErr := make(chan error, 1)
		go func() { runErr <- runner.Run(ctx) }()

		// What the run's loop read from the Runner, counted by one of its observers.
		var reported, progressRead int
		count := fanout.Func(func(ev sample.Event) bool {
			switch ev.(type) {
			case *sample.Done:
				reported++
			case *sample.Progress:
				progressRead++
			}
			return false
		})
		var redraws int
		var lags []time.Duration
		board := NewBoard(eps, nil, nil) // the run's statistics, fed by its loop as in a TUI run
		loop := fanout.NewLoop(runner.Events(), fanout.Config{Observers: fanout.List{board, count}, Screen: true}).Start()
		p := tea.NewProgram(watched{New(runner, eps, loop.Screen(), Options{Board: board}), &redraws, &lags},
			tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignalHandler())
		go p.Send(tea.WindowSizeMsg{Width: 120, Height: 40})
		began := time.Now()
		go func() {
			if err := <-runErr; err != nil {
				b.Error(err)
			}
			loop.Wait()                        // the observers have every event
			time.Sleep(300 * time.Millisecond) // the UI handled the screen's last batch
			p.Quit()
		}()
		final, err := p.Run()
		elapsed := time.Since(began)
		cancel()
		srv.Close()
		if err != nil {
			b.Fatal(err)
		}
		loop.Wait()
		m := final.(watched).Model
		m.takeSnapshot()
		received := 0
		for _, e := range m.snap.Endpoints {
			received += e.Requests + e.Warmups + e.Cut // the run's end cuts what is in flight: reported too
		}
		if received != reported || received == 0 {
			b.Fatalf("the UI received %d finished requests, the Runner reported %d", received, reported)
		}
		slices.Sort(lags)
		q := func(p float64) float64 {
			if len(lags) == 0 {
				return 0
			}
			return float64(lags[min(len(lags)-1, int(p*float64(len(lags))))].Microseconds()) / 1000
		}
		b.ReportMetric(float64(received), "requests")
		b.ReportMetric(float64(len(lags))/elapsed.Seconds(), "progress/s")
		b.ReportMetric(float64(redraws)/elapsed.Seconds(), "redraws/s")
		b.ReportMetric(q(0.5), "progress_lag_p50_ms")
		b.ReportMetric(q(0.99), "progress_lag_p99_ms")
		b.ReportMetric(float64(progressRead-len(lags)), "progress_screen_dropped")
	}
}
