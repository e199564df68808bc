package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"time"

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

// wiring is one run: what measures (the Runner over the configured endpoints, or a replay's
// records), the consumers of its events, built once (taps, observers), and the one loop that
// reads them (loop). Every mode goes through it: the TUI, headless, a replay, a sweep, a
// capacity search.
type wiring struct {
	runner    *probe.Runner // nil in a replay
	endpoints []config.Endpoint
	sweep     *sweep.Sweep         // the sweep's schedule; nil unless --sweep
	steps     *sweep.Tracker       // the sweep's steps; nil unless --sweep
	search    *sweep.Search        // nil unless --find-max (capacity.go)
	recorder  *record.Recorder     // nil unless --record
	exporter  *promexport.Exporter // nil unless --metrics-listen
	report    *runReport           // --report, or the TUI's w key; nil otherwise
	// stats is the run's statistics, for a headless summary, a replay, a report or a progress
	// line; nil otherwise, and in the TUI, whose Model keeps its own.
	stats *stats.Aggregator
	// scraper reads the servers' own /metrics (--server-metrics); nil when off, and in a
	// headless sweep, whose steps have no server figures. stopScrapes ends it (start).
	scraper     *servermetrics.Scraper
	stopScrapes context.CancelFunc
	push        *otlpexport.Pusher // --otlp; nil when off (otlp.go)
}

// buildWiring puts the run's flags into a Runner over cfg's endpoints: the workload, the
// schedule, the load shape, --record and --metrics-listen. On an error nothing is left open.
// The caller closes the wiring (finish, or close on a panic).
func buildWiring(ctx context.Context, o *options, cfg *config.Config, stderr io.Writer) (*wiring, error) {
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
	w := &wiring{stopScrapes: func() {}}
	o.applyGrace(cfg)
	runOpts := o.probeOptions()
	runOpts.Workloads = works
	if schedule != nil {
		runOpts.Schedule, runOpts.QueueLimit = schedule, len(schedule)
	}
	if o.sweepSteps != nil {
		w.sweep = planSweep(o, cfg, &runOpts)
		w.steps = w.sweep.Track(cfg.Endpoints, nil, o.statsOptions()...)
	}
	if o.findMax != "" {
		w.search = planSearch(o, cfg, &runOpts, stderr)
	}
	if o.record != "" {
		rec, err := record.NewRecorder(o.record, record.WithShard(o.shard))
		if err != nil {
			return nil, fmt.Errorf("--record: %w", err)
		}
		w.recorder = rec
	}
	if o.metricsListen != "" || o.otlp != "" {
		if err := w.serveMetrics(ctx, o, cfg, stderr); err != nil {
			w.close()
			return nil, err
		}
	}
	w.endpoints = cfg.Endpoints
	if w.search != nil && w.exporter != nil { // the tiers' boundaries as each is confirmed
		w.search.OnTierDone(func(ep sample.EndpointIndex, t sweep.TierOutcome) { w.exporter.ObserveTier(cfg.Endpoints[ep].Name, &t) })
	}
	w.runner = probe.NewRunner(cfg.Endpoints, runOpts)
	if !(o.noTUI && o.sweepSteps != nil) {
		w.scraper = servermetrics.New(cfg.Endpoints, o.server, servermetrics.Options{
			OnKind: func(i int, k servermetrics.Kind) { // vLLM: ask for its per-request metrics
				if k == servermetrics.KindVLLM {
					w.runner.MarkVLLM(sample.EndpointIndex(i))
				}
			},
		})
	}
	return w, nil
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
// of the time). The sweep counts the warm-ups from the run's events (taps).
func planSweep(o *options, cfg *config.Config, runOpts *probe.Options) *sweep.Sweep {
	for i := range cfg.Endpoints {
		cfg.Endpoints[i].Concurrency = o.sweepSteps[0]
		if !o.set("interval") {
			cfg.Endpoints[i].Interval = 0
		}
	}
	return sweep.New(sweep.Plan{Concurrency: o.sweepSteps, StepDuration: o.stepDuration, Grace: o.grace}, len(cfg.Endpoints), runOpts.Warmup)
}

// serveMetrics starts the Prometheus exporter, served at --metrics-listen, pushed to --otlp
// or both; the run's events reach it as a tap (taps).
func (w *wiring) serveMetrics(ctx context.Context, o *options, cfg *config.Config, stderr io.Writer) error {
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
		w.push = push
	}
	w.exporter = exp
	return nil
}

// taps are the consumers that must take every event as it comes, whoever else reads the
// events, and quickly: the record file, the Prometheus exporter, the sweep's schedule (its
// warm-ups) and the capacity search (its steps wait for their requests). In the TUI they are
// all the loop feeds; the screen's Model takes the rest from its queue.
func (w *wiring) taps() fanout.List {
	var l fanout.List
	if w.recorder != nil {
		l = append(l, recordTap{w.recorder, w.endpoints})
	}
	if w.exporter != nil {
		l = append(l, exportTap{w.exporter, w.endpoints})
	}
	if w.sweep != nil {
		l = append(l, w.sweep)
	}
	if w.search != nil {
		l = append(l, w.search)
	}
	return l
}

// observers is the one list of what a run's events feed, in the order they see each event:
// the taps, the statistics (when kept), the sweep's steps, the report (when written) and
// more (a headless run's own bookkeeping). The TUI's Model feeds its part (its statistics,
// the sweep's steps, the report, its views) itself, from the screen's queue.
func (w *wiring) observers(more ...fanout.Observer) fanout.List {
	l := w.taps()
	if w.stats != nil {
		l = append(l, statsTap{w.stats})
	}
	if w.steps != nil {
		l = append(l, w.steps)
	}
	if w.report != nil {
		l = append(l, w.report)
	}
	return append(l, more...)
}

// loop is the run's one loop over its observers and more, headless: the end of the Runner's
// events stops the scraper (its last GPU reading still counts). beat, when not nil, runs after
// every event and every every.
func (w *wiring) loop(every time.Duration, beat func(time.Time), more ...fanout.Observer) *fanout.Loop {
	return fanout.NewLoop(w.runner.Events(), fanout.Config{Observers: w.observers(more...), Scrapes: w.scrapes(),
		StopScrapes: w.stopScrapes, Every: every, Beat: beat})
}

// scrapes is the scraper's channel, nil without one.
func (w *wiring) scrapes() <-chan servermetrics.Update {
	if w.scraper == nil {
		return nil
	}
	return w.scraper.Updates()
}

// statsTap feeds the run's statistics: the requests, and the server scrapes; of those read
// after the Runner's events ended, only the GPUs' (their last reading closes the energy
// window).
type statsTap struct{ agg *stats.Aggregator }

func (t statsTap) Observe(ev sample.Event) bool {
	if sc, ok := ev.(*fanout.Scrape); ok {
		if sc.Late && sc.Update.Source != servermetrics.SourceGPU {
			return false
		}
		return t.agg.ObserveServer(sc.Update)
	}
	return t.agg.Observe(ev)
}

// recordTap appends each finished request to the record file (warm-ups and interactive
// ones too: the record keeps them, flagged), and each scrape of a server, so that a replay
// shows the server's figures; a failed write is logged, and the run goes on.
type recordTap struct {
	rec *record.Recorder
	eps []config.Endpoint
}

func (t recordTap) Observe(ev sample.Event) bool {
	var err error
	switch ev := ev.(type) {
	case *sample.Done:
		err = t.rec.Write(&ev.Sample)
	case *fanout.Scrape:
		if u := ev.Update; u.Endpoint >= 0 && u.Endpoint < len(t.eps) {
			err = t.rec.WriteServer(t.eps[u.Endpoint].Name, t.eps[u.Endpoint].Model, u)
		}
	}
	if err != nil {
		log.Printf("record: %v", err)
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
		t.exp.Observe(&ev.Sample) // out of the in-flight gauge too
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
// are, until ctx is done or the run is over. wait blocks until Run has returned (its events channel is then
// closed) and returns its error; a cancelled run is how runs end, not an error. The scraper
// goes on until ctx is done or stopScrapes is called.
func (w *wiring) start(ctx context.Context) (wait func() error) {
	done := make(chan error, 1)
	go func() { done <- w.runner.Run(ctx) }()
	if w.sweep != nil {
		go w.sweep.Run(ctx, w.runner)
	}
	if w.scraper != nil {
		scrapeCtx, stop := context.WithCancel(ctx)
		w.stopScrapes = stop
		go w.scraper.Run(scrapeCtx)
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
func (w *wiring) close() error {
	w.stopPush(io.Discard)
	if w.recorder == nil {
		return nil
	}
	return w.recorder.Close()
}

// finish closes the wiring after a run that ended with code: a record file that cannot be
// closed (its last lines may be lost) makes a successful run a failed one.
func (w *wiring) finish(code int, stderr io.Writer) int {
	w.stopPush(stderr)
	if err := w.close(); err != nil {
		fmt.Fprintf(stderr, "tokscope: --record: %v\n", err)
		return max(code, ExitFailed)
	}
	return code
}
