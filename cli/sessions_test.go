package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tokscope/cli/clitest"
	"tokscope/sim"
	"tokscope/workload"
)

// TestSessionsFlags: a bad sessions file exits 2 with its JSON path before anything is sent;
// the flags that would fight the trace's own turns are refused beside --sessions; bad values
// of the session settings are usage errors.
func TestSessionsFlags(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(bad, []byte(`{"requests":[{"t":0,"in":100,"out":3},{"t":1,"in":0,"out":3}]}`), 0o600)
	var stdout, stderr bytes.Buffer
	base := []string{"--no-tui", "--requests", "1", "-u", "http://127.0.0.1:9/v1", "-m", "m"}
	code := Main("", append(base, "--sessions", bad), &stdout, &stderr)
	if code != ExitUsage || !strings.Contains(stderr.String(), bad+": requests[1].in: ") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	for _, a := range [][]string{{"--rate", "2"}, {"--turns", "2"}, {"--trace", bad}} {
		stderr.Reset()
		if code := Main("", append(append(base, "--sessions", bad), a...), &stdout, &stderr); code != ExitUsage || !strings.Contains(stderr.String(), "exclude each other") {
			t.Errorf("%v: exit %d, stderr %q", a, code, stderr.String())
		}
	}
	for _, a := range [][]string{{"--tool-time", "fast"}, {"--gap-cap", "-1s"}, {"--sessions-format", "mooncake"}, {"--tool-messages", "xml"}, {"--sessions-scale", "2"}, {"--session-start", "middle"}} {
		stderr.Reset()
		if code := Main("", append(base, a...), &stdout, &stderr); code != ExitUsage || !strings.Contains(stderr.String(), a[0]) {
			t.Errorf("%v: exit %d, stderr %q", a, code, stderr.String())
		}
	}
}

// TestSessionsRun: a published AgentX trace replayed headless against the simulator: its
// turns counted by --requests, the "sessions" object of the JSON summary with ideal and
// served hit rates, and the record's session keys.
func TestSessionsRun(t *testing.T) {
	url := clitest.BusySim(t)
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	var stdout, stderr bytes.Buffer
	code := Main("", []string{"--no-tui", "-o", "json", "--server-metrics", "off", "-u", url, "-m", "m", "--warmup", "0",
		"--sessions", "../workload/testdata/sessions/agentx_trace_0026.json", "--sessions-scale", "0.01",
		"--tool-time", "none", "--requests", "3", "--record", rec}, &stdout, &stderr)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	var sum struct {
		Endpoints []struct {
			Requests int `json:"requests"`
			Sessions *struct {
				Turns     int      `json:"turns"`
				Completed int      `json:"completed"`
				Ideal     *float64 `json:"ideal_hit_rate"`
				Served    *float64 `json:"served_hit_rate"`
			} `json:"sessions"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	e := sum.Endpoints[0]
	if e.Requests != 3 || e.Sessions == nil || e.Sessions.Turns != 3 || e.Sessions.Completed != 1 || e.Sessions.Ideal == nil || *e.Sessions.Ideal <= 0 {
		t.Fatalf("summary: %s", stdout.String())
	}
	raw, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var last map[string]any
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	for _, k := range []string{"session", "parent", "depth", "turn", "gap_ms", "blocks", "ideal_cached", "session_root", "session_turns", "offline_prompt_tokens"} {
		if _, ok := last[k]; !ok {
			t.Errorf("the record lacks %q: %s", k, lines[len(lines)-1])
		}
	}
}

// Served cache hits: read from usage where the server reports cached tokens; Ollama's done
// line counts the whole prompt in prompt_eval_count, cached or not (as Ollama 0.17.4 does),
// so an Ollama endpoint's served hit rate is null beside its ideal, never 0.
func TestSessionsServedHitsPerAPI(t *testing.T) {
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "c", Model: "m", TTFT: 2 * time.Millisecond, TokensPerSecond: 4000,
		PrefixCache: true, Tokenizer: sim.TokenizerCl100k})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	for _, api := range []string{"chat", "ollama"} {
		var stdout, stderr bytes.Buffer
		code := Main("", []string{"--no-tui", "-o", "json", "--server-metrics", "off", "-u", srv.BaseURLFor("c", api), "-m", "m",
			"--api", api, "--warmup", "0", "--sessions", "../workload/testdata/sessions/agentx_trace_0026.json",
			"--sessions-scale", "0.01", "--tool-time", "none", "--requests", "3"}, &stdout, &stderr)
		if code != ExitOK {
			t.Fatalf("%s: exit %d, stderr %q", api, code, stderr.String())
		}
		var sum struct {
			Endpoints []struct {
				Sessions struct {
					Ideal  *float64 `json:"ideal_hit_rate"`
					Served *float64 `json:"served_hit_rate"`
				} `json:"sessions"`
			} `json:"endpoints"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
			t.Fatal(err)
		}
		s := sum.Endpoints[0].Sessions
		if s.Ideal == nil || *s.Ideal <= 0.5 {
			t.Fatalf("%s: ideal hit rate %v, want above 0.5: %s", api, s.Ideal, stdout.String())
		}
		switch {
		case api == "ollama" && s.Served != nil:
			t.Errorf("ollama: served hit rate %v, want null (prompt_eval_count says nothing of the cache)", *s.Served)
		case api == "chat" && (s.Served == nil || *s.Served <= 0.5 || *s.Served > *s.Ideal):
			t.Errorf("chat: served hit rate %v beside ideal %v, want above 0.5 and not above the ideal", s.Served, *s.Ideal)
		}
	}
}

// A pool whose files mix formats names each with its number of sessions; a pool of one
// format names it alone.
func TestPoolFormats(t *testing.T) {
	for spec, want := range map[string]string{
		"../workload/testdata/sessions/":                           "sessions by format: aa 1, agentx 2, tracelab 2",
		"../workload/testdata/sessions/tracelab_round_trace.jsonl": "tracelab",
	} {
		pool, err := workload.LoadSessions(spec, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := poolFormats(pool); got != want {
			t.Errorf("%s: %q, want %q", spec, got, want)
		}
	}
}
