package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"tokscope/fanout"
	"tokscope/record"
	"tokscope/report"
	"tokscope/sample"
	"tokscope/stats"
	"tokscope/ui"
)

// runReplay shows --record files again, in the TUI or as the headless summary, its records
// aggregated exactly as the live run aggregated its Samples (optionally under another TTFT
// definition, --ttft-from). No request is sent. Exit status as for a live run: 0 when every
// recorded request succeeded, 1 when some failed, 2 when the file cannot be read or the live
// view has no terminal (checked after the files: a missing file is the more useful error).
func runReplay(ctx context.Context, o *options, stdout, stderr io.Writer) int {
	rp, err := record.LoadReplay(o.replayPaths...)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: replay: %v\n", err)
		return ExitUsage
	}
	if !o.noTUI && !isTerminal(stdout) { // a replay's length is the record's: no --requests
		fmt.Fprintln(stderr, noTerminal+"for a summary on stdout add --no-tui")
		return ExitUsage
	}
	if o.slo != nil { // a record keeps no objectives: --slo judges the recorded requests
		for i := range rp.Endpoints {
			rp.Endpoints[i].SLO = *o.slo
		}
	}
	w := &wiring{endpoints: rp.Endpoints, report: newRunReport(o, rp.Endpoints, nil)} // --report, or the TUI's w key
	if rp.Shards > 1 {
		w.report.settings = append(w.report.settings, report.Setting{Name: "shards merged", Value: fmt.Sprint(rp.Shards)})
	}
	if o.noTUI {
		warnReplay(stderr, rp)
		w.stats = stats.New(rp.Endpoints, o.statsOptions()...)
		fanout.NewLoop(replayEvents(rp), fanout.Config{Observers: w.observers()}).Run()
		snap := w.stats.Snapshot(rp.End)
		snap.Shards = rp.Shards
		code := printSummary(stdout, stderr, o.output, snap, rp.Failed)
		code = sloStatus(o, &snap, code, stderr)
		if o.report == "" {
			return code
		}
		return w.report.write(snap, nil, code, stderr)
	}

	// The UI reads the records as the events of a finished run, then shows "replay". Its
	// clock stands at the end of the recording, so that the recent (60 s) windows and the
	// aggregate tok/s show the end of the run rather than nothing.
	board := w.board(o)
	loop := fanout.NewLoop(replayEvents(rp), fanout.Config{Observers: fanout.List{board}, Screen: true}).Start()
	end := rp.End
	uiErr := ui.Run(ctx, nil, rp.Endpoints, loop.Screen(), ui.Options{
		Now:    func() time.Time { return end },
		Prompt: o.prompt,
		Replay: replayName(o, rp),
		Board:  board,
	})
	loop.StopScreen()
	if code := exitStatus(stderr, uiErr); code != ExitOK {
		return code
	}
	warnReplay(stderr, rp) // after the terminal is restored, where it can be read
	return ExitOK
}

// replayEvents are the records of a replay as the events of the run they recorded: every
// request, then the live run's server scrapes as it observed them. The channel is closed.
func replayEvents(rp *record.Replay) <-chan sample.Event {
	events := make(chan sample.Event, len(rp.Events)+len(rp.Server))
	for _, ev := range rp.Events {
		events <- ev
	}
	for _, u := range rp.Server {
		events <- &fanout.Scrape{Update: u}
	}
	close(events)
	return events
}

// warnReplay says which records of the file were left out, if any.
func warnReplay(stderr io.Writer, rp *record.Replay) {
	if rp.Warning != "" {
		fmt.Fprintf(stderr, "tokscope: warning: replay: %s\n", rp.Warning)
	}
}

// takeReplayArgs: with --replay, the words after the flags are more records (a shell expands
// shard-*.jsonl into several); without it, they are an error.
func (o *options) takeReplayArgs(rest []string) error {
	if !o.set("replay") {
		return noArgs(o, rest)
	}
	o.replayPaths = append(o.replayPaths, rest...)
	return o.checkReplayPaths()
}

// checkReplayPaths refuses an empty path and sets o.replay, the paths for messages.
func (o *options) checkReplayPaths() error {
	for _, p := range o.replayPaths {
		if strings.TrimSpace(p) == "" {
			return usagef("invalid value \"\" for --replay: needs --record files, globs or directories")
		}
	}
	o.replay = strings.Join(o.replayPaths, " ")
	return nil
}

// replayName is what the TUI calls the replay: the one file or directory given, else how
// many files (and shards) it merged.
func replayName(o *options, rp *record.Replay) string {
	switch {
	case len(o.replayPaths) == 1 && rp.Files == 1:
		return filepath.Base(o.replayPaths[0])
	case rp.Shards > 1:
		return fmt.Sprintf("%d shards", rp.Shards)
	case len(o.replayPaths) == 1:
		return filepath.Base(filepath.Clean(o.replayPaths[0])) + fmt.Sprintf(" (%d files)", rp.Files)
	}
	return fmt.Sprintf("%d files", rp.Files)
}
