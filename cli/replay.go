package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"tokscope/fanout"
	"tokscope/probe"
	"tokscope/record"
	"tokscope/servermetrics"
	"tokscope/stats"
	"tokscope/ui"
)

// runReplay shows a --record file again, in the TUI or as the headless summary, its records
// aggregated exactly as the live run aggregated its Samples (optionally under another TTFT
// definition, --ttft-from). No request is sent. Exit status as for a live run: 0 when every
// recorded request succeeded, 1 when some failed, 2 when the file cannot be read.
func runReplay(ctx context.Context, o *options, stdout, stderr io.Writer) int {
	rp, err := record.LoadReplay(o.replay)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: --replay %v\n", err)
		return ExitUsage
	}
	if o.slo != nil { // a record keeps no objectives: --slo judges the recorded requests
		for i := range rp.Endpoints {
			rp.Endpoints[i].SLO = *o.slo
		}
	}
	rep := newRunReport(o, rp.Endpoints, nil) // --report, or the TUI's w key
	if o.noTUI {
		warnReplay(stderr, rp)
		agg := stats.New(rp.Endpoints, o.statsOptions()...)
		fan := fanout.List{agg, rep}
		for _, ev := range rp.Events {
			fan.Observe(ev)
		}
		for _, u := range rp.Server { // the live run's server scrapes, as it observed them
			agg.ObserveServer(u)
		}
		snap := agg.Snapshot(rp.End)
		code := printSummary(stdout, stderr, o.output, snap, rp.Failed)
		code = sloStatus(o, &snap, code, stderr)
		if o.report == "" {
			return code
		}
		return rep.write(snap, nil, code, stderr)
	}

	// The UI reads the records as the events of a finished run, then shows "replay". Its
	// clock stands at the end of the recording, so that the recent (60 s) windows and the
	// aggregate tok/s show the end of the run rather than nothing.
	events := make(chan probe.Event, len(rp.Events))
	for _, ev := range rp.Events {
		events <- ev
	}
	close(events)
	server := make(chan servermetrics.Update, len(rp.Server))
	for _, u := range rp.Server {
		server <- u
	}
	close(server)
	end := rp.End
	uiErr := ui.Run(ctx, nil, rp.Endpoints, events, ui.Options{
		Now:      func() time.Time { return end },
		Prompt:   o.prompt,
		Stats:    o.statsOptions(),
		Replay:   filepath.Base(o.replay),
		Reporter: rep,

		ServerMetrics: server,
	})
	if code := exitStatus(stderr, uiErr); code != ExitOK {
		return code
	}
	warnReplay(stderr, rp) // after the terminal is restored, where it can be read
	return ExitOK
}

// warnReplay says which records of the file were left out, if any.
func warnReplay(stderr io.Writer, rp *record.Replay) {
	if rp.Warning != "" {
		fmt.Fprintf(stderr, "tokscope: warning: --replay %s\n", rp.Warning)
	}
}
