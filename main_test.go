package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"tokscope/export/exporttest"
	"tokscope/sim"
)

// The tokscope executable the end-to-end tests of this package run is built on first use
// (a `go test -run` that runs none of them builds nothing), once, into a directory TestMain
// removes. It is race-enabled only when the tests run with -race (raceBuild): a race in the
// binary then fails the test that ran it (exit 66, a DATA RACE report on stderr), and a plain
// `go test .` does not pay the race build (about 95 s on the 2-core machine).
//
// scripts/test.sh builds that race-enabled binary once for every package that runs it and
// names it in TOKSCOPE_TEST_BIN: the tests here then run that one (checked to be a tokscope
// built as they need), and skip a link of 10-30 s on a loaded 2-core machine.
var (
	binDir      string
	buildBinary = sync.OnceValues(func() (string, error) {
		if bin := os.Getenv("TOKSCOPE_TEST_BIN"); bin != "" {
			return bin, checkTestBin(bin)
		}
		bin := filepath.Join(binDir, "tokscope")
		args := []string{"build", "-o", bin, "."}
		if raceBuild {
			args = []string{"build", "-race", "-o", bin, "."}
		}
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("building tokscope: %v\n%s", err, out)
		}
		return bin, nil
	})
)

// checkTestBin refuses a TOKSCOPE_TEST_BIN that is not a tokscope built the way the tests
// need: race-enabled when they are (go version -m reads the build settings).
func checkTestBin(bin string) error {
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		return fmt.Errorf("TOKSCOPE_TEST_BIN=%s: go version -m: %v", bin, err)
	}
	if !strings.Contains(string(out), "\tpath\ttokscope\n") {
		return fmt.Errorf("TOKSCOPE_TEST_BIN=%s is not a tokscope binary", bin)
	}
	if race := strings.Contains(string(out), "\tbuild\t-race=true\n"); race != raceBuild {
		return fmt.Errorf("TOKSCOPE_TEST_BIN=%s: race-enabled %v, the tests %v", bin, race, raceBuild)
	}
	return nil
}

// binary is the built tokscope executable; the test fails if it does not build.
func binary(t testing.TB) string {
	t.Helper()
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Most tests here call t.Parallel: they wait on the binary and on simulators' schedules more
// than they use the CPU. The ones that check a figure against a simulator's schedule within a
// tight tolerance (TestSameServerSameSpeedThroughEveryAPI, TestCacheBustVersusReuse,
// TestHeadlessRate, TestLiveTTFTFrom, TestSimCommand) or a throughput the client must keep
// up with (TestHeadlessSweepJSON: beside 4 other tests its aggregate at 4 streams fell below
// the one at 2) do not: they run first, one at a time. The parallel
// ones run 4 at a time unless -parallel says otherwise (its default, GOMAXPROCS, is 2 on
// the 2-core machine, for tests that keep a core busy; these mostly wait).
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "4")
	}
	dir, err := os.MkdirTemp("", "tokscope-e2e")
	if err != nil {
		panic(err)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func runBinary(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("tokscope %v did not finish in 90s; stderr: %s", args, errOut.String())
	}
	return result{out.String(), errOut.String(), cmd.ProcessState.ExitCode()}
}

// endpointKeys are the keys of every endpoint of the JSON summary: docs/outputs.md's contract and
// its additions, the registered metrics' read from the registry (export/exporttest, which the
// export tests share).
var endpointKeys = exporttest.EndpointKeys()

func TestHeadlessJSONAgainstSimulator(t *testing.T) {
	t.Parallel()
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "a", Model: "m-a", TTFT: 20 * time.Millisecond, TokensPerSecond: 400, TokensPerChunk: 1, MaxTokens: 20},
		sim.Profile{Name: "b", Model: "m-b", TTFT: 40 * time.Millisecond, TokensPerSecond: 200, TokensPerChunk: 2, MaxTokens: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := runBinary(t, nil, "--no-tui", "-o", "json", "--requests", "3", "-i", "0s",
		"-u", srv.BaseURL("a"), "-m", "m-a", "-u", srv.BaseURL("b"), "-m", "m-b")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	// stderr is a pipe, not a terminal: no progress line, nothing at all.
	if r.stderr != "" {
		t.Errorf("stderr of a headless run into a pipe: %q, want nothing", r.stderr)
	}
	var doc struct {
		Endpoints []map[string]any `json:"endpoints"`
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON document:\n%s", r.stdout)
	}
	if len(doc.Endpoints) != 2 {
		t.Fatalf("want 2 endpoints, got %d", len(doc.Endpoints))
	}
	keys := endpointKeys
	for _, ep := range doc.Endpoints {
		for _, k := range keys {
			if _, ok := ep[k]; !ok {
				t.Errorf("endpoint %v lacks %q", ep["name"], k)
			}
		}
		if len(ep) != len(keys) {
			t.Errorf("endpoint %v has %d keys, the contract has %d", ep["name"], len(ep), len(keys))
		}
		if ep["requests"] != json.Number("3") || ep["ok"] != json.Number("3") {
			t.Errorf("endpoint %v: requests %v ok %v, want 3 and 3", ep["name"], ep["requests"], ep["ok"])
		}
		if ep["token_source"] != "usage" {
			t.Errorf("endpoint %v: token_source %v, want usage", ep["name"], ep["token_source"])
		}
		ttft := ep["ttft_ms"].(map[string]any)
		p50, _ := ttft["p50"].(json.Number).Float64()
		if p50 < 20 || p50 > 1000 {
			t.Errorf("endpoint %v: ttft p50 %.1f ms, scheduled ≥ 20 ms", ep["name"], p50)
		}
		// The default prompt behind its cache-busting tag, as the simulator counts it: the
		// prompt's 15 words, the tag's 2, and 4 per message.
		if ep["cache"] != "bust" || ep["prompt_tokens"].(map[string]any)["p50"] != json.Number("21") || ep["last_error"] != nil {
			t.Errorf("endpoint %v: cache %v prompt_tokens %v last_error %v", ep["name"], ep["cache"], ep["prompt_tokens"], ep["last_error"])
		}
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"boom","type":"server_error"}}`)
	}))
	defer failing.Close()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("endpoints:\n  - name: x\n    base_url: http://127.0.0.1:1/v1\n    model: m\n    colour: blue\n"), 0o600)

	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unknown flag", []string{"--frobnicate"}, 2, "frobnicate"},
		{"bad output", []string{"--demo", "--no-tui", "--requests", "1", "-o", "xml"}, 2, "--output"},
		{"bad concurrency", []string{"--demo", "-n", "0"}, 2, "--concurrency"},
		{"url without model", []string{"-u", "http://127.0.0.1:1/v1"}, 2, "--model"},
		{"config unknown key", []string{"-c", bad, "--no-tui", "--requests", "1"}, 2, bad + ":5:5"},
		{"failing endpoint", []string{"--no-tui", "--requests", "2", "--warmup", "0", "-i", "0s", "-u", failing.URL + "/v1", "-m", "m"}, 1, ""},
		{"version", []string{"--version"}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runBinary(t, nil, c.args...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d; stderr: %s", r.code, c.code, r.stderr)
			}
			if !strings.Contains(r.stderr, c.stderr) {
				t.Errorf("stderr %q does not mention %q", r.stderr, c.stderr)
			}
		})
	}
}

// keyEchoServer answers every request with status and an OpenAI error of code whose message
// is format around the request's key: a server that echoes the key back. Closed when the test
// ends.
func keyEchoServer(t *testing.T, status int, code, format string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		msg := fmt.Sprintf(format, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","code":%q}}`, msg, code)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestKeyNeverLeaks runs full headless runs with a key in the environment, against a healthy
// endpoint and against one that echoes the Authorization header back in its error body, and
// greps every output: stdout in each format, stderr, the record file and the log file.
func TestKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	const key = "sk-tokscope-test-5f1c9e0d2b7a4c3e"
	echo := keyEchoServer(t, http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided: %s")
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "ok", Model: "m", TTFT: 10 * time.Millisecond, TokensPerSecond: 500, TokensPerChunk: 1, MaxTokens: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	dir := t.TempDir()
	for _, format := range []string{"json", "csv", "table"} {
		outputs, rec := leakRun(t, []string{"TOKSCOPE_TEST_KEY=" + key}, format, dir,
			"--api-key-env", "TOKSCOPE_TEST_KEY", "-u", srv.BaseURL("ok"), "-m", "m", "-u", echo.URL+"/v1", "-m", "m")
		if !strings.Contains(rec, "http_401") {
			t.Errorf("%s: the record does not hold the 401 (test would prove nothing): %s", format, rec)
		}
		checkNoLeak(t, format, outputs, key, key[8:], "Bearer ")
	}
}

// leakRun runs the binary headless in format, with env, a record file and a log file in dir,
// over args (a healthy endpoint and one that echoes the key it rejected), and wants exit 1
// (the echo endpoint fails). It returns every output by name (stdout, stderr, the record,
// the log) and the record's text.
func leakRun(t *testing.T, env []string, format, dir string, args ...string) (outputs map[string]string, record string) {
	t.Helper()
	recordFile, logFile := filepath.Join(dir, format+".jsonl"), filepath.Join(dir, format+".log")
	r := runBinary(t, env, append([]string{"--no-tui", "-o", format, "--requests", "2", "-i", "0s",
		"--record", recordFile, "--log", logFile}, args...)...)
	if r.code != 1 {
		t.Errorf("%s: exit %d, want 1 (the echo endpoint fails); stderr %s", format, r.code, r.stderr)
	}
	outputs = map[string]string{"stdout": r.stdout, "stderr": r.stderr}
	for _, f := range []string{recordFile, logFile} {
		b, err := os.ReadFile(f)
		if err != nil && f == recordFile {
			t.Fatalf("%s: record not written: %v", format, err)
		}
		outputs[filepath.Base(f)] = string(b)
	}
	return outputs, outputs[filepath.Base(recordFile)]
}

// checkNoLeak fails for every output that contains a needle.
func checkNoLeak(t *testing.T, format string, outputs map[string]string, needles ...string) {
	t.Helper()
	for name, text := range outputs {
		for _, needle := range needles {
			if strings.Contains(text, needle) {
				t.Errorf("%s: %s contains %q:\n%s", format, name, needle, text)
			}
		}
	}
}

// What a new user hit: a model the server does not have gave a table of "—" and
// "http_404: 3" with nothing saying why. The table and the CSV carry each endpoint's last
// error message (redacted: the server echoes the key), a refused connection's included.
func TestHeadlessShowsLastError(t *testing.T) {
	t.Parallel()
	const key = "sk-tokscope-test-0a1b2c3d4e5f6a7b"
	notFound := keyEchoServer(t, http.StatusNotFound, "model_not_found", "The model llama-9 does not exist (key %s)")
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()

	args := []string{"--no-tui", "--requests", "2", "--warmup", "0", "-i", "0s", "--api-key-env", "TOKSCOPE_TEST_KEY",
		"-u", notFound.URL + "/v1", "-m", "llama-9", "-u", refusedURL + "/v1", "-m", "m"}
	env := []string{"TOKSCOPE_TEST_KEY=" + key}
	for _, format := range []string{"table", "csv"} {
		r := runBinary(t, env, append(args, "-o", format)...)
		if r.code != 1 {
			t.Fatalf("%s: exit %d, want 1; stderr %s", format, r.code, r.stderr)
		}
		for _, want := range []string{"The model llama-9 does not exist (key [redacted])", "model_not_found", "connection refused"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s: no %q in\n%s", format, want, r.stdout)
			}
		}
		if strings.Contains(r.stdout, key) {
			t.Errorf("%s: the key is in the output", format)
		}
	}
}
