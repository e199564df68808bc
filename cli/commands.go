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

// The commands that print something and exit instead of measuring: --list-models and
// --calibrate.

// listModels prints every endpoint's models, one per line after the endpoint's name.
func listModels(ctx context.Context, cfg *config.Config, stdout, stderr io.Writer) int {
	return printModels(ctx, cfg.Endpoints, stdout, stderr)
}

// listURLModels is --list-models over --url without a --model for each: listing is how one
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
// api (--calibrate --api; chat by default).
func runCalibrate(ctx context.Context, api string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "tokscope: calibrating against the built-in simulator through the %s API (about %.0f s)…\n",
		api, calibrate.Estimate(calibrate.DefaultLevels).Seconds())
	results, err := calibrate.RunAPI(ctx, calibrate.DefaultLevels, api)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: --calibrate: %v\n", err)
		return ExitFailed
	}
	fmt.Fprintf(stdout, "tokscope timing error on this machine (measured − simulator send time; schedule: TTFT %s, %.0f tok/s, 1 token/chunk)\n",
		calibrate.Profile.TTFT, calibrate.Profile.TokensPerSecond)
	if err := calibrate.WriteTable(stdout, results); err != nil {
		return ExitFailed
	}
	return ExitOK
}
