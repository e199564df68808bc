package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"tokscope/discover"
	"tokscope/sim"
)

// closedPort is a loopback base URL where nothing listens (a port just released).
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// noConfigFile points every config lookup at an empty directory.
func noConfigFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("HOME", dir)
	t.Setenv("TOKSCOPE_CONFIG", "")
}

// With no config file and no --url, tokscope looks for local servers; when none answers it
// explains --demo, --url and the config file, and exits 2. The candidates are injected: the
// test must not depend on what listens on this machine's 8080 or 11434.
func TestNoEndpointsExplains(t *testing.T) {
	noConfigFile(t)
	var stdout, stderr bytes.Buffer
	code := run("", []string{"--no-tui", "--requests", "1"}, &stdout, &stderr,
		process{localServers: []discover.Candidate{{Server: "Ollama", BaseURL: closedPort(t)}}})
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d; stderr %s", code, ExitUsage, stderr.String())
	}
	for _, want := range []string{"--demo", "--url", "--config", "11434"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not mention %s:\n%s", want, stderr.String())
		}
	}
	// A 100-column terminal must not wrap a line mid-phrase.
	for _, line := range strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("a line of %d columns, more than 100: %q", n, line)
		}
	}
}

// A server that answers the models list with 401 is there, and wants a key: discovery says
// so and names the flag, instead of passing over it as if nothing listened.
func TestDiscoveryHintsAtKeyOn401(t *testing.T) {
	noConfigFile(t)
	locked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"missing API key"}}`, http.StatusUnauthorized)
	}))
	defer locked.Close()
	var stdout, stderr bytes.Buffer
	code := run("", []string{"--no-tui", "--requests", "1"}, &stdout, &stderr,
		process{localServers: []discover.Candidate{{Server: "vLLM", BaseURL: locked.URL + "/v1"}}})
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d; stderr %s", code, ExitUsage, stderr.String())
	}
	for _, want := range []string{"vLLM", locked.URL + "/v1", "needs a key (401 Unauthorized)", "--api-key-env",
		"tokscope models --api-key-env NAME " + locked.URL + "/v1"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "no local server answered") {
		t.Errorf("a server that answered 401 is reported as absent:\n%s", stderr.String())
	}
}

// With standard input redirected from /dev/null (a character device, but no terminal),
// discovery lists what it found and the command, and does not ask: there is nobody to answer.
func TestDiscoveryDoesNotAskWithoutTerminal(t *testing.T) {
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "a", Model: "model-a", TokensPerSecond: 100, TokensPerChunk: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	if isTerminal(devNull) {
		t.Fatalf("isTerminal(%s) = true", os.DevNull)
	}
	var stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := discoverEndpoints(ctx, process{stdin: devNull, localServers: []discover.Candidate{{Server: "llama.cpp", BaseURL: srv.BaseURL("a")}}}, true, &stderr)
	if cfg != nil || err == nil || !strings.Contains(err.Error(), "without confirmation") {
		t.Errorf("discoverEndpoints with stdin %s = %v, %v; want no endpoints and a refusal", os.DevNull, cfg, err)
	}
	if strings.Contains(stderr.String(), "Monitor them now?") {
		t.Errorf("asked a question nobody can answer:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "-u "+srv.BaseURL("a")+" -m model-a") {
		t.Errorf("the command that monitors the server is missing:\n%s", stderr.String())
	}
}

// The live view needs a terminal on stdout: into a file or a pipe it would write escape codes
// and show nothing. tokscope refuses with one line naming --no-tui, exit 2, before it starts
// anything (the built binary's case is TestTUIRefusedWithoutTerminal in the root package;
// replay's, which reads its files first, TestReplayWithoutTerminal).
func TestTUIRefusedWhenStdoutIsNotATerminal(t *testing.T) {
	out, err := os.Create(t.TempDir() + "/out.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	for _, args := range [][]string{{"--demo"}} {
		var stderr bytes.Buffer
		code := run("", args, out, &stderr, process{})
		if code != ExitUsage || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "--no-tui") {
			t.Errorf("%v with stdout in a file: exit %d, stderr %q", args, code, stderr.String())
		}
	}
	if st, _ := out.Stat(); st.Size() != 0 {
		t.Errorf("%d bytes written to the file", st.Size())
	}
}

// The headless demo's exit status is the same on every run: flaky-cloud's faults come on a
// fixed schedule (sim.DemoProfiles), its second counted request a 429, so `--requests 2`
// always exits 1 with exactly that error and `--requests 1` always exits 0. Three runs at once,
// which also shows that the schedule does not depend on timing.
func TestHeadlessDemoExitStatusIsFixed(t *testing.T) {
	noConfigFile(t)
	type outcome struct {
		code int
		row  string // flaky-cloud's requests, ok, errors and error kinds
	}
	run := func(requests string) outcome {
		var stdout, stderr bytes.Buffer
		code := Main("", []string{"--demo", "--no-tui", "-o", "csv", "--requests", requests, "-i", "0s"}, &stdout, &stderr)
		recs, err := csv.NewReader(&stdout).ReadAll()
		if err != nil || len(recs) < 2 {
			return outcome{code, fmt.Sprintf("no csv (%v): %s", err, stderr.String())}
		}
		col := func(name string) int { return slices.Index(recs[0], name) }
		for _, r := range recs[1:] {
			if r[col("name")] == "flaky-cloud" {
				return outcome{code, strings.Join([]string{r[col("requests")], r[col("ok")], r[col("errors")], r[col("error_kinds")]}, " ")}
			}
		}
		return outcome{code, "no flaky-cloud row"}
	}
	got := make([]outcome, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = run(map[bool]string{true: "1", false: "2"}[i == 3])
		}()
	}
	wg.Wait()
	want := outcome{ExitFailed, "2 1 1 http_429=1"}
	for i, o := range got[:3] {
		if o != want {
			t.Errorf("run %d of --requests 2: %+v, want %+v", i+1, o, want)
		}
	}
	if want := (outcome{ExitOK, "1 1 0 "}); got[3] != want {
		t.Errorf("--requests 1: %+v, want %+v", got[3], want)
	}
}
