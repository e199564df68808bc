package main

// Load shapes beyond closed-loop streams: --rate (open-loop Poisson arrivals, the
// concurrency being the cap on streams in flight) and --sweep (the concurrency stepped
// through a list, each step measured on its own).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"tokscope/config"
	"tokscope/export"
	"tokscope/probe"
	"tokscope/stats"
	"tokscope/sweep"
	"tokscope/ui"
)

// maxRate bounds --rate: beyond it the arrival timer itself would be the bottleneck.
const maxRate = 10000

// loadOptions are the --rate and --sweep flags.
type loadOptions struct {
	rateText     string
	rate         float64 // parsed by checkLoad; 0 = closed loop
	sweepText    string
	sweepSteps   []int // parsed by checkLoad; nil = no sweep
	stepDuration time.Duration

	sweep *sweep.Sweep // built by applyLoad
}

func addLoadFlags(fs *pflag.FlagSet, o *options) {
	fs.StringVar(&o.rateText, "rate", "", "open loop: `R` requests/s per endpoint, Poisson arrivals; --concurrency caps the streams in flight")
	fs.StringVar(&o.sweepText, "sweep", "", "step the concurrency through a `LIST` like 1,2,4,8,16 and report each step")
	fs.DurationVar(&o.stepDuration, "step-duration", sweep.DefaultStepDuration, "length of each --sweep step")
}

// checkLoad parses and checks the load flags, one line naming the flag and what it accepts.
func (o *options) checkLoad() error {
	if o.set("rate") {
		r, err := strconv.ParseFloat(strings.TrimSpace(o.rateText), 64)
		if err != nil || !(r > 0) || math.IsInf(r, 0) || r > maxRate {
			return usagef("invalid value %q for --rate: must be requests per second per endpoint, > 0 and ≤ %d, e.g. 2 or 0.5", o.rateText, maxRate)
		}
		o.rate = r
		if o.set("interval") {
			return usagef("--rate and --interval exclude each other: with --rate the arrivals pace the requests")
		}
	}
	if !o.set("sweep") {
		if o.set("step-duration") {
			return usagef("--step-duration needs --sweep: it is the length of each sweep step")
		}
		return nil
	}
	steps, err := parseSweep(o.sweepText)
	if err != nil {
		return usagef("invalid value %q for --sweep: needs a comma-separated list of whole numbers from 1 to %d, e.g. 1,2,4,8,16", o.sweepText, sweep.MaxConcurrency)
	}
	o.sweepSteps = steps
	if o.stepDuration <= 0 {
		return usagef("invalid value %s for --step-duration: must be a positive duration like 10s, 30s, 1m", o.stepDuration)
	}
	for _, name := range []string{"rate", "concurrency", "requests", "duration", "replay"} {
		if !o.set(name) {
			continue
		}
		why := map[string]string{
			"rate":        "a sweep steps the concurrency of closed-loop streams",
			"concurrency": "the sweep sets the concurrency of every step",
			"requests":    "a sweep lasts its steps × --step-duration",
			"duration":    "a sweep lasts its steps × --step-duration",
			"replay":      "a replay shows a recorded run and sends no request",
		}[name]
		return usagef("--sweep and --%s exclude each other: %s", name, why)
	}
	return nil
}

// parseSweep reads "1,2,4" (spaces allowed around the numbers).
func parseSweep(s string) ([]int, error) {
	var steps []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > sweep.MaxConcurrency {
			return nil, errors.New("bad step")
		}
		steps = append(steps, n)
	}
	return steps, nil
}

// applyLoad puts the load flags into the run: the arrival rate into the Runner's options; for
// a sweep, the first step's concurrency on every endpoint, no pause between requests unless
// --interval says otherwise (a pause would leave the step's streams idle part of the time),
// and the sweep's warm-up hook.
func (o *options) applyLoad(cfg *config.Config, ro *probe.Options) {
	ro.Rate = o.rate
	if o.sweepSteps == nil {
		return
	}
	for i := range cfg.Endpoints {
		cfg.Endpoints[i].Concurrency = o.sweepSteps[0]
		if !o.set("interval") {
			cfg.Endpoints[i].Interval = 0
		}
	}
	o.sweep = sweep.New(sweep.Plan{Concurrency: o.sweepSteps, StepDuration: o.stepDuration}, len(cfg.Endpoints), ro.Warmup)
	ro.OnDone = append(ro.OnDone, o.sweep.OnDone)
}

// startSweep runs the sweep's schedule against runner until it ends or ctx does (TUI).
func (o *options) startSweep(ctx context.Context, runner *probe.Runner) {
	if o.sweep != nil {
		go o.sweep.Run(ctx, runner)
	}
}

// loadUIOptions tells the UI about the load shape.
func (o *options) loadUIOptions(uo *ui.Options) {
	uo.Rate, uo.Sweep = o.rate, o.sweep
}

// recordArrivals copies the Runner's open-loop arrival counts into the statistics.
func recordArrivals(agg *stats.Aggregator, runner *probe.Runner) {
	if runner.Rate() <= 0 {
		return
	}
	agg.SetRate(runner.Rate())
	for i := range runner.Endpoints() {
		offered, dropped := runner.Arrivals(i)
		agg.SetArrivals(i, offered, dropped)
	}
}

// runSweepHeadless runs the sweep, stops the Runner once every step's results are final, and
// prints the steps. Interrupted, it prints the steps that ended and says so.
func runSweepHeadless(ctx context.Context, runner *probe.Runner, cfg *config.Config, o *options, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tr := o.sweep.Track(cfg.Endpoints, nil)
	tr.SetTTFTFrom(o.ttftFrom)
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	go o.sweep.Run(ctx, runner)

	failed := false
	tr.Consume(runner.Events(), 100*time.Millisecond, func(ev probe.Event) {
		if d, isDone := ev.(*probe.Done); isDone && d.Stream == 0 && !d.Sample.Warmup && d.Sample.Outcome != probe.OutcomeOK {
			failed = true
		}
	}, cancel) // cancel once every request of the last step has reported
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		failed = true
	}
	rep := tr.Report()
	var err error
	switch o.output {
	case "json":
		err = export.WriteSweepJSON(stdout, rep)
	case "csv":
		err = export.WriteSweepCSV(stdout, rep)
	default:
		err = export.WriteSweepTable(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: writing the sweep: %v\n", err)
		return exitFailed
	}
	if !rep.Complete {
		fmt.Fprintf(stderr, "tokscope: sweep interrupted after %d of %d steps\n", tr.Progress().Finished, len(rep.Plan.Concurrency))
		return exitFailed
	}
	if failed {
		return exitFailed
	}
	return exitOK
}
