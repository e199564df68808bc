package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"tokscope/config"
	"tokscope/export"
	"tokscope/fanout"
	"tokscope/feature"
	"tokscope/probe"
	"tokscope/sample"
	"tokscope/stats"
	"tokscope/sweep"
)

// The capacity search (--find-max concurrency|rate, docs/load.md "Capacity search"): its flags,
// their checks, the run's set-up and the headless run. The search itself is sweep.Search.

// findMaxFlags are --find-max and --find-max-limit.
type findMaxFlags struct {
	findMax      string // "" = no search; sweep.ByConcurrency, sweep.ByRate or sweep.ByUsers
	findMaxLimit int
	tierTexts    []string      // --tier NAME=OBJECTIVES, repeatable
	tiers        []config.Tier // parsed by checkFindMax; the config's tiers: when none
	tierSpecs    []sweep.TierSpec
	requireTexts []string      // --tier-require NAME>=U, repeatable
	require      []tierRequire // parsed by checkFindMax, names checked by resolveTiers
	accelerators int           // --accelerators: GPUs serving each endpoint (0 = not given)
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

// tierRequire is one --tier-require NAME>=U.
type tierRequire struct {
	name string
	min  float64
}

func addFindMaxFlags(fs *pflag.FlagSet, o *options) {
	fs.StringVar(&o.findMax, "find-max", "", "`WHAT` is concurrency, rate or users: for each endpoint, find the highest load at which at least --slo-target (default 0.9 here) of requests meet --slo, or each --tier holds (users: agent sessions in flight with --sessions, else conversations with --turns). Each step lasts --step-duration and until at least 10 of its requests finished, so a step at a low load can take longer than --step-duration; every step's start and end is printed")
	fs.IntVar(&o.findMaxLimit, "find-max-limit", sweep.DefaultFindMaxLimit, "the highest load `N` --find-max tries")
	fs.StringArrayVar(&o.tierTexts, "tier", nil, "--find-max: a tier `NAME=OBJECTIVES`, e.g. fast=otps.p25>=100,ttft.p90<=15s (any per-request metric, any percentile, >= or <=; repeatable): one search finds each tier's boundary")
	fs.StringArrayVar(&o.requireTexts, "tier-require", nil, "headless --find-max with tiers: `NAME>=U` exits 3 when tier NAME's boundary is below U on an endpoint (repeatable)")
	fs.IntVar(&o.accelerators, "accelerators", 0, "--find-max with tiers: the `N` GPUs serving each endpoint, for users per GPU at each boundary")
}

// checkFindMax checks the search's flags against the others, one line each.
func (o *options) checkFindMax() error {
	if !o.set("find-max") {
		for _, name := range []string{"find-max-limit", "tier", "tier-require", "accelerators"} {
			if o.set(name) {
				return usagef("--%s needs --find-max: it belongs to the capacity search", name)
			}
		}
		return nil
	}
	kinds := []string{sweep.ByConcurrency, sweep.ByRate, sweep.ByUsers}
	if !slices.Contains(kinds, o.findMax) {
		return usagef("invalid value %q for --find-max: accepted values are concurrency, rate, users", o.findMax)
	}
	hi := map[string]int{sweep.ByConcurrency: sweep.MaxConcurrency, sweep.ByRate: sweep.MaxSearchRate, sweep.ByUsers: sweep.MaxConcurrency}[o.findMax]
	if o.findMaxLimit < 1 || o.findMaxLimit > hi {
		return usagef("invalid value %d for --find-max-limit: must be a whole number from 1 to %d", o.findMaxLimit, hi)
	}
	for _, name := range []string{"sweep", "rate", "concurrency", "requests", "duration", "replay"} {
		if o.set(name) {
			return usagef("--find-max and --%s exclude each other: the search sets the load of every step, each step lasts --step-duration", name)
		}
	}
	if o.stepDuration <= 0 {
		return usagef("invalid value %s for --step-duration: must be a positive duration like 10s, 30s, 1m", o.stepDuration)
	}
	if o.set("accelerators") && (o.accelerators < 1 || o.accelerators > 1<<16) {
		return usagef("invalid value %d for --accelerators: the GPUs serving each endpoint, a whole number ≥ 1", o.accelerators)
	}
	for _, text := range o.tierTexts {
		t, err := config.ParseTierFlag(text)
		if err != nil {
			return usagef("invalid value %q for --tier: %v", text, err)
		}
		o.tiers = append(o.tiers, t)
	}
	for _, text := range o.requireTexts {
		name, u, ok := strings.Cut(text, ">=")
		v, err := strconv.ParseFloat(strings.TrimSpace(u), 64)
		if !ok || strings.TrimSpace(name) == "" || err != nil || !(v > 0) || math.IsInf(v, 0) {
			return usagef("invalid value %q for --tier-require: give NAME>=U, e.g. fast>=8 (U > 0 users)", text)
		}
		o.require = append(o.require, tierRequire{strings.TrimSpace(name), v})
	}
	return nil
}

// resolveTiers settles the search's objectives once the config is read: --tier, else the
// config's tiers:, resolved against the registry of metrics (a config's objective is refused
// at its file:line:col); a users search needs tiers and conversations; a search without tiers
// needs --slo; --tier-require names known tiers.
func (o *options) resolveTiers(cfg *config.Config) error {
	if o.findMax == "" {
		return nil
	}
	tiers := o.tiers
	if len(tiers) == 0 {
		tiers = cfg.Tiers
	}
	specs, err := sweep.ResolveTiers(tiers)
	if err != nil {
		if _, placed := err.(*config.Error); placed {
			return err
		}
		return usagef("--tier: %v", err)
	}
	o.tierSpecs = specs
	names := make([]string, len(specs))
	for i, t := range specs {
		names[i] = t.Name
	}
	switch {
	case len(specs) == 0 && o.findMax == sweep.ByUsers:
		return usagef("--find-max users needs tiers: give --tier NAME=OBJECTIVES, e.g. --tier fast=otps.p25>=100,ttft.p90<=15s, or tiers: in the config")
	case len(specs) == 0 && !o.set("slo"):
		return usagef("--find-max needs --slo or --tier: the search finds the highest load at which requests meet the objectives, e.g. --slo ttft=500ms,tpot=50ms")
	case len(specs) == 0 && (len(o.require) > 0 || o.accelerators > 0):
		return usagef("--tier-require and --accelerators need tiers (--tier or the config's tiers:)")
	}
	for _, r := range o.require {
		if !slices.Contains(names, r.name) {
			hint := "tiers: " + strings.Join(names, ", ")
			if best := config.Closest(r.name, names); best != "" {
				hint = fmt.Sprintf("did you mean %q?", best)
			}
			return usagef("--tier-require %s: no tier %q; %s", r.name, r.name, hint)
		}
	}
	if o.findMax == sweep.ByUsers && !o.usesSessions(cfg) {
		for _, ep := range cfg.Endpoints {
			if ep.Turns < 2 {
				return usagef("--find-max users needs users: agent sessions (--sessions FILE, each user a session in flight) or conversations (--turns N, N ≥ 2; %s has %d)", ep.Name, max(ep.Turns, 1))
			}
		}
	}
	return nil
}

// usesSessions: the run replays agent sessions (--sessions, or the config's sessions:), so a
// users search counts sessions in flight.
func (o *options) usesSessions(cfg *config.Config) bool {
	return o.sess.spec != "" || cfg.Sessions != ""
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
		Grace: o.grace, Target: o.searchTarget(), Tiers: o.tierSpecs, Accelerators: o.accelerators}
	if plan.By == sweep.ByUsers {
		plan.Users = sweep.UsersConversations
		if o.usesSessions(cfg) {
			plan.Users = sweep.UsersSessions
		}
	}
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
	var onStep func(sample.EndpointIndex, sweep.Measurement, sweep.Outcome)
	var s *sweep.Search
	if o.noTUI { // the TUI's sweep view shows the steps
		o.searchErr = &lockedWriter{w: stderr}
		onStep = func(ep sample.EndpointIndex, m sweep.Measurement, out sweep.Outcome) {
			fmt.Fprintln(o.searchErr, feature.StepLine(eps[ep].Name, &plan, &m, &out)+feature.ProgressNote(s.Progress(int(ep)), out.Done))
		}
	}
	s = sweep.NewSearch(plan, eps, runOpts.Warmup, o.ttftFrom, onStep)
	if o.noTUI {
		s.OnStepStart(func(ep sample.EndpointIndex, load float64, again bool, out sweep.Outcome) {
			fmt.Fprintln(o.searchErr, feature.StartLine(eps[ep].Name, &plan, load, again, &out)+feature.ProgressNote(s.Progress(int(ep)), false))
		})
	}
	runOpts.OnStart = append(runOpts.OnStart, s.OnStart) // its finished requests: the run's loop (taps)
	return s
}

// runCapacityHeadless runs the search, one progress line per step on stderr, and prints what
// it found. Exit status: 0 when every endpoint has a maximum, 3 when one missed the target even
// at load 1, 1 when the run was interrupted or the output could not be written.
func runCapacityHeadless(ctx context.Context, w *wiring, o *options, stdout, stderr io.Writer) int {
	if o.searchErr != nil {
		stderr = o.searchErr
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if w.report != nil { // the whole run, for the report's summary
		w.stats = stats.New(w.endpoints, o.statsOptions()...)
	}
	wait := w.start(ctx) // --gpu-metrics: the search takes each step's GPU energy from the loop
	searched := make(chan error, 1)
	go func() {
		err := w.search.Run(ctx, w.runner)
		w.runner.Stop(0) // every endpoint is paused: nothing is in flight
		searched <- err
	}()
	stopped := map[sample.EndpointIndex]bool{} // endpoints the Runner stopped (permanent errors)
	w.loop(0, nil, fanout.Func(func(ev sample.Event) bool {
		if note := stopNote(ev, w.endpoints); note != "" { // the search ends its steps there (Search.Observe)
			fmt.Fprintln(stderr, note)
			stopped[ev.(*sample.Status).Endpoint] = true
		}
		return false
	})).Run()
	// The events end when the search is over, when the run is interrupted (the search stops
	// where it is), or when the Runner stopped every endpoint: their searches then end with
	// the steps they were measuring, whose requests have all reported.
	if len(stopped) < len(w.endpoints) {
		cancel()
	}
	<-searched
	code := ExitOK
	if err := wait(); err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		code = ExitFailed
	}
	rep := w.search.Report()
	code = capacityStatus(stdout, stderr, o.output, &rep, o.require, code)
	if w.stats != nil {
		code = w.report.write(w.stats.Snapshot(time.Now()), nil, code, stderr) // with the search (runReport.search)
	}
	return code
}

// capacityStatus prints the search's report and returns the exit status.
func capacityStatus(stdout, stderr io.Writer, format string, rep *sweep.CapacityReport, require []tierRequire, code int) int {
	if err := export.WriteCapacity(stdout, format, *rep); err != nil {
		fmt.Fprintf(stderr, "tokscope: writing the capacity search: %v\n", err)
		return ExitFailed
	}
	if !rep.Complete {
		fmt.Fprintln(stderr, "tokscope: capacity search interrupted")
		return ExitFailed
	}
	if len(rep.Plan.Tiers) > 0 {
		return tierStatus(stderr, rep, require, code)
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

// tierStatus is the gate of --tier-require: 3 when a tier's boundary on an endpoint is below
// its U, each such tier named in one line; code otherwise.
func tierStatus(stderr io.Writer, rep *sweep.CapacityReport, require []tierRequire, code int) int {
	var below []string
	for _, r := range require {
		for i := range rep.Endpoints {
			e := &rep.Endpoints[i]
			for _, t := range e.Tiers {
				if users, ok := t.Answer(); t.Name == r.name && users < r.min {
					got := "no confirmed boundary"
					if ok {
						got = "boundary " + feature.LoadText(users)
					}
					below = append(below, fmt.Sprintf("%s on %s: %s < %s", t.Name, e.Name, got, feature.LoadText(r.min)))
				}
			}
		}
	}
	if len(below) > 0 {
		fmt.Fprintf(stderr, "tokscope: tier requirement not met: %s\n", strings.Join(below, "; "))
		return ExitSLO
	}
	return code
}
