package cli

import (
	"context"
	"fmt"
	"io"

	"tokscope/fanout"
	"tokscope/probe"
	"tokscope/ui"
)

// runTUI runs the interactive UI until the user quits or a signal arrives, then stops the
// probes; the UI restores the terminal before anything is printed.
func runTUI(ctx context.Context, w *wiring, o *options, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait := w.start(ctx)
	if w.search != nil {
		go w.search.Run(ctx, w.runner)
	}
	// The run's loop feeds the taps (the record file, the exporter, the sweep's schedule, the
	// search) and the screen's statistics (the Board) as events come, however far behind the
	// screen is, and queues them for it. The scrapes go on until the user quits: the screen
	// keeps showing the servers.
	board := w.board(o)
	loop := fanout.NewLoop(w.runner.Events(), fanout.Config{Observers: append(w.taps(), board), Scrapes: w.scrapes(), Screen: true}).Start()
	uiErr := ui.Run(ctx, screenRunner{w.runner, loop}, w.endpoints, loop.Screen(), ui.Options{
		Prompt: o.prompt,
		Board:  board,
		Search: w.search,
	})
	loop.StopScreen()
	cancel()
	runErr := wait()
	loop.Wait() // the taps had every event: the record file may be closed
	return exitStatus(stderr, uiErr, runErr)
}

// screenRunner is the Runner as the UI drives it through the run's loop: the stream text it
// did not get counts the deltas either dropped.
type screenRunner struct {
	*probe.Runner
	loop *fanout.Loop
}

func (r screenRunner) DroppedDeltas() uint64 {
	return r.Runner.DroppedDeltas() + r.loop.DroppedDeltas()
}

// board is the screen's statistics, with the sweep's steps and the report: the run's own,
// which its loop feeds and the UI reads. A TUI's reporter is always there: its w key.
func (w *wiring) board(o *options) *ui.Board {
	var rep ui.Reporter // a nil *runReport would be a Reporter that is not nil
	if w.report != nil {
		rep = w.report
	}
	return ui.NewBoard(w.endpoints, w.steps, rep, o.statsOptions()...)
}

// exitStatus prints the first error that is not a cancellation (the way runs end) and
// returns 1 when there is one.
func exitStatus(stderr io.Writer, errs ...error) int {
	for _, err := range errs {
		if err := notCancelled(err); err != nil {
			fmt.Fprintf(stderr, "tokscope: %v\n", err)
			return ExitFailed
		}
	}
	return ExitOK
}
