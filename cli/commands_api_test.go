package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"tokscope/config"
	"tokscope/discover"
	"tokscope/sim"
)

// --list-models lists each endpoint's models in its API's way: /models, or Ollama's
// /api/tags at the server's root.
func TestListModelsPerAPI(t *testing.T) {
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "p", Model: "llama3:8b", TokensPerSecond: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := &config.Config{}
	for _, api := range sim.APIs {
		ep := config.NewEndpoint(srv.BaseURLFor("p", api), "llama3:8b")
		ep.Name, ep.API = api, api
		cfg.Endpoints = append(cfg.Endpoints, ep)
	}
	var out, errOut bytes.Buffer
	if code := listModels(context.Background(), cfg, &out, &errOut); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := ""
	for _, ep := range cfg.Endpoints {
		want += ep.Name + " (" + ep.BaseURL + "):\n  llama3:8b\n"
	}
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// Discovery that finds Ollama offers its native API beside the OpenAI-compatible one.
func TestDiscoveryOffersOllamaNative(t *testing.T) {
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "o", Model: "llama3:8b", TokensPerSecond: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	var stderr bytes.Buffer
	_, _ = discoverEndpoints(context.Background(), process{stdin: devNull,
		localServers: []discover.Candidate{{Server: "Ollama", BaseURL: srv.BaseURL("o")}}}, true, &stderr)
	root := srv.BaseURLFor("o", sim.APIOllama)
	if want := "-u " + root + " --api ollama"; !strings.Contains(stderr.String(), want) {
		t.Errorf("discovery does not offer %q:\n%s", want, stderr.String())
	}
}
