package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"

	"tokscope/config"
	"tokscope/export"
	"tokscope/otlpexport"
	"tokscope/probe"
	"tokscope/promexport"
	"tokscope/servermetrics"
	"tokscope/sweep"
	"tokscope/workload"
)

// engine is what measures: the Runner over the configured endpoints, with the sweep, the
// record file and the Prometheus exporter hooked into it.
type engine struct {
	runner    *probe.Runner
	endpoints []config.Endpoint
	sweep     *sweep.Sweep     // nil unless --sweep
	recorder  *export.Recorder // nil unless --record
	report    *runReport       // --report, or the TUI's w key; nil otherwise
	// scraper reads the servers' own /metrics (--server-metrics); nil when off, and in a
	// headless sweep, whose steps have no server figures.
	scraper *servermetrics.Scraper
	push    *otlpexport.Pusher // --otlp; nil when off (otlp.go)
}

// buildEngine puts the run's flags into a Runner over cfg's endpoints: the workload, the
// schedule, the load shape, --record and --metrics-listen. On an error nothing is left open. The caller
// closes the engine (finish, or close on a panic).
func buildEngine(ctx context.Context, o *options, cfg *config.Config, stderr io.Writer) (*engine, error) {
	// What every request sends, prompts files read and checked: first, so that a bad line
	// leaves no record file or listener behind.
	works, err := workload.ForEndpoints(cfg.Endpoints, o.seed)
	if err != nil {
		return nil, err
	}
	notePrompts(works, stderr)
	eng := &engine{}
	o.applyGrace(cfg)
	runOpts := o.probeOptions()
	runOpts.Workloads = works
	if o.sweepSteps != nil {
		eng.sweep = planSweep(o, cfg, &runOpts)
	}
	if o.record != "" {
		rec, err := export.NewRecorder(o.record)
		if err != nil {
			return nil, fmt.Errorf("--record: %w", err)
		}
		eng.recorder = rec
		runOpts.OnDone = append(runOpts.OnDone, eng.record)
	}
	if o.metricsListen != "" || o.otlp != "" {
		if err := eng.serveMetrics(ctx, o, cfg, &runOpts, stderr); err != nil {
			eng.close()
			return nil, err
		}
	}
	eng.endpoints = cfg.Endpoints
	eng.runner = probe.NewRunner(cfg.Endpoints, runOpts)
	if !(o.noTUI && o.sweepSteps != nil) {
		eng.scraper = servermetrics.New(cfg.Endpoints, o.server, servermetrics.Options{})
	}
	return eng, nil
}

// notePrompts says, once per file, when a prompts file was read only in part or had
// conversations it could not use.
func notePrompts(works []*workload.Workload, stderr io.Writer) {
	seen := make(map[*workload.Set]bool)
	for _, w := range works {
		set := w.Prompts()
		if set == nil || seen[set] {
			continue
		}
		seen[set] = true
		if set.Truncated {
			fmt.Fprintf(stderr, "tokscope: %s: read the first %d prompts (the limit); requests cycle through those\n", set.Path, len(set.Items))
		}
		if set.Skipped > 0 {
			fmt.Fprintf(stderr, "tokscope: %s: skipped %d conversations without a human turn\n", set.Path, set.Skipped)
		}
	}
}

// planSweep sets up --sweep: the first step's concurrency on every endpoint, no pause between
// requests unless --interval says otherwise (a pause would leave the step's streams idle part
// of the time), and the sweep's warm-up hook.
func planSweep(o *options, cfg *config.Config, runOpts *probe.Options) *sweep.Sweep {
	for i := range cfg.Endpoints {
		cfg.Endpoints[i].Concurrency = o.sweepSteps[0]
		if !o.set("interval") {
			cfg.Endpoints[i].Interval = 0
		}
	}
	sw := sweep.New(sweep.Plan{Concurrency: o.sweepSteps, StepDuration: o.stepDuration, Grace: o.grace}, len(cfg.Endpoints), runOpts.Warmup)
	runOpts.OnDone = append(runOpts.OnDone, sw.OnDone)
	return sw
}

// serveMetrics starts the Prometheus exporter, served at --metrics-listen, pushed to --otlp
// or both, and hooks it into the runner's options.
func (e *engine) serveMetrics(ctx context.Context, o *options, cfg *config.Config, runOpts *probe.Options, stderr io.Writer) error {
	exp := promexport.New(cfg.Endpoints)
	if addr := o.metricsListen; addr != "" {
		bound, err := promexport.Listen(ctx, addr, exp.Handler())
		if err != nil {
			return fmt.Errorf("--metrics-listen %s: %w", addr, err)
		}
		fmt.Fprintf(stderr, "tokscope: serving Prometheus metrics at http://%s/metrics\n", bound)
	}
	if o.otlp != "" {
		push, err := startPush(ctx, o, cfg, exp.Registry())
		if err != nil {
			return err
		}
		e.push = push
	}
	runOpts.OnDone = append(runOpts.OnDone, exp.Observe)
	runOpts.OnStart = append(runOpts.OnStart, exp.Started)
	runOpts.OnEnd = append(runOpts.OnEnd, exp.Finished)
	runOpts.OnProgress = append(runOpts.OnProgress, exp.Progress)
	return nil
}

// record appends a finished request to the record file; a failed write is logged, and the
// run goes on.
func (e *engine) record(s *probe.Sample) {
	if err := e.recorder.Write(s); err != nil {
		log.Printf("record: %v", err)
	}
}

// start runs the Runner, and the sweep's schedule and the server-metrics scraper if there
// are, until ctx is done or the run is over. wait blocks until Run has returned (its events
// channel is then closed) and returns its error; a cancelled run is how runs end, not an
// error. The scraper goes on until ctx is done.
func (e *engine) start(ctx context.Context) (wait func() error) {
	done := make(chan error, 1)
	go func() { done <- e.runner.Run(ctx) }()
	if e.sweep != nil {
		go e.sweep.Run(ctx, e.runner)
	}
	if e.scraper != nil {
		go e.scraper.Run(ctx)
	}
	return func() error { return notCancelled(<-done) }
}

// notCancelled is err, unless it only says that the run was cancelled.
func notCancelled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// close pushes the metrics a last time (--otlp) and closes the record file; closing twice is
// a no-op.
func (e *engine) close() error {
	e.stopPush(io.Discard)
	if e.recorder == nil {
		return nil
	}
	return e.recorder.Close()
}

// finish closes the engine after a run that ended with code: a record file that cannot be
// closed (its last lines may be lost) makes a successful run a failed one.
func (e *engine) finish(code int, stderr io.Writer) int {
	e.stopPush(stderr)
	if err := e.close(); err != nil {
		fmt.Fprintf(stderr, "tokscope: --record: %v\n", err)
		return max(code, ExitFailed)
	}
	return code
}
