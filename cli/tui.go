package cli

import (
	"context"
	"fmt"
	"io"

	"tokscope/fanout"
	"tokscope/probe"
	"tokscope/servermetrics"
	"tokscope/ui"
)

// runTUI runs the interactive UI until the user quits or a signal arrives, then stops the
// probes; the UI restores the terminal before anything is printed.
func runTUI(ctx context.Context, eng *engine, o *options, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait := eng.start(ctx)
	// The screen gets the events through a Relay: the record file and the exporter take
	// them as they come, however far behind the screen is.
	relay := fanout.NewRelay(eng.runner.Events(), eng.taps())
	uiErr := ui.Run(ctx, relayedRunner{eng.runner, relay}, eng.endpoints, relay.Events(), ui.Options{
		Prompt:        o.prompt,
		Stats:         o.statsOptions(),
		Sweep:         eng.sweep,
		Search:        eng.search,
		Reporter:      eng.report,
		ServerMetrics: eng.serverUpdates(),
	})
	relay.Stop()
	cancel()
	runErr := wait()
	relay.Wait() // the taps had every event: the record file may be closed
	return exitStatus(stderr, uiErr, runErr)
}

// relayedRunner is the Runner as the UI drives it through a Relay: the stream text it did not
// get counts the deltas either dropped.
type relayedRunner struct {
	*probe.Runner
	relay *fanout.Relay
}

func (r relayedRunner) DroppedDeltas() uint64 {
	return r.Runner.DroppedDeltas() + r.relay.DroppedDeltas()
}

// serverUpdates is the scraper's channel, nil without one.
func (e *engine) serverUpdates() <-chan servermetrics.Update {
	if e.scraper == nil {
		return nil
	}
	return e.scraper.Updates()
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
