package main

// --replay FILE: a --record file shown again, in the TUI or as the headless summary,
// re-aggregated from its per-chunk records exactly as the live run aggregated its Samples
// (optionally under another TTFT definition, --ttft-from). No request is sent.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"tokscope/config"
	"tokscope/export"
	"tokscope/probe"
	"tokscope/stats"
	"tokscope/ui"
)

// checkReplay rejects flags that make no sense with --replay: they choose what to measure,
// and a replay measures nothing.
func (o *options) checkReplay() error {
	if o.replay == "" {
		return nil
	}
	for _, name := range []string{"demo", "url", "model", "config", "record", "list-models", "calibrate", "metrics-listen"} {
		if o.set(name) {
			return usagef("--replay and --%s exclude each other: a replay shows a recorded run and sends no request", name)
		}
	}
	return nil
}

// replayRun is a --record file read back.
type replayRun struct {
	endpoints []config.Endpoint // in order of first appearance
	events    []probe.Event     // *probe.Done in file order; interactive stream records left out
	end       time.Time         // when the last recorded request finished
	failed    bool              // a counted (non-warm-up, probe) request did not succeed
}

// loadReplay reads path. A torn last line (a killed run) is not an error: the records before
// it are used and warning says so. Any other unreadable line is an error naming the line.
func loadReplay(path string) (run *replayRun, warning string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	recs, err := export.ReadRecords(f)
	switch {
	case errors.Is(err, export.ErrTruncated):
		warning = fmt.Sprintf("%s: %v; using the %d records before it", path, err, len(recs))
	case err != nil:
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, warning, fmt.Errorf("%s: no records (is it a --record file?)", path)
	}
	run = &replayRun{}
	index := map[string]int{}
	for i := range recs {
		s := recs[i].Sample()
		ep, ok := index[s.Endpoint]
		if !ok {
			ep = len(run.endpoints)
			index[s.Endpoint] = ep
			run.endpoints = append(run.endpoints, config.Endpoint{Name: s.Endpoint, Model: s.Model})
		}
		if s.Stream != 0 {
			continue // an interactive stream/race request: never in statistics, live or replayed
		}
		if !s.Warmup && s.Outcome != probe.OutcomeOK {
			run.failed = true
		}
		if done := finishedAt(&s); done.After(run.end) {
			run.end = done
		}
		run.events = append(run.events, &probe.Done{Endpoint: ep, Sample: s})
	}
	return run, warning, nil
}

// finishedAt is when a request finished on the wall clock: t0 + End, else its last instant.
func finishedAt(s *probe.Sample) time.Time {
	for _, d := range []time.Duration{s.End, s.LastToken, s.FirstEvent, s.Headers} {
		if d >= 0 {
			return s.Start.Add(d)
		}
	}
	return s.Start
}

// runReplay shows the recorded run: the TUI, or the summary with --no-tui. Exit status as
// for a live run: 0 when every recorded request succeeded, 1 when some failed, 2 when the
// file cannot be read.
func runReplay(ctx context.Context, o *options, stdout, stderr io.Writer) int {
	run, warning, err := loadReplay(o.replay)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: --replay %v\n", err)
		return exitUsage
	}
	if o.noTUI {
		if warning != "" {
			fmt.Fprintf(stderr, "tokscope: warning: --replay %s\n", warning)
		}
		agg := stats.New(run.endpoints)
		agg.SetTTFTFrom(o.ttftFrom)
		for _, ev := range run.events {
			agg.Observe(ev)
		}
		if err := writeSummary(stdout, agg.Snapshot(run.end), o.output); err != nil {
			fmt.Fprintf(stderr, "tokscope: writing the summary: %v\n", err)
			return exitFailed
		}
		if run.failed {
			return exitFailed
		}
		return exitOK
	}

	// The UI reads the records as the events of a finished run, then shows "replay". Its
	// clock stands at the end of the recording, so that the recent (60 s) windows and the
	// aggregate tok/s show the end of the run rather than nothing.
	events := make(chan probe.Event, len(run.events))
	for _, ev := range run.events {
		events <- ev
	}
	close(events)
	end := run.end
	err = ui.Run(ctx, nil, run.endpoints, events, ui.Options{
		Now:      func() time.Time { return end },
		Prompt:   o.prompt,
		TTFTFrom: o.ttftFrom,
		Replay:   filepath.Base(o.replay),
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		return exitFailed
	}
	if warning != "" { // after the terminal is restored, where it can be read
		fmt.Fprintf(stderr, "tokscope: warning: --replay %s\n", warning)
	}
	return exitOK
}

// writeSummary prints snap in the --output format.
func writeSummary(w io.Writer, snap stats.Snapshot, format string) error {
	switch format {
	case "json":
		return export.WriteJSON(w, snap)
	case "csv":
		return export.WriteCSV(w, snap)
	}
	return export.WriteTable(w, snap)
}
