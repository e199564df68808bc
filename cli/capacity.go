package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"tokscope/config"
	"tokscope/export"
	"tokscope/fanout"
	"tokscope/probe"
	"tokscope/stats"
	"tokscope/sweep"
)

// The capacity search (--find-max concurrency|rate, docs/load.md "Capacity search"): its flags,
// their checks, the engine's set-up and the headless run. The search itself is sweep.Search.

// findMaxFlags are --find-max and --find-max-limit.
type findMaxFlags struct {
	findMax      string // "" = no search; sweep.ByConcurrency or sweep.ByRate
	findMaxLimit int
	// searchErr is stderr for a headless search, whose progress lines come from each
	// endpoint's search goroutine and its notes from the events' reader (set by planSearch).
	searchErr *lockedWriter
}

// lockedWriter writes to w one call at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func addFindMaxFlags(fs *pflag.FlagSet, o *options) {
	fs.StringVar(&o.findMax, "find-max", "", "`WHAT` is concurrency or rate: for each endpoint, find the highest load at which at least --slo-target (default 0.9 here) of requests meet --slo")
	fs.IntVar(&o.findMaxLimit, "find-max-limit", sweep.DefaultFindMaxLimit, "the highest load `N` --find-max tries")
}

// checkFindMax checks the search's flags against the others, one line each.
func (o *options) checkFindMax() error {
	if !o.set("find-max") {
		if o.set("find-max-limit") {
			return usagef("--find-max-limit needs --find-max: it is the highest load the search tries")
		}
		return nil
	}
	if o.findMax != sweep.ByConcurrency && o.findMax != sweep.ByRate {
		return usagef("invalid value %q for --find-max: accepted values are concurrency, rate", o.findMax)
	}
	hi := map[string]int{sweep.ByConcurrency: sweep.MaxConcurrency, sweep.ByRate: sweep.MaxSearchRate}[o.findMax]
	if o.findMaxLimit < 1 || o.findMaxLimit > hi {
		return usagef("invalid value %d for --find-max-limit: must be a whole number from 1 to %d", o.findMaxLimit, hi)
	}
	if !o.set("slo") {
		return usagef("--find-max needs --slo: the search finds the highest load at which requests meet the objectives, e.g. --slo ttft=500ms,tpot=50ms")
	}
	for _, name := range []string{"sweep", "rate", "concurrency", "requests", "duration", "replay"} {
		if o.set(name) {
			return usagef("--find-max and --%s exclude each other: the search sets the load of every step, each step lasts --step-duration", name)
		}
	}
	if o.stepDuration <= 0 {
		return usagef("invalid value %s for --step-duration: must be a positive duration like 10s, 30s, 1m", o.stepDuration)
	}
	return nil
}

// searchTarget is the share of requests a search's steps must meet: --slo-target, else 0.9.
func (o *options) searchTarget() float64 {
	if o.sloTarget > 0 {
		return o.sloTarget
	}
	return sweep.DefaultSearchTarget
}

// planSearch sets up --find-max: every endpoint starts at load 1 with no pause between
// requests unless --interval says otherwise, open-loop at 1 request/s for a rate search, and
// the search's hooks.
func planSearch(o *options, cfg *config.Config, runOpts *probe.Options, stderr io.Writer) *sweep.Search {
	plan := sweep.SearchPlan{By: o.findMax, Limit: float64(o.findMaxLimit), StepDuration: o.stepDuration,
		Grace: o.grace, Target: o.searchTarget()}
	for i := range cfg.Endpoints {
		cfg.Endpoints[i].Concurrency = 1
		if !o.set("interval") {
			cfg.Endpoints[i].Interval = 0
		}
		if plan.By == sweep.ByRate {
			cfg.Endpoints[i].Concurrency = sweep.RateSlots(1, cfg.Endpoints[i].Timeout)
		}
	}
	if plan.By == sweep.ByRate {
		runOpts.Rate = 1
	}
	eps := cfg.Endpoints
	var onStep func(probe.EndpointIndex, sweep.Measurement, sweep.Outcome)
	if o.noTUI { // the TUI's sweep view shows the steps
		o.searchErr = &lockedWriter{w: stderr}
		onStep = func(ep probe.EndpointIndex, m sweep.Measurement, out sweep.Outcome) {
			fmt.Fprintln(o.searchErr, stepLine(eps[ep].Name, plan.By, &m, &out))
		}
	}
	s := sweep.NewSearch(plan, eps, runOpts.Warmup, o.ttftFrom, onStep)
	runOpts.OnStart = append(runOpts.OnStart, s.OnStart)
	runOpts.OnDone = append(runOpts.OnDone, s.OnDone)
	return s
}

// runCapacityHeadless runs the search, one progress line per step on stderr, and prints what
// it found. Exit status: 0 when every endpoint has a maximum, 3 when one missed the target even
// at load 1, 1 when the run was interrupted or the output could not be written.
func runCapacityHeadless(ctx context.Context, eng *engine, o *options, stdout, stderr io.Writer) int {
	if o.searchErr != nil {
		stderr = o.searchErr
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- eng.runner.Run(ctx) }()
	searched := make(chan error, 1)
	go func() {
		err := eng.search.Run(ctx, eng.runner)
		eng.runner.Stop(0) // every endpoint is paused: nothing is in flight
		searched <- err
	}()
	var agg *stats.Aggregator // the whole run, for the report's summary
	if eng.report != nil {
		agg = stats.New(eng.endpoints, o.statsOptions()...)
	}
	stopped := map[probe.EndpointIndex]bool{} // endpoints the Runner stopped (permanent errors)
	fan := eng.consumers(agg, fanout.Func(func(ev probe.Event) bool {
		if note := stopNote(ev, eng.endpoints); note != "" {
			fmt.Fprintln(stderr, note)
			ep := ev.(*probe.Status).Endpoint
			eng.search.EndpointStopped(int(ep))
			stopped[ep] = true
		}
		return false
	}))
	for ev := range eng.runner.Events() {
		fan.Observe(ev)
	}
	// The events end when the search is over, when the run is interrupted (the search stops
	// where it is), or when the Runner stopped every endpoint: their searches then end with
	// the steps they were measuring, whose requests have all reported.
	if len(stopped) < len(eng.endpoints) {
		cancel()
	}
	<-searched
	code := ExitOK
	if err := notCancelled(<-done); err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		code = ExitFailed
	}
	rep := eng.search.Report()
	code = capacityStatus(stdout, stderr, o.output, &rep, code)
	if agg != nil {
		code = eng.report.write(agg.Snapshot(time.Now()), nil, code, stderr) // with the search (runReport.search)
	}
	return code
}

// capacityStatus prints the search's report and returns the exit status.
func capacityStatus(stdout, stderr io.Writer, format string, rep *sweep.CapacityReport, code int) int {
	if err := export.WriteCapacity(stdout, format, *rep); err != nil {
		fmt.Fprintf(stderr, "tokscope: writing the capacity search: %v\n", err)
		return ExitFailed
	}
	if !rep.Complete {
		fmt.Fprintln(stderr, "tokscope: capacity search interrupted")
		return ExitFailed
	}
	var missed []string
	for i := range rep.Endpoints {
		if e := &rep.Endpoints[i]; e.Max == 0 {
			missed = append(missed, e.Name)
		}
	}
	if len(missed) > 0 {
		fmt.Fprintf(stderr, "tokscope: SLO target %g missed even at %s 1: %s\n", rep.Plan.Target, rep.Plan.By, strings.Join(missed, ", "))
		return ExitSLO
	}
	return code
}

// stepLine is the progress line of one step, e.g. "tokscope: find-max a: concurrency 8: 20
// requests, SLO met by 70.0 % → missed; bracket [4, 8]".
func stepLine(name, by string, m *sweep.Measurement, out *sweep.Outcome) string {
	load := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	var b strings.Builder
	fmt.Fprintf(&b, "tokscope: find-max %s: %s %s: %d requests", name, by, load(m.Load), m.Requests)
	if m.Requests > 0 {
		fmt.Fprintf(&b, ", SLO met by %.1f %%", 100*m.Attainment)
	}
	switch {
	case m.Verdict == sweep.Pending:
		b.WriteString(" → within noise of the target: re-measuring")
	case m.Remeasured:
		fmt.Fprintf(&b, " → re-measured, %.1f %% over both: %s", 100*m.Pooled, map[bool]string{true: "met", false: "missed"}[m.Verdict == sweep.Met])
	default:
		b.WriteString(map[bool]string{true: " → met", false: " → missed"}[m.Verdict == sweep.Met])
	}
	switch {
	case out.Done:
		b.WriteString("; done: " + export.CapacityAnswer(by, &sweep.EndpointCapacity{Name: name, Outcome: *out}))
	case out.FirstMiss > 0:
		fmt.Fprintf(&b, "; bracket [%s, %s]", load(out.Max), load(out.FirstMiss))
	}
	return b.String()
}
