package otlpexport_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tokscope/cli"
	"tokscope/cli/clitest"
)

// summary is the part of a run's -o json that the push must agree with.
type summary struct {
	Endpoints []struct {
		Name         string         `json:"name"`
		Model        string         `json:"model"`
		Requests     int            `json:"requests"`
		OK           int            `json:"ok"`
		Errors       int            `json:"errors"`
		Truncated    int            `json:"truncated"`
		Cut          int            `json:"cut"`
		ErrorKinds   map[string]int `json:"error_kinds"`
		OutputTokens int64          `json:"output_tokens"`
		TTFT         *dist          `json:"ttft_ms"`
		E2E          *dist          `json:"e2e_ms"`
		Prompt       *dist          `json:"prompt_tokens"`
	} `json:"endpoints"`
}

type dist struct {
	Mean float64 `json:"mean"`
}

// TestHeadlessRunPushesItsFigures: a real headless run against the built-in simulator, its
// metrics pushed with --otlp and decoded by the Collector's pdata, agrees with its own JSON
// summary endpoint by endpoint: requests by outcome and error type, output and prompt
// tokens, and the TTFT and duration histograms' counts and sums.
func TestHeadlessRunPushesItsFigures(t *testing.T) {
	rcv := newReceiver(t)
	var stdout, stderr bytes.Buffer
	code := cli.Main("v1.2.3", []string{"--demo", "--no-tui", "--requests", "4", "-n", "2", "-i", "0s", "-o", "json",
		"--otlp", rcv.url}, &stdout, &stderr)
	if code != cli.ExitOK && code != cli.ExitFailed { // the demo's flaky endpoint may fail requests
		t.Fatalf("exit %d; stderr: %s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), "--otlp") {
		t.Errorf("a note about the push on stderr: %s", stderr.String())
	}
	var sum summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil || len(sum.Endpoints) == 0 {
		t.Fatalf("no JSON summary (%v): %s", err, stdout.String())
	}
	md, _ := rcv.last(t)
	metrics, _, resource := pushed(t, md)
	if resource["service.name"] != "tokscope" || resource["service.version"] != "v1.2.3" {
		t.Errorf("resource %v", resource)
	}
	for _, e := range sum.Endpoints {
		ep := map[string]string{"tokscope.endpoint": e.Name, "gen_ai.request.model": e.Model, "server.address": "127.0.0.1"}
		checkRequests(t, metrics, e.Name, ep, map[string]int{"ok": e.OK, "error": e.Errors, "truncated": e.Truncated, "cut": e.Cut}, e.ErrorKinds)
		out := one(t, metrics, "gen_ai.client.token.usage", merge(ep, map[string]string{"gen_ai.token.type": "output"}))
		if int64(out.sum) != e.OutputTokens || int(out.count) != e.OK {
			t.Errorf("%s: output token usage %d requests / %g tokens, JSON %d ok / %d tokens", e.Name, out.count, out.sum, e.OK, e.OutputTokens)
		}
		// The live counter counts tokens as they arrive; a request that then fails owes its
		// tokens back from the endpoint's next ones (a counter cannot go down), so an endpoint
		// whose last requests failed may end above its ok requests' total, never below.
		tok := one(t, metrics, "tokscope.generation_tokens", ep)
		if clean := e.Errors == 0 && e.Truncated == 0; clean && int64(tok.value) != e.OutputTokens || int64(tok.value) < e.OutputTokens {
			t.Errorf("%s: generation tokens %g, JSON %d (errors %d, truncated %d)", e.Name, tok.value, e.OutputTokens, e.Errors, e.Truncated)
		}
		if e.OK == 0 {
			continue
		}
		ttft := one(t, metrics, "gen_ai.client.operation.time_to_first_chunk", ep)
		checkHist(t, e.Name+" TTFT", ttft, e.OK, e.TTFT.Mean/1000)
		checkHist(t, e.Name+" duration", one(t, metrics, "gen_ai.client.operation.duration", ep), e.OK, e.E2E.Mean/1000)
		in := one(t, metrics, "gen_ai.client.token.usage", merge(ep, map[string]string{"gen_ai.token.type": "input"}))
		checkHist(t, e.Name+" input tokens", in, e.OK, e.Prompt.Mean)
	}
}

// checkRequests compares tokscope.requests of one endpoint with the summary's counts.
func checkRequests(t *testing.T, metrics map[string][]point, name string, ep map[string]string, byOutcome, kinds map[string]int) {
	t.Helper()
	for outcome, want := range byOutcome {
		got := 0.0
		for _, p := range having(metrics["tokscope.requests"], merge(ep, map[string]string{"tokscope.outcome": outcome})) {
			got += p.value
		}
		if int(got) != want {
			t.Errorf("%s: %g requests %s pushed, JSON says %d", name, got, outcome, want)
		}
	}
	for kind, want := range kinds {
		got := 0.0
		for _, p := range having(metrics["tokscope.requests"], merge(ep, map[string]string{"error.type": kind})) {
			got += p.value
		}
		if int(got) != want {
			t.Errorf("%s: %g requests with error.type %s pushed, JSON says %d", name, got, kind, want)
		}
	}
}

// checkHist compares a histogram with a count and a mean from the JSON (rounded to 3
// decimals there, so the sum agrees to a relative 1e-4).
func checkHist(t *testing.T, what string, p point, count int, mean float64) {
	t.Helper()
	want := mean * float64(count)
	if int(p.count) != count || math.Abs(p.sum-want) > 1e-4*want+1e-6 {
		t.Errorf("%s: count %d sum %g, JSON count %d sum %g", what, p.count, p.sum, count, want)
	}
}

// TestSIGTERMPushesBeforeExit: a headless run ended by SIGTERM (kill, docker stop, a Job's
// pod deleted) pushes what it measured before it exits: the last push has the summary's
// final counts, the requests cut by the signal included.
func TestSIGTERMPushesBeforeExit(t *testing.T) {
	busy := clitest.BusySim(t)
	rcv := newReceiver(t)
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Main("", []string{"--no-tui", "--duration", "0", "-i", "0s", "-n", "2", "-o", "json",
			"--record", path, "--otlp", rcv.url, "-u", busy, "-m", "m"}, &stdout, &stderr)
	}()
	// Main has registered for the signal once requests are recorded.
	waitFor(t, "recorded requests", func() bool {
		b, _ := os.ReadFile(path)
		return bytes.Count(b, []byte("\n")) >= 10
	})
	before := rcv.count() // 0 unless the machine is so slow that 10 s passed
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != cli.ExitOK {
			t.Errorf("exit %d; stderr %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Main did not return after SIGTERM")
	}
	var sum summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil || len(sum.Endpoints) != 1 {
		t.Fatalf("no JSON summary (%v): %s", err, stdout.String())
	}
	md, n := rcv.last(t)
	if n <= before {
		t.Fatalf("%d pushes after SIGTERM, %d before: no push at exit", n, before)
	}
	metrics, _, _ := pushed(t, md)
	e := sum.Endpoints[0]
	checkRequests(t, metrics, e.Name, map[string]string{"tokscope.endpoint": e.Name},
		map[string]int{"ok": e.OK, "error": e.Errors, "cut": e.Cut}, e.ErrorKinds)
}

// TestHangingCollectorCostsANote: a collector that accepts the connection and never answers
// neither fails the run nor holds its exit for more than the push's bound (5 s): the run's
// summary and status are as without --otlp, and stderr has one note.
func TestHangingCollectorCostsANote(t *testing.T) {
	busy := clitest.BusySim(t)
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)

	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := cli.Main("", []string{"--no-tui", "--requests", "5", "-i", "0s", "-o", "json",
		"--otlp", hang.URL, "-u", busy, "-m", "m"}, &stdout, &stderr)
	took := time.Since(start)
	if code != cli.ExitOK {
		t.Errorf("exit %d with a hanging collector; stderr %s", code, stderr.String())
	}
	if took > 12*time.Second {
		t.Errorf("the run took %v: the push at exit is bounded by 5 s", took)
	}
	var sum summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil || len(sum.Endpoints) != 1 || sum.Endpoints[0].OK != 5 {
		t.Errorf("summary (%v): %s", err, stdout.String())
	}
	if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 ||
		!strings.HasPrefix(lines[0], "tokscope: --otlp: 1 of 1 pushes failed") {
		t.Errorf("stderr %q: want one note about the failed push", stderr.String())
	}
}
