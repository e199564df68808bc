package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"tokscope/feature"

	"tokscope/sim"
	"tokscope/sweep"
)

func TestFindMaxFlags(t *testing.T) {
	base := []string{"--no-tui", "--find-max", "concurrency", "--slo", "ttft=1s", "-u", "http://127.0.0.1:1/v1", "-m", "m"}
	if _, err := parseFlags(base, io.Discard); err != nil {
		t.Fatalf("%v: %v", base, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-tui", "--find-max", "concurrency", "-u", "http://h/v1", "-m", "m"}, "--find-max needs --slo"},
		{[]string{"--find-max", "tokens"}, `invalid value "tokens" for --find-max`},
		{[]string{"--find-max", "concurrency", "--find-max-limit", "0"}, "invalid value 0 for --find-max-limit"},
		{[]string{"--find-max", "rate", "--find-max-limit", "20000"}, "from 1 to 10000"},
		{[]string{"--sweep", "1,2"}, "exclude each other"},
		{[]string{"--rate", "2"}, "--find-max and --rate exclude each other"},
		{[]string{"--concurrency", "2"}, "--find-max and --concurrency exclude each other"},
		{[]string{"--requests", "2"}, "--find-max and --requests exclude each other"},
		{[]string{"--duration", "1m"}, "--find-max and --duration exclude each other"},
	} {
		args := append(append([]string(nil), base...), c.args...)
		if c.args[0] != "--sweep" && c.args[0] != "--rate" && c.args[0] != "--concurrency" && c.args[0] != "--requests" && c.args[0] != "--duration" {
			args = c.args
			if !strings.HasPrefix(c.args[0], "--no-tui") {
				args = append([]string{"--no-tui", "--slo", "ttft=1s"}, c.args...)
			}
		}
		var stderr bytes.Buffer
		if code := run("", args, io.Discard, &stderr, process{}); code != ExitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", args, code, stderr.String(), ExitUsage, c.want)
		}
	}
	if _, err := parseFlags([]string{"--find-max-limit", "5"}, io.Discard); err == nil || !strings.Contains(err.Error(), "needs --find-max") {
		t.Errorf("--find-max-limit alone: %v", err)
	}
}

// Through the command line: an endpoint that misses the objectives even at concurrency 1
// exits 3, while the other, a server of 2 slots, gets its maximum, 2, in the same run.
func TestFindMaxExit3(t *testing.T) {
	ok := sim.Profile{Name: "ok", Model: "m1", TTFT: 50 * time.Millisecond, TokensPerSecond: 200, MaxTokens: 10, MaxRunning: 2}
	slow := sim.Profile{Name: "slow", Model: "m2", TTFT: 200 * time.Millisecond, TokensPerSecond: 200, MaxTokens: 10}
	srv, err := sim.Start(sim.Options{}, ok, slow)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	html := filepath.Join(t.TempDir(), "capacity.html")
	args := []string{"--no-tui", "-o", "json", "--report", html, "--find-max", "concurrency", "--slo", "ttft=120ms", "--step-duration", "300ms",
		"--max-tokens", "10", "-u", srv.BaseURL("ok"), "-m", "m1", "-u", srv.BaseURL("slow"), "-m", "m2"}
	start := time.Now()
	code := run("", args, &stdout, &stderr, process{})
	t.Logf("%v\n%s", time.Since(start).Round(time.Millisecond), stderr.String())
	if code != ExitSLO {
		t.Errorf("exit %d, want %d", code, ExitSLO)
	}
	var doc struct {
		Endpoints []struct {
			Name     string
			Capacity struct {
				By        string
				Max       *float64
				FirstMiss *float64 `json:"first_miss"`
				Steps     []struct{ Load float64 }
			}
		}
		SLOTarget float64 `json:"slo_target"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if len(doc.Endpoints) != 2 || doc.SLOTarget != 0.9 {
		t.Fatalf("document %s", stdout.String())
	}
	a, b := doc.Endpoints[0].Capacity, doc.Endpoints[1].Capacity
	if a.By != "concurrency" || a.Max == nil || *a.Max != 2 || a.FirstMiss == nil || *a.FirstMiss != 3 {
		t.Errorf("2 slots: %s", stdout.String())
	}
	if b.Max != nil || b.FirstMiss == nil || *b.FirstMiss != 1 || len(b.Steps) != 1 {
		t.Errorf("slow: %s", stdout.String())
	}
	// Every step says when it starts and when it ends, with the time so far.
	starts, ends := strings.Count(stderr.String(), " starts: "), strings.Count(stderr.String(), " ended: ")
	if steps := len(a.Steps) + len(b.Steps); starts != steps || ends != steps || strings.Count(stderr.String(), " so far") != 2*steps {
		t.Errorf("%d start and %d end lines for %d steps", starts, ends, steps)
	}
	if !strings.Contains(stderr.String(), "missed even at concurrency 1") {
		t.Errorf("stderr does not say which endpoint missed at 1:\n%s", stderr.String())
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Capacity search", `id="capacity-attainment"`, "max concurrency 2 (SLO met by", ">max 2<"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// An endpoint the Runner stops after identical permanent errors (a 404 for every request) can
// never finish a step of 10 requests: its search ends with the step it has, a miss at
// concurrency 1, and the run exits 3 instead of waiting for ever.
func TestFindMaxStoppedEndpoint(t *testing.T) {
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "ok", Model: "m", TTFT: 10 * time.Millisecond, TokensPerSecond: 500, MaxTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"--no-tui", "-o", "json", "--find-max", "concurrency", "--slo", "ttft=1s", "--step-duration", "200ms", "--max-tokens", "5",
		"-u", strings.Replace(srv.BaseURL("ok"), "/ok/", "/missing/", 1), "-m", "m"}
	done := make(chan int, 1)
	go func() { done <- run("", args, &stdout, &stderr, process{}) }()
	select {
	case code := <-done:
		if code != ExitSLO {
			t.Errorf("exit %d, want %d\n%s", code, ExitSLO, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the search of a stopped endpoint did not end in 30 s")
	}
	if !strings.Contains(stdout.String(), `"max":null`) || !strings.Contains(stdout.String(), `"first_miss":1`) {
		t.Errorf("stdout %s\nstderr %s", stdout.String(), stderr.String())
	}
}

// Ctrl-C stops a search where it is: the steps that ended are printed, the document says
// "interrupted", the exit status is 1.
func TestFindMaxInterrupt(t *testing.T) {
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "a", Model: "m", TTFT: 10 * time.Millisecond, TokensPerSecond: 500, MaxTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	signals := make(chan os.Signal, 2)
	proc := process{signals: signals, exit: func(int) {}}
	var stdout bytes.Buffer
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run("", []string{"--no-tui", "-o", "json", "--find-max", "concurrency", "--slo", "ttft=1s", "--step-duration", "300ms",
			"--max-tokens", "5", "-u", srv.BaseURL("a"), "-m", "m"}, &stdout, stderr, proc)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "step 2 ended:") { // two steps over
		if time.Now().After(deadline) {
			t.Fatal("no second step in 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	signals <- fakeSignal{}
	select {
	case code := <-done:
		if code != ExitFailed {
			t.Errorf("exit %d, want %d", code, ExitFailed)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5 s after the interrupt")
	}
	if !strings.Contains(stdout.String(), `"interrupted":true`) || !strings.Contains(stdout.String(), `{"load":2,`) {
		t.Errorf("stdout %s", stdout.String())
	}
}

// syncBuffer is a bytes.Buffer a test may read while the run writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The search's progress note counts its steps in words that agree with the count.
func TestProgressNoteSteps(t *testing.T) {
	for _, tc := range []struct {
		p    sweep.SearchProgress
		want string
	}{
		{sweep.SearchProgress{Elapsed: 3 * time.Second, Left: 1}, " · 3s so far, ≈ 1 step left"},
		{sweep.SearchProgress{Elapsed: 3 * time.Second, Left: 2, PerStep: 5 * time.Second}, " · 3s so far, ≈ 2 steps (≈ 10s) left"},
		{sweep.SearchProgress{Elapsed: 3 * time.Second, Left: 1, PerStep: 5 * time.Second}, " · 3s so far, ≈ 1 step (≈ 5s) left"},
	} {
		if got := feature.ProgressNote(tc.p, false); got != tc.want {
			t.Errorf("feature.ProgressNote(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}
