package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"

	"tokscope/config"
	"tokscope/fanout"
	"tokscope/otlpexport"
	"tokscope/probe"
	"tokscope/promexport"
	"tokscope/record"
	"tokscope/sample"
	"tokscope/servermetrics"
	"tokscope/stats"
	"tokscope/sweep"
	"tokscope/workload"
)

// engine is what measures: the Runner over the configured endpoints, with the sweep hooked
// into it, and the consumers of its events (consumers, taps).
type engine struct {
	runner    *probe.Runner
	endpoints []config.Endpoint
	sweep     *sweep.Sweep         // nil unless --sweep
	search    *sweep.Search        // nil unless --find-max (capacity.go)
	recorder  *record.Recorder     // nil unless --record
	exporter  *promexport.Exporter // nil unless --metrics-listen
	report    *runReport           // --report, or the TUI's w key; nil otherwise
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
	schedule, err := o.useTrace(cfg, works)
	if err != nil {
		return nil, err
	}
	if err := o.useSessions(cfg, works, stderr); err != nil {
		return nil, err
	}
	eng := &engine{}
	o.applyGrace(cfg)
	runOpts := o.probeOptions()
	runOpts.Workloads = works
	if schedule != nil {
		runOpts.Schedule, runOpts.QueueLimit = schedule, len(schedule)
	}
	if o.sweepSteps != nil {
		eng.sweep = planSweep(o, cfg, &runOpts)
	}
	if o.findMax != "" {
		eng.search = planSearch(o, cfg, &runOpts, stderr)
	}
	if o.record != "" {
		rec, err := record.NewRecorder(o.record, record.WithShard(o.shard))
		if err != nil {
			return nil, fmt.Errorf("--record: %w", err)
		}
		eng.recorder = rec
	}
	if o.metricsListen != "" || o.otlp != "" {
		if err := eng.serveMetrics(ctx, o, cfg, stderr); err != nil {
			eng.close()
			return nil, err
		}
	}
	eng.endpoints = cfg.Endpoints
	if eng.search != nil && eng.exporter != nil { // tokscope_tier_boundary_users as each is confirmed
		eng.search.OnTierDone(func(ep sample.EndpointIndex, t sweep.TierOutcome) {
			if users, ok := t.Answer(); ok { // an endpoint stopped mid-search has no answer
				eng.exporter.SetTierBoundary(cfg.Endpoints[ep].Name, t.Name, users)
			}
		})
	}
	eng.runner = probe.NewRunner(cfg.Endpoints, runOpts)
	if !(o.noTUI && o.sweepSteps != nil) {
		var scrapeOpts servermetrics.Options
		if eng.recorder != nil { // the record keeps the scrapes: a replay shows the server's figures
			scrapeOpts.OnUpdate = eng.recordServer
		}
		if eng.search != nil { // each step's GPU energy: users per kW at a tier's boundary
			scrapeOpts.OnUpdate = eng.searchGPU(scrapeOpts.OnUpdate)
		}
		scrapeOpts.OnKind = func(i int, k servermetrics.Kind) { // vLLM: ask for its per-request metrics
			if k == servermetrics.KindVLLM {
				eng.runner.MarkVLLM(sample.EndpointIndex(i))
			}
		}
		eng.scraper = servermetrics.New(cfg.Endpoints, o.server, scrapeOpts)
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
// or both; the run's events reach it as a tap (taps).
func (e *engine) serveMetrics(ctx context.Context, o *options, cfg *config.Config, stderr io.Writer) error {
	exp := promexport.New(cfg.Endpoints, promexport.WithShard(o.shard.Label()))
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
	e.exporter = exp
	return nil
}

// searchGPU hands every GPU scrape to the search, then to next (when not nil).
func (e *engine) searchGPU(next func(servermetrics.Update)) func(servermetrics.Update) {
	return func(u servermetrics.Update) {
		if u.Source == servermetrics.SourceGPU && u.State == servermetrics.StateOK {
			e.search.ObserveGPU(u.Endpoint, u.GPU)
		}
		if next != nil {
			next(u)
		}
	}
}

// recordServer appends one scrape of an endpoint's server to the record file; a failed write
// is logged, and the run goes on.
func (e *engine) recordServer(u servermetrics.Update) {
	if u.Endpoint < 0 || u.Endpoint >= len(e.endpoints) {
		return
	}
	ep := &e.endpoints[u.Endpoint]
	if err := e.recorder.WriteServer(ep.Name, ep.Model, u); err != nil {
		log.Printf("record: %v", err)
	}
}

// taps are the consumers that take every event as it comes, quickly and whoever else reads
// the events: the record file and the Prometheus exporter. A TUI run has them fed by a
// fanout.Relay, so that they never wait for the screen.
func (e *engine) taps() fanout.List {
	var l fanout.List
	if e.recorder != nil {
		l = append(l, recordTap{e.recorder})
	}
	if e.exporter != nil {
		l = append(l, exportTap{e.exporter, e.endpoints})
	}
	return l
}

// consumers is the one list of what a run's events feed, in the order they see each event:
// the taps, the statistics (agg, when not nil), the report (when written) and more (a
// headless run's own bookkeeping). The TUI's Model builds its part (its statistics, the
// report, the sweep's steps, its views) in ui.New; its taps are the same.
func (e *engine) consumers(agg *stats.Aggregator, more ...fanout.Observer) fanout.List {
	l := e.taps()
	if agg != nil {
		l = append(l, agg)
	}
	if e.report != nil {
		l = append(l, e.report)
	}
	return append(l, more...)
}

// recordTap appends each finished request to the record file (warm-ups and interactive
// ones too: the record keeps them, flagged); a failed write is logged, and the run goes on.
type recordTap struct{ rec *record.Recorder }

func (t recordTap) Observe(ev sample.Event) bool {
	if d, ok := ev.(*sample.Done); ok {
		if err := t.rec.Write(&d.Sample); err != nil {
			log.Printf("record: %v", err)
		}
	}
	return false
}

// exportTap feeds the Prometheus exporter: requests in flight (Started … Done), the tokens
// of those in flight (Progress) and every finished request.
type exportTap struct {
	exp *promexport.Exporter
	eps []config.Endpoint
}

func (t exportTap) Observe(ev sample.Event) bool {
	switch ev := ev.(type) {
	case *sample.Started:
		if name, ok := t.name(ev.Endpoint); ok {
			t.exp.Started(name, ev.Seq)
		}
	case *sample.Progress:
		t.exp.Progress(ev)
	case *sample.Done:
		t.exp.Observe(&ev.Sample)
		if name, ok := t.name(ev.Endpoint); ok {
			t.exp.Finished(name, ev.Sample.Seq)
		}
	}
	return false
}

func (t exportTap) name(ep sample.EndpointIndex) (string, bool) {
	if !ep.In(len(t.eps)) {
		return "", false
	}
	return t.eps[ep].Name, true
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
	if e.search != nil {
		go e.search.Run(ctx, e.runner) // the TUI; headless runs it itself (runCapacityHeadless)
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
