package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"tokscope/config"
	"tokscope/export"
	"tokscope/fanout"
	"tokscope/sample"
	"tokscope/stats"
	"tokscope/sweep"
)

// runHeadless feeds every event into the statistics until the run ends, then prints the
// summary. On a terminal, stderr shows the run's progress meanwhile (progress.go).
func runHeadless(ctx context.Context, w *wiring, o *options, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx) // the end of the run stops the scraper
	defer cancel()
	w.stats = stats.New(w.endpoints, o.statsOptions()...)
	progress := newProgressLine(stderr, time.Now(), o.requests*len(w.endpoints), o.duration)
	wait := w.start(ctx)
	failed := false
	var beat func(time.Time)
	if progress != nil {
		beat = func(now time.Time) {
			if progress.due(now) {
				snap := w.stats.Snapshot(now)
				progress.draw(now, &snap)
			}
		}
	}
	w.loop(progressEvery, beat, watchRun(&failed, progress, w.endpoints, stderr)).Run()
	progress.clear()
	requestsFailed := failed
	if err := wait(); err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		failed = true
	}
	w.stats.PollArrivals(w.runner)
	w.stats.SetEnd(w.runner.End())
	snap := w.stats.Snapshot(time.Now())
	code := printSummary(stdout, stderr, o.output, snap, failed)
	if requestsFailed && code == ExitFailed {
		fmt.Fprintln(stderr, failedNote(&snap)) // a replay, which reproduces a run, stays quiet
	}
	code = sloStatus(o, &snap, code, stderr)
	return w.report.write(snap, nil, code, stderr)
}

// runSweepHeadless runs the sweep, stops the Runner once every step's results are final, and
// prints the steps. Interrupted, it prints the steps that ended and says so.
func runSweepHeadless(ctx context.Context, w *wiring, o *options, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tr := w.steps
	progress := newProgressLine(stderr, time.Now(), 0, 0)
	if w.report != nil || progress != nil { // the whole run, for the report's summary and the progress line
		w.stats = stats.New(w.endpoints, o.statsOptions()...)
	}
	wait := w.start(ctx)
	failed := false
	steps := &sweepSteps{w: stderr, progress: progress, start: time.Now()}
	beat := func(now time.Time) { // a step may end without any event: the clock refreshes the steps
		tr.Refresh()
		steps.tell(tr)
		if progress.due(now) {
			snap := w.stats.Snapshot(now)
			progress.drawSweep(now, &snap, tr.Progress())
		}
		if tr.Complete() {
			cancel() // every request of the last step has reported
		}
	}
	w.loop(100*time.Millisecond, beat, watchRun(&failed, progress, w.endpoints, stderr)).Run()
	tr.Close()
	progress.clear()
	if err := wait(); err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		failed = true
	}
	rep := tr.Report()
	code := sweepStatus(stdout, stderr, o.output, &rep, tr.Progress().Finished, failed)
	if w.stats != nil {
		code = w.report.write(w.stats.Snapshot(time.Now()), &rep, code, stderr)
	}
	return code
}

// statsOptions set up every Aggregator of the run (the summary's, the UI's, a sweep's steps,
// a replay's): built here, once, so that no consumer forgets one. A replay sends nothing:
// --rate does not describe it.
func (o *options) statsOptions() []stats.Option {
	opts := []stats.Option{stats.WithTTFTFrom(o.ttftFrom), stats.WithSLOTarget(o.sloTarget)}
	if o.replay == "" {
		opts = append(opts, stats.WithRate(o.rate))
	}
	return opts
}

// sweepStatus prints the sweep's steps and returns the exit status: 1 when it was
// interrupted, a request failed, or the steps could not be written.
func sweepStatus(stdout, stderr io.Writer, format string, rep *sweep.Report, finished int, failed bool) int {
	if err := export.WriteSweep(stdout, format, *rep); err != nil {
		fmt.Fprintf(stderr, "tokscope: writing the sweep: %v\n", err)
		return ExitFailed
	}
	if !rep.Complete {
		fmt.Fprintf(stderr, "tokscope: sweep interrupted after %d of %d steps\n", finished, len(rep.Plan.Concurrency))
		return ExitFailed
	}
	if failed {
		n := 0
		for _, r := range rep.Results {
			n += r.Errors + r.Truncated // as the step lines count errors (stepResultText)
		}
		if n > 0 {
			fmt.Fprintf(stderr, "tokscope: %d requests of the steps failed (the table's errors); exit status 1\n", n)
		} else {
			fmt.Fprintln(stderr, "tokscope: a request failed outside the steps' figures; exit status 1")
		}
		return ExitFailed
	}
	return ExitOK
}

// watchRun is a headless run's own consumer of its events: a counted request that failed
// makes the exit status 1 (failed), and an endpoint stopped after identical permanent errors
// is said on stderr, on a line of its own above the progress line.
func watchRun(failed *bool, progress *progressLine, eps []config.Endpoint, stderr io.Writer) fanout.Func {
	return func(ev sample.Event) bool {
		*failed = *failed || requestFailed(ev)
		if note := stopNote(ev, eps); note != "" {
			progress.clear() // the note gets its own line; the progress is redrawn below it
			fmt.Fprintln(stderr, note)
		}
		return false
	}
}

// requestFailed reports whether ev is a counted request that failed: the exit status is 1.
func requestFailed(ev sample.Event) bool {
	d, ok := ev.(*sample.Done)
	return ok && d.Sample.Failed()
}

// stopNote is the line that says an endpoint stopped after identical permanent errors (probe
// Status with a Reason), "" for any other event.
func stopNote(ev sample.Event, eps []config.Endpoint) string {
	st, ok := ev.(*sample.Status)
	if !ok || st.State != sample.StateStopped || st.Reason == "" || !st.Endpoint.In(len(eps)) {
		return ""
	}
	return "tokscope: " + eps[st.Endpoint].Name + ": " + st.Reason
}

// printSummary prints snap in the --output format; the exit status is 1 when a request
// failed or the summary could not be written.
func printSummary(stdout, stderr io.Writer, format string, snap stats.Snapshot, failed bool) int {
	if err := export.WriteSummary(stdout, format, snap); err != nil {
		fmt.Fprintf(stderr, "tokscope: writing the summary: %v\n", err)
		return ExitFailed
	}
	if failed {
		return ExitFailed
	}
	return ExitOK
}

// failedNote is the line on stderr that says why the exit status is 1, whatever the output
// format: "tokscope: 2 of 10 requests failed (flaky-cloud: http_429 ×1, stream_error ×1);
// exit status 1". A stream that ended without a finish reason is "truncated" there.
func failedNote(snap *stats.Snapshot) string {
	var failed, all int
	var per []string
	for i := range snap.Endpoints {
		e := &snap.Endpoints[i]
		failed, all = failed+e.Errors+e.Truncated, all+e.Requests
		kinds := slices.Sorted(maps.Keys(e.ErrorKinds))
		for k, kind := range kinds {
			kinds[k] = fmt.Sprintf("%s ×%d", kind, e.ErrorKinds[kind])
		}
		if e.Truncated > 0 {
			kinds = append(kinds, fmt.Sprintf("truncated ×%d", e.Truncated))
		}
		if len(kinds) > 0 {
			per = append(per, e.Name+": "+strings.Join(kinds, ", "))
		}
	}
	return fmt.Sprintf("tokscope: %d of %d requests failed (%s); exit status 1", failed, all, strings.Join(per, "; "))
}
