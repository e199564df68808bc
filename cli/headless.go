package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"tokscope/config"
	"tokscope/export"
	"tokscope/fanout"
	"tokscope/sample"
	"tokscope/servermetrics"
	"tokscope/stats"
	"tokscope/sweep"
)

// runHeadless feeds every event into the statistics until the run ends, then prints the
// summary. On a terminal, stderr shows the run's progress meanwhile (progress.go).
func runHeadless(ctx context.Context, eng *engine, o *options, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx) // the end of the run stops the scraper
	defer cancel()
	agg := stats.New(eng.endpoints, o.statsOptions()...)
	progress := newProgressLine(stderr, time.Now(), o.requests*len(eng.endpoints), o.duration)
	wait := eng.start(ctx)
	failed := false
	var updates <-chan servermetrics.Update
	if eng.scraper != nil {
		updates = eng.scraper.Updates()
	}
	var tick <-chan time.Time
	if progress != nil {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		tick = t.C
	}
	fan := eng.consumers(agg, watchRun(&failed, progress, eng.endpoints, stderr))
	for events := eng.runner.Events(); events != nil; {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				break
			}
			fan.Observe(ev)
		case u, ok := <-updates:
			if !ok {
				updates = nil
				break
			}
			agg.ObserveServer(u)
		case <-tick:
		}
		if now := time.Now(); progress.due(now) {
			snap := agg.Snapshot(now)
			progress.draw(now, &snap)
		}
	}
	progress.clear()
	cancel()
	if updates != nil {
		for u := range updates { // until the scraper has stopped; the GPUs' last scrape counts
			if u.Source == servermetrics.SourceGPU {
				agg.ObserveServer(u)
			}
		}
	}
	if err := wait(); err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		failed = true
	}
	agg.PollArrivals(eng.runner)
	agg.SetEnd(eng.runner.End())
	snap := agg.Snapshot(time.Now())
	code := printSummary(stdout, stderr, o.output, snap, failed)
	code = sloStatus(o, &snap, code, stderr)
	return eng.report.write(snap, nil, code, stderr)
}

// runSweepHeadless runs the sweep, stops the Runner once every step's results are final, and
// prints the steps. Interrupted, it prints the steps that ended and says so.
func runSweepHeadless(ctx context.Context, eng *engine, o *options, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tr := eng.sweep.Track(eng.endpoints, nil, o.statsOptions()...)
	progress := newProgressLine(stderr, time.Now(), 0, 0)
	wait := eng.start(ctx)
	failed := false
	var agg *stats.Aggregator // the whole run, for the report's summary and the progress line
	if eng.report != nil || progress != nil {
		agg = stats.New(eng.endpoints, o.statsOptions()...)
	}
	fan := eng.consumers(agg, watchRun(&failed, progress, eng.endpoints, stderr))
	steps := &sweepSteps{w: stderr, progress: progress, start: time.Now()}
	tr.Consume(eng.runner.Events(), 100*time.Millisecond, func(ev sample.Event) {
		if ev != nil {
			fan.Observe(ev)
		}
		steps.tell(tr)
		if now := time.Now(); progress.due(now) {
			snap := agg.Snapshot(now)
			progress.drawSweep(now, &snap, tr.Progress())
		}
	}, cancel) // cancel once every request of the last step has reported
	progress.clear()
	if err := wait(); err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		failed = true
	}
	rep := tr.Report()
	code := sweepStatus(stdout, stderr, o.output, &rep, tr.Progress().Finished, failed)
	if agg != nil {
		code = eng.report.write(agg.Snapshot(time.Now()), &rep, code, stderr)
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
