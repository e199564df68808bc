package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"tokscope/watch"
)

// vllmServer serves the first watch fixture once, then the second (its counters 3456
// generation tokens on).
func vllmServer(t *testing.T) *httptest.Server {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("watch sent %s %s", r.Method, r.URL.Path)
		}
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		file := "vllm-hist-1.txt"
		if n.Add(1) > 1 {
			file = "vllm-hist-2.txt"
		}
		b, err := os.ReadFile(filepath.Join("..", "watch", "testdata", file))
		if err != nil {
			t.Error(err)
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func runWatchArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run("", append([]string{"watch"}, args...), &out, &errb, process{})
	return code, out.String(), errb.String()
}

// TestWatchOnceJSON: --once prints one snapshot after two scrapes: rates over the span
// between them, percentiles marked as estimates, exit 0.
func TestWatchOnceJSON(t *testing.T) {
	srv := vllmServer(t)
	code, out, errOut := runWatchArgs(t, "--once", "-o", "json", "--url", srv.URL+"/v1", "--interval", "200ms")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var snap watch.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(snap.Servers) != 1 {
		t.Fatalf("%d servers", len(snap.Servers))
	}
	r := snap.Servers[0]
	if r.Kind != watch.KindVLLM || r.GenTPS == nil || r.SpanS == nil {
		t.Fatalf("row %+v", r)
	}
	if tokens := *r.GenTPS * *r.SpanS; math.Abs(tokens-3456) > 1e-6 {
		t.Errorf("gen tok/s × span = %v tokens, want 3456", tokens)
	}
	if r.TTFT == nil || !r.TTFT.Estimate || r.TTFT.P50 == nil || math.Abs(*r.TTFT.P50-100) > 1e-9 {
		t.Errorf("ttft %+v", r.TTFT)
	}
	for _, key := range []string{`"kv_cache_usage": 0.625`, `"estimate": true`, `"gpu_power_w": null`} {
		if !strings.Contains(out, key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

// TestWatchOnceTableAndDeadServer: a dead server is a STALE row and exit 1; the other row
// has its figures.
func TestWatchOnceTableAndDeadServer(t *testing.T) {
	srv := vllmServer(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	code, out, _ := runWatchArgs(t, "--once", "-o", "table", "-u", srv.URL, "-u", deadURL, "--interval", "200ms")
	if code != ExitFailed {
		t.Errorf("exit %d, want 1 with a dead server", code)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "SERVER") || !strings.Contains(lines[1], "~100ms") ||
		!strings.Contains(lines[2], "STALE: connection refused") || !strings.Contains(out, "estimates") {
		t.Errorf("table:\n%s", out)
	}
}

// TestWatchDeadServerJSONKeys: the row of a server never reached has every key the live
// row has (docs/watch.md: all but slots, ollama_models and labels), null where unknown:
// kind and model too.
func TestWatchDeadServerJSONKeys(t *testing.T) {
	srv := vllmServer(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	code, out, _ := runWatchArgs(t, "--once", "-o", "json", "-u", srv.URL, "-u", deadURL, "--interval", "200ms")
	if code != ExitFailed {
		t.Errorf("exit %d, want 1 with a dead server", code)
	}
	var snap struct{ Servers []map[string]any }
	if err := json.Unmarshal([]byte(out), &snap); err != nil || len(snap.Servers) != 2 {
		t.Fatalf("%v\n%s", err, out)
	}
	live, gone := snap.Servers[0], snap.Servers[1]
	if live["kind"] != "vllm" || gone["url"] != deadURL {
		t.Fatalf("rows out of order:\n%s", out)
	}
	for key := range live {
		if _, ok := gone[key]; !ok && key != "slots" && key != "ollama_models" && key != "labels" {
			t.Errorf("the dead server's row lacks %q", key)
		}
	}
	for _, key := range []string{"kind", "model", "version", "gen_tps"} {
		if v, ok := gone[key]; !ok || v != nil {
			t.Errorf("dead row %q = %v (present %v), want null", key, v, ok)
		}
	}
}

// TestWatchRecordReplay: --duration with --record keeps the scrapes; --replay shows the
// same figures again.
func TestWatchRecordReplay(t *testing.T) {
	srv := vllmServer(t)
	rec := filepath.Join(t.TempDir(), "watch.jsonl")
	code, out, errOut := runWatchArgs(t, "--duration", "1s", "-o", "json", "-u", srv.URL, "--interval", "200ms", "--record", rec)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, replayed, errOut := runWatchArgs(t, "--replay", rec, "-o", "json")
	if code != ExitOK {
		t.Fatalf("replay exit %d: %s", code, errOut)
	}
	var live, again watch.Snapshot
	json.Unmarshal([]byte(out), &live)
	json.Unmarshal([]byte(replayed), &again)
	// Live spans use the monotonic clock, a record keeps wall-clock times: they agree to the
	// nanoseconds the two clocks drift apart in a second.
	same := func(a, b *float64) bool { return a != nil && b != nil && math.Abs(*a-*b) <= 1e-6*math.Abs(*a) }
	if len(live.Servers) != 1 || len(again.Servers) != 1 || !same(live.Servers[0].GenTPS, again.Servers[0].GenTPS) ||
		!same(live.Servers[0].SpanS, again.Servers[0].SpanS) || !same(live.Servers[0].TTFT.P99, again.Servers[0].TTFT.P99) {
		t.Errorf("live:\n%s\nreplayed:\n%s", out, replayed)
	}
}

func TestWatchUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "targets.yaml")
	os.WriteFile(bad, []byte("- targets: [a:1]\n  lables: {}\n"), 0o600)
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte("[]\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--once", "-u", "x:1"}, "--once needs -o"},
		{[]string{"-o", "csv", "--once", "-u", "x:1"}, `-o "csv"`},
		{[]string{"-o", "json", "-u", "x:1"}, "add --once"},
		{[]string{"--once", "-o", "json", "--sort", "gne", "-u", "x:1"}, `did you mean "gen"`},
		{[]string{"--once", "-o", "json", "--targets", bad}, "targets.yaml:2:3"},
		{[]string{"--once", "-o", "json", "-u", "ftp://x"}, "not an http(s) URL"},
		{[]string{"--replay", filepath.Join(dir, "none.jsonl"), "-o", "json"}, "none.jsonl"},
		{[]string{"--once", "-o", "json", "--targets", empty}, "the targets file lists none"},
	} {
		code, _, errOut := runWatchArgs(t, c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

func TestWatchDispatch(t *testing.T) {
	var out, errb bytes.Buffer
	code := run("", []string{"watch", "-o", "xml", "--once"}, &out, &errb, process{})
	if code != ExitUsage || !strings.Contains(errb.String(), fmt.Sprintf("-o %q", "xml")) {
		t.Errorf("tokscope watch: exit %d, %q", code, errb.String())
	}
}

// TestWatchConfigMode: a config's watch: section gives the targets and the interval;
// `tokscope -c FILE` with only watch: is the watch mode (past the run's own terminal check
// with --no-tui, the watch refuses a pipe for its screen and says how to get a snapshot).
func TestWatchConfigMode(t *testing.T) {
	srv := vllmServer(t)
	cfg := filepath.Join(t.TempDir(), "fleet.yaml")
	os.WriteFile(cfg, []byte("watch:\n  targets: [\""+srv.URL+"\"]\n  interval: 200ms\n"), 0o600)
	code, out, errOut := runWatchArgs(t, "-c", cfg, "--once", "-o", "json")
	var snap watch.Snapshot
	if code != ExitOK || json.Unmarshal([]byte(out), &snap) != nil || len(snap.Servers) != 1 || snap.Servers[0].GenTPS == nil ||
		*snap.Servers[0].SpanS > 1 {
		t.Errorf("exit %d %s\n%s", code, errOut, out)
	}
	var o, e bytes.Buffer
	code = run("", []string{"-c", cfg, "--no-tui", "--duration", "0"}, &o, &e, process{})
	if code != ExitUsage || !strings.Contains(e.String(), "--once -o table|json") {
		t.Errorf("tokscope -c watch-only: exit %d, %q", code, e.String())
	}
}
