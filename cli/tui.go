package cli

import (
	"context"
	"fmt"
	"io"

	"tokscope/servermetrics"
	"tokscope/ui"
)

// runTUI runs the interactive UI until the user quits or a signal arrives, then stops the
// probes; the UI restores the terminal before anything is printed.
func runTUI(ctx context.Context, eng *engine, o *options, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait := eng.start(ctx)
	uiErr := ui.Run(ctx, eng.runner, eng.endpoints, eng.runner.Events(), ui.Options{
		Prompt:   o.prompt,
		TTFTFrom: o.ttftFrom,
		Rate:     o.rate,
		Sweep:    eng.sweep,
		Search:   eng.search,
		Reporter: eng.report,

		ServerMetrics: eng.serverUpdates(),
		SLOTarget:     o.sloTarget,
	})
	cancel()
	return exitStatus(stderr, uiErr, wait())
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
