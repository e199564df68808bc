package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"tokscope/config"
	"tokscope/discover"
	"tokscope/sim"
)

// loadConfig merges, in order of precedence, the flags, then --demo / --url or the config
// file (or the local servers discovery finds), then the defaults. cleanup stops the
// simulator when --demo started one.
func loadConfig(ctx context.Context, o *options, proc process, stderr io.Writer) (*config.Config, func(), error) {
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
			ep := config.NewEndpoint(srv.BaseURLFor(p.Name, p.API), p.Model)
			ep.Name, ep.API = p.Name, p.API
			// Each profile's own answer length (sim README, "The demo"): every answer then
			// takes 1.1–1.4 s at one stream, so each card has figures within seconds.
			// --max-tokens, applied below, still wins.
			ep.MaxTokens = p.MaxTokens
			// A shorter pause than the default second: behind its warm-up, every card's first
			// counted token (and so its charts) comes within 3 s. -i, applied below, wins.
			ep.Interval = demoInterval
			cfg.Endpoints = append(cfg.Endpoints, ep)
		}
	case len(o.urls) > 0:
		if err := o.checkKeyEnv(); err != nil {
			return nil, cleanup, err
		}
		cfg = &config.Config{}
		for i := range o.urls {
			cfg.Endpoints = append(cfg.Endpoints, o.urlEndpoint(i, o.model(i)))
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
			found, err := discoverEndpoints(ctx, proc, !o.noTUI, stderr)
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

// demoInterval is the pause between the requests of a --demo stream.
const demoInterval = 500 * time.Millisecond

// noEndpointsHelp follows "tokscope: " and keeps every line within 100 columns: a wrapped
// line in a 100-column terminal broke "(see docs/config.md)" in two.
const noEndpointsHelp = `no endpoints to measure: no config file, no --url, and no local server answered
on the usual ports (Ollama 11434, llama.cpp 8080, vLLM 8000, LM Studio 1234, SGLang 30000).
Try one of:
  tokscope --demo                                         simulated endpoints, no server needed
  tokscope --url http://127.0.0.1:8080/v1 --model llama3  one OpenAI-compatible endpoint
  tokscope --config tokscope.yaml                         endpoints from a file (docs/config.md)`

// discoverEndpoints looks for OpenAI-compatible servers where proc says local servers
// listen. When some answer, it lists them with the command that monitors them, and, when it
// may ask (a TUI run whose standard input is a terminal), offers to monitor them now (one
// endpoint per server, its first model). A server that wants a key (401/403) is listed with
// the flag that gives it one.
func discoverEndpoints(ctx context.Context, proc process, mayAsk bool, stderr io.Writer) (*config.Config, error) {
	found := discover.LocalWith(ctx, &http.Client{}, proc.localServers)
	if len(found) == 0 {
		return nil, errors.New(noEndpointsHelp)
	}
	var cmd strings.Builder
	cmd.WriteString("tokscope")
	cfg := &config.Config{}
	var locked []string // base URLs of servers that want a key
	fmt.Fprintln(stderr, "tokscope: no config file and no --url; found these local servers:")
	for _, f := range found {
		if f.NeedsKey != "" {
			fmt.Fprintf(stderr, "  %-10s %s  needs a key (%s): --api-key-env NAME, NAME holding the key\n", f.Server, f.BaseURL, f.NeedsKey)
			locked = append(locked, f.BaseURL)
			continue
		}
		fmt.Fprintf(stderr, "  %-10s %s  models: %s\n", f.Server, f.BaseURL, strings.Join(f.Models, ", "))
		if f.Native != "" {
			fmt.Fprintf(stderr, "  %-10s %s  its native API too: -u %s --api %s\n", "", f.NativeURL, f.NativeURL, f.Native)
		}
		if len(f.Models) == 0 {
			continue
		}
		cmd.WriteString(" -u " + f.BaseURL + " -m " + f.Models[0])
		ep := config.NewEndpoint(f.BaseURL, f.Models[0])
		ep.Name = strings.ToLower(f.Server) + "/" + f.Models[0]
		ep.KnownVLLM = f.Owned == "vLLM" // its /v1/models says so: ask it for its per-request metrics
		cfg.Endpoints = append(cfg.Endpoints, ep)
	}
	if len(locked) > 0 {
		fmt.Fprintf(stderr, "to see the models of a server that needs a key:\n  tokscope models --api-key-env NAME %s\n", locked[0])
	}
	if len(cfg.Endpoints) == 0 {
		if len(locked) > 0 {
			return nil, errors.New("the servers found need a key: put it in an environment variable and name it with --api-key-env")
		}
		return nil, errors.New("the servers found offer no model yet: load one, or see --help")
	}
	fmt.Fprintf(stderr, "to monitor them:\n  %s\n", cmd.String())
	if !mayAsk || !isTerminal(proc.stdin) {
		return nil, errors.New("not monitoring discovered servers without confirmation: run the command above")
	}
	fmt.Fprint(stderr, "Monitor them now? [Y/n] ")
	answer, _ := bufio.NewReader(proc.stdin).ReadString('\n')
	if a := strings.TrimSpace(strings.ToLower(answer)); a != "" && a != "y" && a != "yes" {
		return nil, errors.New("nothing to monitor")
	}
	return cfg, nil
}
