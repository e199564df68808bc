package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tokscope/cli/clitest"
	"tokscope/sim"
)

// closingServer is llama.cpp's llama-server as it was seen (issue 15): it advertises
// "Keep-Alive: timeout=5, max=100" and closes every connection after a streamed answer —
// 20 ms after it, so that a request sent at once is surely written into the dying connection.
func closingServer(t *testing.T, tokensPerSecond float64) string {
	t.Helper()
	_, url := closingSim(t, tokensPerSecond)
	return url
}

// closingSim is closingServer with the simulator, to see what it received.
func closingSim(t *testing.T, tokensPerSecond float64) (*sim.Server, string) {
	t.Helper()
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "llama", Model: "m", TTFT: 20 * time.Millisecond,
		TokensPerSecond: tokensPerSecond, TokensPerChunk: 1, MaxTokens: 8,
		CloseAfterStream: true, CloseDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv, srv.BaseURL("llama")
}

// waitForRequests waits until the simulator has received n requests: the run is measuring.
func waitForRequests(t *testing.T, srv *sim.Server, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for srv.Requests("llama") < n {
		if time.Now().After(deadline) {
			t.Fatalf("the simulator received %d requests in 10 s, want %d", srv.Requests("llama"), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stalledWriter blocks every Write until release is closed: a run that finishes slowly.
type stalledWriter struct {
	writing chan<- struct{}
	release <-chan struct{}
}

func (w stalledWriter) Write(p []byte) (int, error) {
	select {
	case w.writing <- struct{}{}:
	default:
	}
	<-w.release
	return len(p), nil
}

type summaryJSON struct {
	Endpoints []struct {
		Requests, OK, Errors, Cut int
		ErrorKinds                map[string]int `json:"error_kinds"`
	} `json:"endpoints"`
	Grace *struct {
		LimitS  float64 `json:"limit_s"`
		WaitedS float64 `json:"waited_s"`
		Cut     int     `json:"cut"`
	} `json:"grace"`
}

// retries counts the records of requests sent again after a dead connection.
func retries(t *testing.T, path string) int {
	t.Helper()
	recs := clitest.WholeRecords(t, path)
	n := 0
	for _, r := range recs {
		if r.ConnRetry {
			n++
		}
	}
	return n
}

// The three commands of issue 15 against a server that closes every connection: zero errors,
// headless and in a sweep (durations shortened), and the record shows that dead connections
// were met and replaced.
func TestClosingServerNoErrors(t *testing.T) {
	url := closingServer(t, 400)
	for _, tc := range []struct {
		name string
		args []string
		want int // counted requests, when fixed
	}{
		{"-n 1 -i 0s --requests 20", []string{"-n", "1", "-i", "0s", "--requests", "20"}, 20},
		{"-n 4 --duration 2s", []string{"-n", "4", "--duration", "2s"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "run.jsonl")
			var stdout, stderr bytes.Buffer
			args := append([]string{"--no-tui", "-o", "json", "--max-tokens", "8", "--record", rec, "-u", url, "-m", "m"}, tc.args...)
			if code := run("", args, &stdout, &stderr, process{}); code != ExitOK {
				t.Fatalf("exit %d, stderr %s\n%s", code, stderr.String(), stdout.String())
			}
			var doc summaryJSON
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || len(doc.Endpoints) != 1 {
				t.Fatalf("%v: %s", err, stdout.String())
			}
			e := doc.Endpoints[0]
			if e.Errors != 0 || e.OK != e.Requests || (tc.want > 0 && e.Requests != tc.want) || e.Requests == 0 {
				t.Errorf("requests %d ok %d errors %d %v, want %d without errors", e.Requests, e.OK, e.Errors, e.ErrorKinds, tc.want)
			}
			t.Logf("%d requests, %d sent again after a dead connection", e.Requests, retries(t, rec))
		})
	}

	t.Run("--sweep 1,2 --step-duration 1500ms", func(t *testing.T) {
		rec := filepath.Join(t.TempDir(), "run.jsonl")
		var stdout, stderr bytes.Buffer
		args := []string{"--no-tui", "-o", "json", "--max-tokens", "8", "--record", rec, "-u", url, "-m", "m", "--sweep", "1,2", "--step-duration", "1500ms"}
		if code := run("", args, &stdout, &stderr, process{}); code != ExitOK {
			t.Fatalf("exit %d, stderr %s\n%s", code, stderr.String(), stdout.String())
		}
		var doc struct {
			Sweep []struct {
				Step, Requests, Errors int
			} `json:"sweep"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || len(doc.Sweep) != 2 {
			t.Fatalf("%v: %s", err, stdout.String())
		}
		for _, s := range doc.Sweep {
			if s.Errors != 0 || s.Requests == 0 {
				t.Errorf("step %d: %d requests, %d errors", s.Step, s.Requests, s.Errors)
			}
		}
		if n := retries(t, rec); n == 0 {
			t.Error("no request was sent again: the server should have closed connections under them")
		}
	})
}

// At the end of --duration the requests in flight finish within the grace and count; with a
// grace shorter than them they are cut: counted as cut (not errors, exit 0), and the summary
// says how long the grace ran.
func TestDurationGrace(t *testing.T) {
	url := closingServer(t, 10) // 8 tokens at 10 tok/s: ≈ 0.8 s answers
	for _, tc := range []struct {
		grace    string
		ok, cut  bool
		waitedLo float64
	}{
		{"5s", true, false, 0.1},
		{"200ms", false, true, 0.2},
	} {
		t.Run("--grace "+tc.grace, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := []string{"--no-tui", "-o", "json", "--max-tokens", "8", "-u", url, "-m", "m", "-n", "2", "-i", "0s", "--duration", "1s", "--grace", tc.grace}
			if code := run("", args, &stdout, &stderr, process{}); code != ExitOK {
				t.Fatalf("exit %d, stderr %s", code, stderr.String())
			}
			var doc summaryJSON
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.Grace == nil {
				t.Fatalf("%v: %s", err, stdout.String())
			}
			e := doc.Endpoints[0]
			if e.Errors != 0 || (e.Cut > 0) != tc.cut || doc.Grace.Cut != e.Cut || (tc.cut && e.Cut != 2) {
				t.Errorf("requests %d errors %d cut %d (grace %+v)", e.Requests, e.Errors, e.Cut, *doc.Grace)
			}
			if tc.ok && e.Requests < 2 {
				t.Errorf("%d requests: the two in flight at the end should have finished", e.Requests)
			}
			if doc.Grace.WaitedS < tc.waitedLo {
				t.Errorf("grace %+v", *doc.Grace)
			}
		})
	}
}

// fakeSignal is an os.Signal for the interrupt tests.
type fakeSignal struct{}

func (fakeSignal) String() string { return "test interrupt" }
func (fakeSignal) Signal()        {}

// Ctrl-C in headless mode stops at once (no grace), counts what is in flight as cut, and still
// prints the summary; a second one exits at once.
func TestHeadlessInterrupt(t *testing.T) {
	// 8 tokens at 0.5 tok/s: 16 s answers, so that "at once" can allow a loaded 2-core
	// machine under -race 5 s and still be far from what waiting for them takes.
	srv, url := closingSim(t, 0.5)
	signals := make(chan os.Signal, 2)
	var exited atomic.Int64
	exited.Store(-1)
	proc := process{signals: signals, exit: func(code int) { exited.Store(int64(code)) }}
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run("", []string{"--no-tui", "-o", "json", "--max-tokens", "8", "-u", url, "-m", "m", "-n", "3", "--duration", "0", "--warmup", "0"},
			&stdout, &stderr, proc)
	}()
	// Interrupt once the three streams are measuring (setting up can take a while under load).
	waitForRequests(t, srv, 3)
	interruptedAt := time.Now()
	signals <- fakeSignal{}
	var code int
	select {
	case code = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10 s after the interrupt")
	}
	// At once: well before the 16 s answers in flight would have ended.
	if took := time.Since(interruptedAt); code != ExitOK || took > 5*time.Second {
		t.Errorf("exit %d %v after the interrupt, stderr %s", code, took, stderr.String())
	}
	var doc summaryJSON
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %q", err, stdout.String())
	}
	if e := doc.Endpoints[0]; e.Cut != 3 || e.Errors != 0 || e.Requests != 0 || doc.Grace == nil || doc.Grace.LimitS != 0 {
		t.Errorf("summary %s", strings.TrimSpace(stdout.String()))
	}
	if exited.Load() != -1 {
		t.Errorf("exited with %d on one interrupt", exited.Load())
	}

	// A second interrupt while the first one's ending is under way (here: its summary cannot
	// be written yet) exits at once.
	srv2, url2 := closingSim(t, 0.5)
	exitc := make(chan int, 1)
	proc.exit = func(code int) { exitc <- code }
	signals2 := make(chan os.Signal, 2)
	proc.signals = signals2
	writing, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	go func() {
		run("", []string{"--no-tui", "-o", "json", "-u", url2, "-m", "m", "--duration", "0", "--grace", "1m"},
			stalledWriter{writing, release}, &bytes.Buffer{}, proc)
	}()
	waitForRequests(t, srv2, 1)
	signals2 <- fakeSignal{}
	select {
	case <-writing:
	case <-time.After(5 * time.Second):
		t.Fatal("the first interrupt did not end the run within 5 s")
	}
	signals2 <- fakeSignal{}
	select {
	case code := <-exitc:
		if code != ExitInterrupted {
			t.Errorf("second interrupt: exit %d, want %d", code, ExitInterrupted)
		}
	case <-time.After(5 * time.Second):
		t.Error("the second interrupt did not exit within 5 s")
	}
}

// A model the server does not have: headless, the endpoint backs off and stops after a few
// identical 404s with a clear message, and the run ends without waiting for --duration.
func TestHeadlessStopsAfterPermanentErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "{\"error\":{\"message\":\"The model `nope` does not exist\",\"code\":\"model_not_found\"}}")
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run("", []string{"--no-tui", "-o", "json", "--duration", "1m", "-u", srv.URL + "/v1", "-m", "nope"}, &stdout, &stderr, process{})
	if took := time.Since(start); code != ExitFailed || took > 20*time.Second {
		t.Errorf("exit %d after %v, want 1 well before the minute", code, took.Round(time.Millisecond))
	}
	want := fmt.Sprintf("stopped after %d identical http_404 errors in a row", StopAfterPermanent)
	if strings.Count(stderr.String(), want) != 1 || !strings.Contains(stderr.String(), "does not exist") {
		t.Errorf("stderr %q, want %q once", stderr.String(), want)
	}
	var doc summaryJSON
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	// The warm-up is the first of the identical errors; it counts in no figure.
	if e := doc.Endpoints[0]; e.Errors != StopAfterPermanent-1 || e.ErrorKinds["http_404"] != StopAfterPermanent-1 {
		t.Errorf("%d errors %v, want %d × http_404 after the warm-up's", e.Errors, e.ErrorKinds, StopAfterPermanent-1)
	}
}
