package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"tokscope/calibrate"
	"tokscope/config"
	"tokscope/discover"
)

// The commands that measure nothing live: replay, models and calibrate (sim: sim.go), the
// measuring run itself, and the old spellings of the commands, which still work.

// replayCommand is `tokscope replay FILE…`.
func replayCommand() *command {
	return &command{
		name: "replay", summary: "show --record files again, in the live view or as a summary", usage: "replay [flags] FILE…",
		about: "Shows --record files again, in the live view or (--no-tui) as the summary, aggregated as the live run was;\n" +
			"no request is sent. Several files, globs or directories (their *.jsonl) merge into one run, e.g. the\n" +
			"shards of a fleet.",
		flags: []string{"no-tui", "output", "ttft-from", "slo", "slo-target", "report", "log"},
		tui:   true,
		args: func(o *options, words []string) error {
			if len(words) == 0 {
				return usagef("replay needs FILE…: --record files, globs or directories (see tokscope replay --help)")
			}
			o.replayPaths = words
			return o.checkReplayPaths()
		},
		run: func(ctx context.Context, env *runEnv) int { return runReplay(ctx, env.opts, env.stdout, env.stderr) },
	}
}

// modelsCommand is `tokscope models [URL…]`.
func modelsCommand() *command {
	return &command{
		name: "models", summary: "print the models each endpoint offers", usage: "models [flags] [URL…]",
		about: "Prints the models each endpoint offers (its /v1/models, or Ollama's /api/tags), one per line: of each\n" +
			"base URL given, else of the config file's endpoints, --demo's, or the local servers discovery finds.",
		flags: []string{"config", "api", "api-key-env", "demo", "log"},
		args: func(o *options, words []string) error {
			o.urls, o.listModels = words, true
			return nil
		},
		run: func(ctx context.Context, env *runEnv) int {
			if len(env.opts.urls) > 0 {
				return listURLModels(ctx, env.opts, env.stdout, env.stderr)
			}
			return measure(ctx, env.opts, env.proc, env.interrupted, env.stdout, env.stderr)
		},
	}
}

// calibrateCommand is `tokscope calibrate`.
func calibrateCommand() *command {
	return &command{
		name: "calibrate", summary: "measure tokscope's own timing error on this machine", usage: "calibrate [flags]",
		about: "Measures tokscope's own timing error on this machine against the built-in simulator, whose send times are\n" +
			"known, at several concurrencies, and prints it as a table.",
		flags: []string{"api", "log"},
		args: func(o *options, words []string) error {
			o.calibrate = true
			return noArgs(o, words)
		},
		run: func(ctx context.Context, env *runEnv) int {
			return runCalibrate(ctx, env.opts.api(0), env.stdout, env.stderr)
		},
	}
}

// aliases are the commands' old spellings, flags of a measuring run: they still work, are
// hidden from --help, and a run that uses one says once on stderr how it is spelled now.
var aliases = []struct{ flag, now string }{
	{"replay", "tokscope replay FILE…"},
	{"list-models", "tokscope models [URL…]"},
	{"calibrate", "tokscope calibrate"},
}

// takeMeasureArgs takes a measuring run's words: more files of --replay, else none; and
// notes an old spelling.
func takeMeasureArgs(o *options, words []string) error {
	if err := o.takeReplayArgs(words); err != nil {
		return err
	}
	for _, a := range aliases {
		if o.set(a.flag) {
			o.alias = fmt.Sprintf("tokscope: note: --%s is now spelled %s (the old spelling still works)", a.flag, a.now)
		}
	}
	return nil
}

// runMeasure runs tokscope without a command: the old spellings of the commands, else a
// measuring run.
func runMeasure(ctx context.Context, env *runEnv) int {
	opts := env.opts
	if opts.alias != "" {
		fmt.Fprintln(env.stderr, opts.alias)
	}
	switch {
	case opts.calibrate:
		return runCalibrate(ctx, opts.api(0), env.stdout, env.stderr)
	case opts.replay != "":
		return runReplay(ctx, opts, env.stdout, env.stderr)
	case opts.listModels && len(opts.urls) > len(opts.models):
		return listURLModels(ctx, opts, env.stdout, env.stderr)
	}
	return measure(ctx, opts, env.proc, env.interrupted, env.stdout, env.stderr)
}

// listModels prints every endpoint's models, one per line after the endpoint's name.
func listModels(ctx context.Context, cfg *config.Config, stdout, stderr io.Writer) int {
	return printModels(ctx, cfg.Endpoints, stdout, stderr)
}

// listURLModels is tokscope models URL… (or --list-models over --url without a --model for each: listing is how one
// finds the model to name. The key is the --api-key-env variable's, as for a run.
func listURLModels(ctx context.Context, o *options, stdout, stderr io.Writer) int {
	if err := o.checkKeyEnv(); err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		return ExitUsage
	}
	eps := make([]config.Endpoint, 0, len(o.urls))
	for i := range o.urls {
		eps = append(eps, o.urlEndpoint(i, ""))
	}
	return printModels(ctx, eps, stdout, stderr)
}

func printModels(ctx context.Context, eps []config.Endpoint, stdout, stderr io.Writer) int {
	client := &http.Client{Timeout: 10 * time.Second}
	code := ExitOK
	for _, ep := range eps {
		title := ep.Name + " (" + ep.BaseURL + ")"
		if ep.Name == "" { // a --url without a --model
			title = ep.BaseURL
		}
		models, err := discover.ModelsFor(ctx, client, ep.BaseURL, ep.APIKey(), ep.API)
		if err != nil {
			fmt.Fprintf(stderr, "tokscope: %s: %v\n", title, err)
			code = ExitFailed
			continue
		}
		fmt.Fprintf(stdout, "%s:\n", title)
		for _, m := range models {
			fmt.Fprintf(stdout, "  %s\n", m)
		}
	}
	return code
}

// runCalibrate measures tokscope's own timing error against the built-in simulator, through
// api (tokscope calibrate --api; chat by default).
func runCalibrate(ctx context.Context, api string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "tokscope: calibrating against the built-in simulator through the %s API (about %.0f s)…\n",
		api, calibrate.Estimate(calibrate.DefaultLevels).Seconds())
	results, err := calibrate.RunAPI(ctx, calibrate.DefaultLevels, api)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: calibrate: %v\n", err)
		return ExitFailed
	}
	fmt.Fprintf(stdout, "tokscope timing error on this machine (measured − simulator send time; schedule: TTFT %s, %.0f tok/s, 1 token/chunk)\n",
		calibrate.Profile.TTFT, calibrate.Profile.TokensPerSecond)
	if err := calibrate.WriteTable(stdout, results); err != nil {
		return ExitFailed
	}
	return ExitOK
}
