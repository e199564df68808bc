package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tokscope/cli/clitest"
)

func TestSLOFlagErrors(t *testing.T) {
	cases := []struct {
		args    []string
		flag    string
		accepts []string
	}{
		{[]string{"--slo", "ttfb=1s"}, "--slo", []string{`unknown objective "ttfb"`}},
		{[]string{"--slo", "ttft"}, "--slo", []string{"key=duration"}},
		{[]string{"--slo", "ttft=fast"}, "--slo", []string{"must be a duration"}},
		{[]string{"--slo", "ttft=0s"}, "--slo", []string{"greater than 0"}},
		{[]string{"--slo", ""}, "--slo", []string{"ttft=500ms"}},
		{[]string{"--slo", "ttft=1s,ttft=2s"}, "--slo", []string{"twice"}},
		{[]string{"--slo", "ttft=1s", "--slo-target", "95"}, "--slo-target", []string{"≤ 1, e.g. 0.95"}},
		{[]string{"--slo", "ttft=1s", "--slo-target", "0"}, "--slo-target", []string{"> 0"}},
		{[]string{"--slo", "ttft=1s", "--slo-target", "most"}, "--slo-target", []string{"e.g. 0.95"}},
		{[]string{"--slo", "ttft=1s", "--slo-target", "NaN"}, "--slo-target", []string{"e.g. 0.95"}},
		{[]string{"--slo", "ttft=1s", "--slo-target", "0.9", "--sweep", "1,2"}, "--slo-target", []string{"exclude each other"}},
		{[]string{"--server-metrics", "sometimes"}, "--server-metrics", []string{"auto, off or an http(s) URL"}},
		{[]string{"--server-metrics", "ftp://h/metrics"}, "--server-metrics", []string{"auto, off or an http(s) URL"}},
		{[]string{"--server-metrics", "http://u:p@h/metrics"}, "--server-metrics", []string{"user:password"}},
	}
	for _, c := range cases {
		oneLineNaming(t, append([]string{"--demo"}, c.args...), c.flag, c.accepts...)
	}
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	if err := os.WriteFile(rec, []byte{}, 0o600); err != nil {
		t.Fatal(err)
	}
	oneLineNaming(t, []string{"--replay", rec, "--server-metrics", "off"}, "--server-metrics", "exclude each other")
	oneLineNaming(t, []string{"--replay", rec, "--slo-target", "0.9"}, "--slo-target", "needs --slo")
	// Objectives come from --slo or the config; a target without any is refused before a
	// request is sent.
	oneLineNaming(t, []string{"--demo", "--no-tui", "--requests", "1", "--slo-target", "0.9"}, "--slo-target", "needs objectives")
}

// --slo-target gates a headless run: exit 3, one line naming the endpoints that missed it,
// after the whole summary; met, the run's own status.
func TestSLOTargetExitStatus(t *testing.T) {
	url := clitest.BusySim(t) // TTFT 5 ms, 20 tokens at 2000 tok/s
	run := func(extra ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		args := append([]string{"--no-tui", "-o", "json", "--requests", "4", "-i", "0s", "--server-metrics", "off", "-u", url, "-m", "m"}, extra...)
		code := Main("", args, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, out, errOut := run("--slo", "ttft=1ms", "--slo-target", "0.5")
	if code != ExitSLO {
		t.Fatalf("exit %d, want %d (no TTFT is under 1 ms); stderr %q", code, ExitSLO, errOut)
	}
	if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "SLO target 0.5 not met") || !strings.Contains(errOut, "0.0% (0 of 4)") {
		t.Errorf("stderr %q", errOut)
	}
	var doc struct {
		Endpoints []struct {
			SLO struct {
				Attainment *float64       `json:"attainment"`
				Goodput    float64        `json:"goodput_rps"`
				Violations map[string]int `json:"violations"`
			} `json:"slo"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("the summary is still printed whole: %v\n%s", err, out)
	}
	if s := doc.Endpoints[0].SLO; s.Attainment == nil || *s.Attainment != 0 || s.Violations["ttft"] != 4 {
		t.Errorf("slo %+v", s)
	}
	code, out, errOut = run("--slo", "ttft=10s,itl=10s", "--slo-target", "1")
	if code != ExitOK || errOut != "" {
		t.Fatalf("met: exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, `"slo":{"attainment":1,`) {
		t.Errorf("summary %s", out)
	}

	// A replay of the run, judged against --slo: the same figures, the same gate.
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	code, live, errOut := run("--record", rec, "--slo", "ttft=6ms,itl=2ms")
	if code != ExitOK {
		t.Fatalf("record: exit %d %s", code, errOut)
	}
	var stdout, stderr bytes.Buffer
	if code := Main("", []string{"replay", rec, "--no-tui", "-o", "json", "--slo", "ttft=6ms,itl=2ms"}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("replay: exit %d, stderr %q", code, stderr.String())
	}
	if a, b := sloOf(t, live), sloOf(t, stdout.String()); a != b || a == "" {
		t.Errorf("the replay's slo %s differs from the live run's %s", b, a)
	}
	stdout.Reset()
	stderr.Reset()
	code = Main("", []string{"replay", rec, "--no-tui", "-o", "json", "--slo", "ttft=1ms", "--slo-target", "0.9"}, &stdout, &stderr)
	if code != ExitSLO || !strings.Contains(stderr.String(), "not met") {
		t.Errorf("replay: exit %d, stderr %q", code, stderr.String())
	}
}

// sloOf is the first endpoint's "slo" object of a JSON summary, as written.
func sloOf(t *testing.T, doc string) string {
	t.Helper()
	var d struct {
		Endpoints []struct {
			SLO json.RawMessage `json:"slo"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil || len(d.Endpoints) == 0 {
		t.Fatalf("%v: %s", err, doc)
	}
	return string(d.Endpoints[0].SLO)
}

// --server-metrics URL: the scraper reads one URL for every endpoint, beside the run, and
// the summary's "server" holds what it read.
func TestServerMetricsInTheSummary(t *testing.T) {
	url := clitest.BusySim(t)
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3
vllm:num_requests_running{engine="0",model_name="other"} 40
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 1
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
`)
	}))
	defer metrics.Close()
	var stdout, stderr bytes.Buffer
	code := Main("", []string{"--no-tui", "-o", "json", "--duration", "1500ms", "-i", "200ms", "--server-metrics", metrics.URL + "/metrics",
		"-u", url, "-m", "m"}, &stdout, &stderr)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var doc struct {
		Endpoints []struct {
			Server *struct {
				Kind    string             `json:"kind"`
				Running map[string]float64 `json:"requests_running"`
				KV      map[string]float64 `json:"kv_cache_usage"`
				Hit     *float64           `json:"prefix_cache_hit_rate"`
			} `json:"server"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Endpoints[0].Server
	if s == nil || s.Kind != "vllm" || s.Running["max"] != 3 || s.KV["p50"] != 0.25 || s.Hit != nil {
		t.Fatalf("server %+v in %s", s, stdout.String())
	}
}
