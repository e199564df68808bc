package cli

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"tokscope/config"
	"tokscope/export"
	"tokscope/probe"
	"tokscope/promexport"
	"tokscope/sample"
	"tokscope/sweep"
)

// options are the parsed command-line flags (the contract in docs/metrics.md plus --warmup and
// --log). parseFlags fills and checks them; nothing changes them after.
type options struct {
	configFile  string
	convo       convoFlags
	sess        sessionFlags // --sessions and its settings (sessions.go)
	urls        []string
	models      []string
	apiText     []string // --api as given
	apis        []string // parsed by checkEndpoints: one per --url, or one for all
	apiKeyEnv   string
	prompt      string
	maxTokens   int
	concurrency int
	interval    time.Duration
	timeout     time.Duration
	demo        bool
	noTUI       bool
	requests    int
	duration    time.Duration
	grace       time.Duration // --grace; the config's grace: or DefaultGrace when not given
	output      string
	record      string
	warmup      int
	logFile     string
	version     bool

	metricsListen string // serve Prometheus metrics on this address ("" = off)
	otlp          string // push the same metrics to this OTLP/HTTP URL ("" = off; otlp.go)
	listModels    bool   // print each endpoint's models and exit (tokscope models)
	calibrate     bool   // measure tokscope's own timing error against the simulator and exit (tokscope calibrate)
	listen        string // tokscope sim: the address to serve on

	command *command // what the command line asks for: a measuring run, or a command (commands.go)
	alias   string   // the old spelling of a command that was used (--replay, ...), "" if none

	replay       string          // show these --record files instead of measuring: as given, for messages ("" = off)
	replayPaths  []string        // --replay's files, globs and directories (replay.go)
	ttftFromName string          // --ttft-from as given
	ttftFrom     sample.TTFTFrom // parsed by check

	// Load shapes beyond closed-loop streams: --rate (open-loop Poisson arrivals, the
	// concurrency being the cap on streams in flight) and --sweep (the concurrency stepped
	// through a list, each step measured on its own).
	rateText     string
	rate         float64 // parsed by checkLoad; 0 = closed loop
	sweepText    string
	sweepSteps   []int // parsed by checkLoad; nil = no sweep
	stepDuration time.Duration

	report string // --report FILE: the HTML report written when the run ends (report.go)

	sloFlags     // --slo, --slo-target, --server-metrics (slo.go)
	findMaxFlags // --find-max, --find-max-limit (capacity.go)
	shardFlags   // --shard (shard.go)

	args  []string // the command line as given, for the report's settings
	build string   // tokscope's version, for the report (set by Main)

	// The workload: what each request sends (package workload).
	inputText, outputText     string             // --input-tokens, --output-tokens as given
	inputTokens, outputTokens config.TokenLength // parsed by checkWorkload
	prompts                   string
	cache                     string
	seed                      uint64

	set func(name string) bool // whether a flag was given on the command line
}

// maxRate bounds --rate: beyond it the arrival timer itself would be the bottleneck.
const maxRate = 10000

// parseFlags parses the command line of a measuring run (tokscope [flags]); it returns
// pflag.ErrHelp after printing the help for -h/--help on stdout.
func parseFlags(args []string, stdout io.Writer) (*options, error) {
	return parseCommand(measureCommand(), args, stdout)
}

// newFlagSet is an empty flag set whose parse errors are ours to report, one line each, and
// whose flags keep the order they were defined in.
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	return fs
}

// registerFlags defines every flag of a measuring run on fs, bound to o: the commands take
// theirs from it (commands.go), so a flag is defined, and its default set, once. The old
// spellings of the commands (--replay, --list-models, --calibrate) are defined hidden.
func registerFlags(fs *pflag.FlagSet, o *options) {
	fs.StringVarP(&o.configFile, "config", "c", "", "config `FILE` (else $TOKSCOPE_CONFIG, $XDG_CONFIG_HOME/tokscope/config.yaml, the user config dir)")
	fs.StringArrayVarP(&o.urls, "url", "u", nil, "base `URL` of an endpoint, e.g. http://127.0.0.1:8080/v1 (repeatable)")
	fs.StringArrayVarP(&o.models, "model", "m", nil, "`NAME` of the model for the --url at the same position (repeatable; one --model serves every --url)")
	fs.StringArrayVar(&o.apiText, "api", nil, "the API of each --url endpoint, by position like --model (one value applies to all; a `LIST` may be comma-separated): "+
		config.DefaultAPI+" (default) | "+strings.Join(config.APIs[1:], " | ")+"; with tokscope calibrate, the one API to calibrate through")
	fs.StringVar(&o.apiKeyEnv, "api-key-env", "", "environment `VARIABLE` holding the key for --url endpoints (default "+
		config.DefaultAPIKeyEnv+"; "+config.DefaultAnthropicKeyEnv+" with --api "+config.APIAnthropic+")")
	fs.StringVarP(&o.prompt, "prompt", "p", "", "prompt `TEXT`")
	fs.IntVar(&o.maxTokens, "max-tokens", 0, "at most `N` output tokens per request (default 256)")
	fs.IntVarP(&o.concurrency, "concurrency", "n", 0, "`N` streams in flight per endpoint (default 1)")
	fs.DurationVarP(&o.interval, "interval", "i", 0, "pause `D` between requests of one stream (default 1s)")
	fs.DurationVar(&o.timeout, "timeout", 0, "deadline `D` per request (default 2m)")
	fs.BoolVar(&o.demo, "demo", false, "monitor built-in simulated endpoints (no server needed)")
	fs.BoolVar(&o.noTUI, "no-tui", false, "run headless, then print a summary")
	fs.IntVar(&o.requests, "requests", 0, "start exactly `N` counted requests per endpoint and wait for all of them")
	fs.DurationVar(&o.duration, "duration", 0, "stop after `D` (0 = until interrupted)")
	fs.DurationVar(&o.grace, "grace", DefaultGrace, "when --duration (or a --sweep step) ends, wait up to `D` for the requests in flight; what it cuts counts as \"cut\"")
	fs.StringVarP(&o.output, "output", "o", "table", "summary `FORMAT` with --no-tui: "+strings.Join(export.Formats, " | "))
	fs.StringVar(&o.record, "record", "", "append to `FILE` one JSON line per finished request, with per-chunk arrival offsets")
	fs.IntVar(&o.warmup, "warmup", 1, "`N` warm-up requests per endpoint, not counted in statistics")
	fs.StringVar(&o.logFile, "log", "", "write debug logs to `FILE` (never to the terminal)")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.StringVar(&o.metricsListen, "metrics-listen", "", "serve Prometheus metrics at `ADDR`/metrics (a bare port binds 127.0.0.1)")
	fs.StringVar(&o.otlp, "otlp", "", "push the exporter's metrics to an OTLP/HTTP `URL` every 10 s and at exit (no path: /v1/metrics; headers from $OTEL_EXPORTER_OTLP_HEADERS)")
	fs.BoolVar(&o.listModels, "list-models", false, "print the models each endpoint offers, then exit")
	fs.BoolVar(&o.calibrate, "calibrate", false, "measure tokscope's own timing error on this machine against the simulator, then exit")
	fs.StringArrayVar(&o.replayPaths, "replay", nil, "show a --record `FILE` again (TUI, or the summary with --no-tui) instead of measuring; several files, globs or directories (their *.jsonl), repeated or after the flags, merge into one run")
	fs.StringVar(&o.ttftFromName, "ttft-from", "first-token", "`INSTANT` TTFT is measured to: first-token | first-event | first-answer")
	fs.StringVar(&o.rateText, "rate", "", "open loop: `R` requests/s per endpoint, Poisson arrivals; --concurrency caps the streams in flight")
	fs.StringVar(&o.sweepText, "sweep", "", "step the concurrency through a `LIST` like 1,2,4,8,16 and report each step")
	fs.DurationVar(&o.stepDuration, "step-duration", sweep.DefaultStepDuration, "length `D` of each --sweep or --find-max step; a --find-max step also runs until at least 10 of its requests finished, so at a low load it can last longer")
	addSLOFlags(fs, o)
	addConvoFlags(fs, o)
	addSessionFlags(fs, o)
	addFindMaxFlags(fs, o)
	addShardFlags(fs, o)
	fs.StringVar(&o.report, "report", "", "with --no-tui (a run, a --sweep or a replay): when it ends, write one self-contained HTML report to `FILE.html`")
	fs.StringVar(&o.inputText, "input-tokens", "", "synthetic prompts of `N[:SD]` tokens (normal, SD optional), counted with the offline tokenizer")
	fs.StringVar(&o.outputText, "output-tokens", "", "max_tokens `N[:SD]` per request, and ask the server to ignore EOS (ignore_eos, min_tokens) so answers have N tokens")
	fs.StringVar(&o.prompts, "prompts", "", "JSONL `FILE`, one request a line ({\"prompt\": …} or {\"messages\": […]}, optional \"max_tokens\"), or a ShareGPT JSON file; requests cycle through it")
	fs.StringVar(&o.cache, "cache", config.DefaultCache, "cache `MODE`: bust, every prompt starts with a unique tag so no server prefix cache serves it; or reuse, prompts as they are")
	fs.Uint64Var(&o.seed, "seed", 0, "synthetic prompts, length draws and --rate arrivals from seed `N`")
	for _, name := range []string{"list-models", "calibrate", "replay"} {
		_ = fs.MarkHidden(name) // the commands' old spellings (aliases.go)
	}
}

// check rejects invalid values with one line naming the flag and what it accepts.
func (o *options) check() error {
	if !slices.Contains(export.Formats, o.output) {
		return usagef("invalid value %q for --output: accepted values are %s", o.output, strings.Join(export.Formats, ", "))
	}
	positive := []struct {
		name string
		v    int
	}{{"max-tokens", o.maxTokens}, {"concurrency", o.concurrency}}
	for _, p := range positive {
		if o.set(p.name) && p.v < 1 {
			return usagef("invalid value %d for --%s: must be a whole number ≥ 1", p.v, p.name)
		}
	}
	if o.requests < 0 {
		return usagef("invalid value %d for --requests: must be ≥ 0 (0 = no limit)", o.requests)
	}
	if o.warmup < 0 {
		return usagef("invalid value %d for --warmup: must be ≥ 0", o.warmup)
	}
	durations := []struct {
		name string
		v    time.Duration
		min  time.Duration
	}{{"interval", o.interval, 0}, {"timeout", o.timeout, 1}, {"duration", o.duration, 0}, {"grace", o.grace, 0}}
	for _, d := range durations {
		if o.set(d.name) && d.v < d.min {
			return usagef("invalid value %s for --%s: must be a positive duration like 500ms, 2s, 1m", d.v, d.name)
		}
	}
	if err := o.checkEndpoints(); err != nil {
		return err
	}
	if o.metricsListen != "" {
		if _, err := promexport.ListenAddr(o.metricsListen); err != nil {
			return usagef("invalid value %q for --metrics-listen: %v (e.g. 9464, :9464, 127.0.0.1:9464)", o.metricsListen, err)
		}
	}
	if err := o.checkOTLP(); err != nil {
		return err
	}
	from, err := sample.ParseTTFTFrom(o.ttftFromName)
	if err != nil {
		return usagef("invalid value %q for --ttft-from: %v", o.ttftFromName, err)
	}
	o.ttftFrom = from
	if err := o.checkReplay(); err != nil {
		return err
	}
	if err := o.checkLoad(); err != nil {
		return err
	}
	if err := o.checkSLO(); err != nil {
		return err
	}
	if err := o.checkFindMax(); err != nil {
		return err
	}
	if err := o.checkReport(); err != nil {
		return err
	}
	if err := o.checkWorkload(); err != nil {
		return err
	}
	if err := o.checkShard(); err != nil {
		return err
	}
	if o.noTUI && o.requests == 0 && !o.set("duration") && !o.listModels && !o.calibrate && o.replay == "" && o.sweepSteps == nil && o.findMax == "" && !o.set("trace") {
		return usagef("--no-tui needs how long to run: --requests N or --duration D (--duration 0 runs until interrupted), or a run that ends by itself: --sweep LIST, --find-max WHAT, --trace FILE")
	}
	return nil
}

// checkEndpoints checks the --url endpoints: a --model and an --api for each, by position
// (one --api may serve all).
func (o *options) checkEndpoints() error {
	if len(o.models) > len(o.urls) {
		return usagef("--model given %d times but --url only %d: each --model pairs with the --url at the same position", len(o.models), len(o.urls))
	}
	// One --model serves every --url (one server watched through several APIs); else one each.
	if len(o.urls) > 0 && len(o.models) != 1 && len(o.models) < len(o.urls) && !o.listModels { // listing is how one finds a model
		return usagef("--url %s has no --model: give one --model for every --url, or one per --url in the same order", o.urls[len(o.models)])
	}
	if o.demo && len(o.urls) > 0 {
		return usagef("--demo and --url exclude each other: --demo monitors built-in simulated endpoints")
	}
	if !o.set("api") {
		return nil
	}
	if len(o.urls) == 0 && !o.calibrate {
		return usagef("--api needs --url: it is the API of each --url endpoint (in a config file, write api: per endpoint or in defaults:)")
	}
	o.apis = nil
	for _, text := range o.apiText {
		for _, name := range strings.Split(text, ",") {
			api, err := config.ParseAPI(strings.TrimSpace(name))
			if err != nil {
				return usagef("invalid value %q for --api: %v", name, err)
			}
			o.apis = append(o.apis, api)
		}
	}
	if o.calibrate && len(o.urls) == 0 && len(o.apis) != 1 {
		return usagef("--api of tokscope calibrate names the one API to measure the simulator through, got %d", len(o.apis))
	}
	if len(o.apis) != 1 && len(o.apis) != len(o.urls) {
		return usagef("--api gives %d APIs but --url is given %d times: give one --api for all, or one per --url in the same order",
			len(o.apis), len(o.urls))
	}
	return nil
}

// model is the model of the i-th --url endpoint: its own --model, or the one --model of all.
func (o *options) model(i int) string {
	if len(o.models) == 1 {
		return o.models[0]
	}
	return o.models[i]
}

// api is the API of the i-th --url endpoint.
func (o *options) api(i int) string {
	switch {
	case len(o.apis) == 0:
		return config.DefaultAPI
	case len(o.apis) == 1:
		return o.apis[0]
	}
	return o.apis[i]
}

// keyEnv is the variable the i-th --url endpoint reads its key from: --api-key-env, else its
// API's default (ANTHROPIC_API_KEY for anthropic, OPENAI_API_KEY otherwise).
func (o *options) keyEnv(i int) string {
	if o.set("api-key-env") {
		return o.apiKeyEnv
	}
	return config.DefaultKeyEnv(o.api(i))
}

// checkKeyEnv: a variable named with --api-key-env must be set; a default one may be unset
// for local servers that need no key (then none is sent).
func (o *options) checkKeyEnv() error {
	if o.set("api-key-env") && os.Getenv(o.apiKeyEnv) == "" {
		return usagef("--api-key-env %s: that environment variable is not set", o.apiKeyEnv)
	}
	return nil
}

// urlEndpoint is the i-th --url endpoint (model "" for --list-models without one): its API,
// and its key variable when that is set. The key itself is read at request time.
func (o *options) urlEndpoint(i int, model string) config.Endpoint {
	ep := config.NewEndpoint(o.urls[i], model)
	ep.API = o.api(i)
	if env := o.keyEnv(i); os.Getenv(env) != "" {
		ep.APIKeyEnv = env
	}
	return ep
}

// checkReplay rejects flags that make no sense with --replay: they choose what to measure,
// and a replay measures nothing.
func (o *options) checkReplay() error {
	if o.replay == "" {
		return nil
	}
	for _, name := range []string{"demo", "url", "model", "config", "record", "list-models", "calibrate", "metrics-listen",
		"input-tokens", "output-tokens", "prompts", "cache", "seed"} {
		if o.set(name) {
			return usagef("--replay and --%s exclude each other: a replay shows a recorded run and sends no request", name)
		}
	}
	return nil
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
		if o.set("step-duration") && !o.set("find-max") {
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

// checkReport: --report is written when a run without the TUI ends (the TUI has its key),
// into a directory that must exist now, not after an hour of measuring.
func (o *options) checkReport() error {
	if !o.set("report") {
		return nil
	}
	if o.report == "" {
		return usagef("invalid value \"\" for --report: must be a file name, e.g. run.html")
	}
	if !o.noTUI {
		return usagef("--report needs --no-tui: it is written when a headless run, a --sweep or a replay ends (in the TUI, the w key writes it)")
	}
	if o.listModels || o.calibrate {
		return usagef("--report and --%s exclude each other: there is no run to report", map[bool]string{true: "list-models", false: "calibrate"}[o.listModels])
	}
	dir := filepath.Dir(o.report)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usagef("invalid value %q for --report: its directory %s does not exist", o.report, dir)
	}
	if st, err := os.Stat(o.report); err == nil && st.IsDir() {
		return usagef("invalid value %q for --report: is a directory; must be a file name, e.g. run.html", o.report)
	}
	return nil
}

// checkWorkload parses the workload flags: lengths as N[:SD], the cache mode, and at most one
// prompt source (--prompt, --input-tokens, --prompts) and one output length (--max-tokens,
// --output-tokens).
func (o *options) checkWorkload() error {
	for _, l := range []struct {
		name string
		text string
		v    *config.TokenLength
	}{{"input-tokens", o.inputText, &o.inputTokens}, {"output-tokens", o.outputText, &o.outputTokens}} {
		if !o.set(l.name) {
			continue
		}
		v, err := config.ParseTokenLength(l.text)
		if err != nil {
			return usagef("invalid value %q for --%s: %s", l.text, l.name, err)
		}
		*l.v = v
	}
	if o.set("cache") && !slices.Contains(config.CacheModes, o.cache) {
		return usagef("invalid value %q for --cache: accepted values are %s (bust, the default: every prompt starts with a unique tag; "+
			"reuse: prompts as they are)", o.cache, strings.Join(config.CacheModes, ", "))
	}
	if o.set("prompts") && strings.TrimSpace(o.prompts) == "" {
		return usagef("invalid value %q for --prompts: needs a JSONL or ShareGPT JSON file", o.prompts)
	}
	if err := o.checkConvo(); err != nil {
		return err
	}
	if err := o.checkSessions(); err != nil {
		return err
	}
	// One prompt source and one output length, as in each level of the config file.
	ov := o.overrides()
	if first, second, group := ov.Conflict(); first != "" {
		return usagef("%s and %s exclude each other: give one of %s", flagOf(first), flagOf(second), strings.Join(mapSlice(group, flagOf), ", "))
	}
	return nil
}

// flagOf is the flag of a config key: max_tokens is --max-tokens.
func flagOf(key string) string { return "--" + strings.ReplaceAll(key, "_", "-") }

func mapSlice(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
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

// overrides are the flags that replace the config file's values on every endpoint: the
// command line's level of the endpoint settings.
func (o *options) overrides() config.Overrides {
	ov := config.Overrides{
		Prompt:       given(o, "prompt", &o.prompt),
		MaxTokens:    given(o, "max-tokens", &o.maxTokens),
		Concurrency:  given(o, "concurrency", &o.concurrency),
		Interval:     given(o, "interval", &o.interval),
		Timeout:      given(o, "timeout", &o.timeout),
		SLO:          o.slo,
		InputTokens:  given(o, "input-tokens", &o.inputTokens),
		OutputTokens: given(o, "output-tokens", &o.outputTokens),
		Prompts:      given(o, "prompts", &o.prompts),
		Cache:        given(o, "cache", &o.cache),
		GPUMetrics:   given(o, "gpu-metrics", &o.gpuMetrics),
	}
	o.convoOverrides(&ov)
	return ov
}

// given is v when the flag was given on the command line, else nil.
func given[T any](o *options, flag string, v *T) *T {
	if o.set(flag) {
		return v
	}
	return nil
}

// probeOptions are the flags that shape the Runner's schedule.
func (o *options) probeOptions() probe.Options {
	opts := probe.Options{Warmup: o.warmup, Requests: o.requests, Duration: o.duration, Grace: o.grace, Rate: o.rate, RateSeed: o.seed}
	if o.noTUI {
		opts.StopAfterPermanent = StopAfterPermanent // the TUI only backs off: a user is watching
	}
	return opts
}

// StopAfterPermanent is how many identical permanent errors in a row (401, 403, 404) stop an
// endpoint of a headless run.
const StopAfterPermanent = 5

// DefaultGrace is how long the requests in flight may finish when a run (or a sweep step)
// ends, without --grace or the config's grace: (AIPerf's benchmark grace period).
const DefaultGrace = 30 * time.Second

// applyGrace takes the config file's grace: unless --grace was given.
func (o *options) applyGrace(cfg *config.Config) {
	if !o.set("grace") && cfg.Grace != nil {
		o.grace = *cfg.Grace
	}
}
