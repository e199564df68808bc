package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"tokscope/calibrate"
	"tokscope/config"
	"tokscope/discover"
	"tokscope/probe"
	"tokscope/promexport"
)

// serveMetrics starts the Prometheus exporter and hooks it into the runner's options.
func serveMetrics(ctx context.Context, addr string, cfg *config.Config, runOpts *probe.Options, stderr io.Writer) error {
	exp := promexport.New(cfg.Endpoints)
	bound, err := promexport.Listen(ctx, addr, exp.Handler())
	if err != nil {
		return fmt.Errorf("--metrics-listen %s: %w", addr, err)
	}
	fmt.Fprintf(stderr, "tokscope: serving Prometheus metrics at http://%s/metrics\n", bound)
	runOpts.OnDone = append(runOpts.OnDone, exp.Observe)
	runOpts.OnStart = append(runOpts.OnStart, exp.Started)
	runOpts.OnEnd = append(runOpts.OnEnd, exp.Finished)
	return nil
}

// listModels prints every endpoint's models, one per line after the endpoint's name.
func listModels(ctx context.Context, cfg *config.Config, stdout, stderr io.Writer) int {
	client := &http.Client{Timeout: 10 * time.Second}
	code := exitOK
	for _, ep := range cfg.Endpoints {
		models, err := discover.Models(ctx, client, ep.BaseURL, ep.APIKey())
		if err != nil {
			fmt.Fprintf(stderr, "tokscope: %s: %v\n", ep.Name, err)
			code = exitFailed
			continue
		}
		fmt.Fprintf(stdout, "%s (%s):\n", ep.Name, ep.BaseURL)
		for _, m := range models {
			fmt.Fprintf(stdout, "  %s\n", m)
		}
	}
	return code
}

func runCalibrate(ctx context.Context, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "tokscope: calibrating against the built-in simulator (about 20 s)…")
	results, err := calibrate.Run(ctx, calibrate.DefaultLevels)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: --calibrate: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "tokscope timing error on this machine (measured − simulator send time; schedule: TTFT %s, %.0f tok/s, 1 token/chunk)\n",
		calibrate.Profile.TTFT, calibrate.Profile.TokensPerSecond)
	if err := calibrate.WriteTable(stdout, results); err != nil {
		return exitFailed
	}
	return exitOK
}

// discoverEndpoints looks for OpenAI-compatible servers on their usual loopback ports. When
// some answer, it lists them with the command that monitors them, and on an interactive
// terminal offers to monitor them now (one endpoint per server, its first model).
func discoverEndpoints(ctx context.Context, o *options, stderr io.Writer) (*config.Config, error) {
	found := discover.Local(ctx, &http.Client{})
	if len(found) == 0 {
		return nil, errors.New(noEndpointsHelp)
	}
	var cmd strings.Builder
	cmd.WriteString("tokscope")
	cfg := &config.Config{}
	fmt.Fprintln(stderr, "tokscope: no config file and no --url; found these local servers:")
	for _, f := range found {
		fmt.Fprintf(stderr, "  %-10s %s  models: %s\n", f.Server, f.BaseURL, strings.Join(f.Models, ", "))
		if len(f.Models) == 0 {
			continue
		}
		cmd.WriteString(" -u " + f.BaseURL + " -m " + f.Models[0])
		ep := config.NewEndpoint(f.BaseURL, f.Models[0])
		ep.Name = strings.ToLower(f.Server) + "/" + f.Models[0]
		cfg.Endpoints = append(cfg.Endpoints, ep)
	}
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("the servers found offer no model yet: load one, or see --help")
	}
	fmt.Fprintf(stderr, "to monitor them:\n  %s\n", cmd.String())
	if o.noTUI || !isTerminal(os.Stdin) {
		return nil, errors.New("not monitoring discovered servers without confirmation: run the command above")
	}
	fmt.Fprint(stderr, "Monitor them now? [Y/n] ")
	answer, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	if a := strings.TrimSpace(strings.ToLower(answer)); a != "" && a != "y" && a != "yes" {
		return nil, errors.New("nothing to monitor")
	}
	return cfg, nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
