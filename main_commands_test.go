package main

import (
	"strings"
	"testing"
	"time"

	"tokscope/sim"
)

func TestListModels(t *testing.T) {
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "a", Model: "model-a", TokensPerSecond: 100, TokensPerChunk: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := runBinary(t, nil, "--list-models", "-u", srv.BaseURL("a"), "-m", "model-a")
	if r.code != 0 || !strings.Contains(r.stdout, "  model-a\n") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, nil, "--list-models", "-u", srv.URL()+"/nope/v1", "-m", "x")
	if r.code != 1 || !strings.Contains(r.stderr, "404") {
		t.Fatalf("unknown path: exit %d stderr %q", r.code, r.stderr)
	}
}

// With no config file and no --url, tokscope looks for local servers; when none answers it
// explains --demo, --url and the config file, and exits 2.
func TestNoEndpointsExplains(t *testing.T) {
	dir := t.TempDir()
	r := runBinary(t, []string{"XDG_CONFIG_HOME=" + dir, "HOME=" + dir, "TOKSCOPE_CONFIG="}, "--no-tui", "--requests", "1")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2; stderr %s", r.code, r.stderr)
	}
	for _, want := range []string{"--demo", "--url", "--config", "11434"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not mention %s:\n%s", want, r.stderr)
		}
	}
}

func TestMetricsListenValidated(t *testing.T) {
	r := runBinary(t, nil, "--demo", "--metrics-listen", "127.0.0.1:notaport")
	if r.code != 2 || !strings.Contains(r.stderr, "--metrics-listen") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	start := time.Now()
	r = runBinary(t, nil, "--demo", "--no-tui", "--requests", "1", "-i", "0s", "--metrics-listen", "0", "-o", "json")
	// flaky-cloud fails by design now and then: exit 1 is a valid outcome here.
	if r.code > 1 || !strings.Contains(r.stderr, "http://127.0.0.1:") {
		t.Fatalf("exit %d stderr %q (after %s)", r.code, r.stderr, time.Since(start))
	}
}
