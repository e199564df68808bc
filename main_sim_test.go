package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// simServer is `tokscope sim` running in the background, and the base URL it printed.
type simServer struct {
	url    string
	banner []string
	done   chan int // its exit status, once it has exited
	stderr *strings.Builder
	cmd    *exec.Cmd
}

// startSim starts the built binary's simulator on a free loopback port and reads its banner
// up to the example line.
func startSim(t *testing.T) *simServer {
	t.Helper()
	cmd := exec.Command(binary(t), "sim", "--listen", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &simServer{done: make(chan int, 1), stderr: &strings.Builder{}, cmd: cmd}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	errRead := make(chan struct{})
	go func() { _, _ = io.Copy(s.stderr, stderr); close(errRead) }()
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		s.banner = append(s.banner, lines.Text())
		if strings.HasPrefix(lines.Text(), "e.g. ") {
			break
		}
	}
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		<-errRead
		_ = cmd.Wait()
		s.done <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // only the process this test started; a no-op once it exited
	})
	var m []string
	if len(s.banner) > 0 {
		m = regexp.MustCompile(`^tokscope sim: serving at (http://127\.0\.0\.1:\d+) until Ctrl-C or SIGTERM$`).FindStringSubmatch(s.banner[0])
	}
	if m == nil {
		t.Fatalf("tokscope sim's banner: %q", s.banner)
	}
	s.url = m[1]
	return s
}

// runJSON runs a headless measuring run and returns its one endpoint's summary.
func runJSON(t *testing.T, args ...string) (map[string]any, result) {
	t.Helper()
	r := runBinary(t, nil, append([]string{"--no-tui", "-o", "json"}, args...)...)
	doc := parseSummary(t, strings.Join(args, " "), r.stdout)
	if len(doc.Endpoints) != 1 {
		t.Fatalf("%v: %d endpoints", args, len(doc.Endpoints))
	}
	return doc.Endpoints[0], r
}

func number(t *testing.T, ep map[string]any, key string) float64 {
	t.Helper()
	n, ok := ep[key].(json.Number)
	if !ok {
		t.Fatalf("%s is %v", key, ep[key])
	}
	v, _ := n.Float64()
	return v
}

// `tokscope sim` serves the simulator on the address given, for tokscope and any client, until
// SIGTERM: the model lists, a streamed request through each of the five APIs, each API's own
// per-request timings, /metrics, a schedule named as the model (its TTFT within an honest
// tolerance), and a bad schedule refused with the syntax.
func TestSimCommand(t *testing.T) {
	s := startSim(t)
	if banner := strings.Join(s.banner, "\n"); !strings.Contains(banner, s.url+"/v1\n") || !strings.Contains(banner, s.url+"/metrics") ||
		!strings.Contains(banner, "  fast-gpu ") || !strings.Contains(banner, "sim:ttft=60ms,") {
		t.Errorf("the banner does not say where each API is and which models it knows:\n%s", banner)
	}

	// The models, through both lists.
	want := []string{"fast-gpu", "slow-cpu", "reasoner", "flaky-cloud"}
	for _, args := range [][]string{{"models", s.url + "/v1"}, {"models", "--api", "ollama", s.url}} {
		r := runBinary(t, nil, args...)
		if r.code != 0 || !strings.HasSuffix(r.stdout, "\n  "+strings.Join(want, "\n  ")+"\n") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}

	// tokscope through each API: every request answered, each its 8 tokens.
	for _, api := range []string{"chat", "completions", "responses", "anthropic", "ollama"} {
		base := s.url + "/v1"
		if api == "ollama" {
			base = s.url
		}
		ep, r := runJSON(t, "--requests", "2", "--warmup", "0", "-i", "0s", "--max-tokens", "8", "-u", base, "-m", "fast-gpu", "--api", api)
		if r.code != 0 || number(t, ep, "ok") != 2 || number(t, ep, "output_tokens") != 16 {
			t.Errorf("--api %s: exit %d, ok %v, output tokens %v; stderr %s", api, r.code, ep["ok"], ep["output_tokens"], r.stderr)
		}
	}

	// Any client: each API's own per-request timings (llama.cpp's on slow-cpu, Ollama's
	// durations always), and vLLM's families at /metrics labelled with the name asked for.
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/chat/completions", `{"model":"slow-cpu","stream":true,"max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`, `"timings":{"cache_n":0,"prompt_n":`},
		{"/api/chat", `{"model":"fast-gpu","options":{"num_predict":3},"messages":[{"role":"user","content":"hi"}]}`, `"done":true,"done_reason":"length","total_duration":`},
	} {
		resp, err := http.Post(s.url+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), tc.want) {
			t.Errorf("POST %s: %d %s; want %q", tc.path, resp.StatusCode, body, tc.want)
		}
	}
	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") ||
		!regexp.MustCompile(`(?m)^vllm:generation_tokens_total\{engine="0",model_name="fast-gpu"\} [1-9]`).Match(metrics) {
		t.Errorf("/metrics (%s) lacks fast-gpu's generated tokens:\n%s", resp.Header.Get("Content-Type"), metrics)
	}

	// A schedule as the model: its TTFT. The simulator sends the first token 300 ms after
	// the request arrives; loopback and a loaded 2-core machine add a little, never take any.
	ep, r := runJSON(t, "--requests", "4", "--warmup", "1", "-i", "0s", "--max-tokens", "5", "-u", s.url+"/v1", "-m", "sim:ttft=300ms,tps=200")
	if r.code != 0 || number(t, ep, "ok") != 4 {
		t.Fatalf("a schedule: exit %d, %v; stderr %s", r.code, ep, r.stderr)
	}
	ttft := ep["ttft_ms"].(map[string]any)
	if lo, hi := number(t, ttft, "min"), number(t, ttft, "max"); lo < 299 || hi > 450 {
		t.Errorf("sim:ttft=300ms: TTFT from %v to %v ms; want from 300 to 300 + 150", lo, hi)
	}

	// A bad schedule: the request is refused, naming the key and the syntax.
	ep, r = runJSON(t, "--requests", "1", "--warmup", "0", "-u", s.url+"/v1", "-m", "sim:rate=5")
	if last, _ := ep["last_error"].(string); r.code != 1 || !strings.Contains(last, `400 Bad Request: model "sim:rate=5": unknown key "rate"`) {
		t.Errorf("a bad schedule: exit %d, last error %q", r.code, ep["last_error"])
	}
	resp, err = http.Post(s.url+"/v1/messages", "application/json", strings.NewReader(`{"model":"sim:ttft=soon","stream":true,"max_tokens":1,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), `ttft: \"soon\" is not a duration`) || !strings.Contains(string(body), "sim:KEY=VALUE") {
		t.Errorf("a bad schedule through the Anthropic API: %d %s", resp.StatusCode, body)
	}

	// SIGTERM ends it: exit 0.
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-s.done:
		if code != 0 || !strings.Contains(s.stderr.String(), "stopped") {
			t.Errorf("after SIGTERM: exit %d, stderr %q", code, s.stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tokscope sim still serving 10 s after SIGTERM")
	}
}

// tokscope --help groups its flags under headings and lists the commands; each command has
// its --help; the old spellings still work, with one note on stderr.
func TestHelpAndOldSpellings(t *testing.T) {
	t.Parallel()
	r := runBinary(t, nil, "--help")
	for _, want := range []string{"Commands:\n  replay ", "\n  sim ", "\nEndpoints:\n  -c, --config FILE", "\nWorkload (what each request sends):\n",
		"\nLoad (how many requests, how fast, how long):\n", "\nObjectives:\n", "\nOutputs:\n", "\nServer side:\n", "\nFleet:\n"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("tokscope --help: exit %d, lacks %q:\n%s", r.code, want, r.stdout)
		}
	}
	for _, c := range []string{"replay", "models", "calibrate", "sim"} {
		if r := runBinary(t, nil, c, "--help"); r.code != 0 || !strings.Contains(r.stdout, "Usage:\n  tokscope "+c+" ") || r.stderr != "" {
			t.Errorf("tokscope %s --help: exit %d, stdout %q, stderr %q", c, r.code, r.stdout, r.stderr)
		}
	}
	if r := runBinary(t, nil, "replya"); r.code != 2 || r.stderr != "tokscope: unknown command \"replya\"; did you mean \"replay\"? (see tokscope --help)\n" {
		t.Errorf("a misspelt command: exit %d, stderr %q", r.code, r.stderr)
	}
	rec, _ := recordDemo(t)
	now := runBinary(t, nil, "replay", rec, "--no-tui", "-o", "json")
	old := runBinary(t, nil, "--replay", rec, "--no-tui", "-o", "json")
	// The demo's flaky-cloud fails some requests: both exit 1 then, as the live run did.
	if now.code != old.code || now.code > 1 || now.stdout != old.stdout || now.stderr != "" ||
		old.stderr != "tokscope: note: --replay is now spelled tokscope replay FILE… (the old spelling still works)\n" {
		t.Errorf("replay: exit %d, stderr %q; --replay: exit %d, stderr %q; same summary: %v", now.code, now.stderr, old.code, old.stderr, now.stdout == old.stdout)
	}
}
