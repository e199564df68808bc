// Command tokscope is a live terminal monitor of LLM inference speed: it streams prompts to
// OpenAI-compatible endpoints and shows time to first token, decode tokens/s, inter-token
// latency and errors per endpoint, live or as a headless summary.
//
// main wires flags → config → probe.Runner → ui (or the headless report) and owns exit codes:
// 0 every request succeeded, 1 some failed, 2 usage or config error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"tokscope/config"
	"tokscope/export"
	"tokscope/probe"
	"tokscope/sim"
	"tokscope/stats"
	"tokscope/ui"
)

// version is set with -ldflags "-X main.version=…"; else the module version is used.
var version = ""

const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

func main() {
	os.Exit(runGuarded(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		return exitUsage
	}
	if opts.version {
		fmt.Fprintf(stdout, "tokscope %s\n", versionString())
		return exitOK
	}
	closeLog, err := setupLog(opts.logFile)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: --log: %v\n", err)
		return exitUsage
	}
	defer closeLog()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if opts.calibrate {
		return runCalibrate(ctx, stdout, stderr)
	}
	if opts.replay != "" {
		return runReplay(ctx, opts, stdout, stderr)
	}
	cfg, cleanup, err := buildConfig(ctx, opts, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		return exitUsage
	}
	defer cleanup()
	if opts.listModels {
		return listModels(ctx, cfg, stdout, stderr)
	}

	var recorder *export.Recorder
	runOpts := probe.Options{Warmup: opts.warmup, Requests: opts.requests, Duration: opts.duration}
	opts.applyLoad(cfg, &runOpts)
	if opts.record != "" {
		recorder, err = export.NewRecorder(opts.record)
		if err != nil {
			fmt.Fprintf(stderr, "tokscope: --record: %v\n", err)
			return exitUsage
		}
		defer recorder.Close() // on a panic too; closing twice is a no-op
		runOpts.OnDone = append(runOpts.OnDone, func(s *probe.Sample) {
			if err := recorder.Write(s); err != nil {
				log.Printf("record: %v", err)
			}
		})
	}
	if opts.metricsListen != "" {
		if err := serveMetrics(ctx, opts.metricsListen, cfg, &runOpts, stderr); err != nil {
			fmt.Fprintf(stderr, "tokscope: %v\n", err)
			return exitUsage
		}
	}
	runner := probe.NewRunner(cfg.Endpoints, runOpts)

	var code int
	if opts.noTUI && opts.sweep != nil {
		code = runSweepHeadless(ctx, runner, cfg, opts, stdout, stderr)
	} else if opts.noTUI {
		code = runHeadless(ctx, runner, cfg, opts.output, opts.ttftFrom, stdout, stderr)
	} else {
		code = runTUI(ctx, runner, cfg, opts, stderr)
	}
	if recorder != nil {
		if err := recorder.Close(); err != nil {
			fmt.Fprintf(stderr, "tokscope: --record: %v\n", err)
			code = max(code, exitFailed)
		}
	}
	return code
}

// buildConfig merges, in order of precedence, the flags, then --demo / --url or the config
// file, then the defaults. cleanup stops the simulator when --demo started one.
func buildConfig(ctx context.Context, o *options, stderr io.Writer) (*config.Config, func(), error) {
	cleanup := func() {}
	var cfg *config.Config
	switch {
	case o.demo:
		srv, err := sim.Start(sim.Options{}, sim.DemoProfiles()...)
		if err != nil {
			return nil, cleanup, fmt.Errorf("--demo: starting the simulator: %w", err)
		}
		cleanup = srv.Close
		cfg = &config.Config{}
		for _, p := range sim.DemoProfiles() {
			ep := config.NewEndpoint(srv.BaseURL(p.Name), p.Model)
			ep.Name = p.Name
			cfg.Endpoints = append(cfg.Endpoints, ep)
		}
	case len(o.urls) > 0:
		// An explicitly named key variable must be set; the default OPENAI_API_KEY may be
		// unset for local servers that need no key (then none is sent).
		if o.set("api-key-env") && os.Getenv(o.apiKeyEnv) == "" {
			return nil, cleanup, usagef("--api-key-env %s: that environment variable is not set", o.apiKeyEnv)
		}
		cfg = &config.Config{}
		for i, u := range o.urls {
			ep := config.NewEndpoint(u, o.models[i])
			if os.Getenv(o.apiKeyEnv) != "" {
				ep.APIKeyEnv = o.apiKeyEnv
			}
			cfg.Endpoints = append(cfg.Endpoints, ep)
		}
	default:
		path := o.configFile
		if path == "" {
			found, err := config.Find()
			if err != nil {
				return nil, cleanup, err
			}
			path = found
		}
		if path == "" {
			found, err := discoverEndpoints(ctx, o, stderr)
			if err != nil {
				return nil, cleanup, err
			}
			cfg = found
			break
		}
		loaded, err := config.Load(path)
		if err != nil {
			return nil, cleanup, err
		}
		cfg = loaded
	}
	cfg.Apply(o.overrides())
	if err := cfg.Validate(); err != nil {
		cleanup()
		return nil, func() {}, err
	}
	return cfg, cleanup, nil
}

const noEndpointsHelp = `no endpoints to measure: no config file, no --url, and no local server answered on the
usual ports (Ollama 11434, llama.cpp 8080, vLLM 8000, LM Studio 1234, SGLang 30000). Try one of:
  tokscope --demo                                           built-in simulated endpoints, no server needed
  tokscope --url http://127.0.0.1:8080/v1 --model llama3    one OpenAI-compatible endpoint
  tokscope --config tokscope.yaml                           endpoints from a config file (see README)`

func (o *options) overrides() config.Overrides {
	var ov config.Overrides
	if o.set("prompt") {
		ov.Prompt = &o.prompt
	}
	if o.set("max-tokens") {
		ov.MaxTokens = &o.maxTokens
	}
	if o.set("concurrency") {
		ov.Concurrency = &o.concurrency
	}
	if o.set("interval") {
		ov.Interval = &o.interval
	}
	if o.set("timeout") {
		ov.Timeout = &o.timeout
	}
	return ov
}

// runTUI runs the interactive UI until the user quits or a signal arrives, then stops the
// probes; the UI restores the terminal before anything is printed.
func runTUI(ctx context.Context, runner *probe.Runner, cfg *config.Config, o *options, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	o.startSweep(ctx, runner)
	uiOpts := ui.Options{Prompt: o.prompt, TTFTFrom: o.ttftFrom}
	o.loadUIOptions(&uiOpts)
	uiErr := ui.Run(ctx, runner, cfg.Endpoints, runner.Events(), uiOpts)
	cancel()
	runErr := <-done
	for _, err := range []error{uiErr, runErr} {
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "tokscope: %v\n", err)
			return exitFailed
		}
	}
	return exitOK
}

// runHeadless consumes every event into the statistics, then prints the summary.
func runHeadless(ctx context.Context, runner *probe.Runner, cfg *config.Config, format string, ttftFrom probe.TTFTFrom, stdout, stderr io.Writer) int {
	agg := stats.New(cfg.Endpoints)
	agg.SetTTFTFrom(ttftFrom)
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	failed := false
	for ev := range runner.Events() {
		agg.Observe(ev)
		if d, ok := ev.(*probe.Done); ok && d.Stream == 0 && !d.Sample.Warmup && d.Sample.Outcome != probe.OutcomeOK {
			failed = true
		}
	}
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		failed = true
	}
	recordArrivals(agg, runner)
	snap := agg.Snapshot(time.Now())
	var err error
	switch format {
	case "json":
		err = export.WriteJSON(stdout, snap)
	case "csv":
		err = export.WriteCSV(stdout, snap)
	default:
		err = export.WriteTable(stdout, snap)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: writing the summary: %v\n", err)
		return exitFailed
	}
	if failed {
		return exitFailed
	}
	return exitOK
}

func setupLog(path string) (func(), error) {
	if path == "" {
		log.SetOutput(io.Discard)
		return func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	log.SetOutput(f)
	return func() { f.Close() }, nil
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
