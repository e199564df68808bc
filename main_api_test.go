package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"tokscope/sim"
)

// Measured as a new user would, through the binary: one server (the simulator: no real
// llama-server or Ollama can run where the tests run) measured through each of its five APIs
// at once gives the same decode tok/s within a few percent, with no errors, and each
// endpoint's summary says which API it measured.
func TestSameServerSameSpeedThroughEveryAPI(t *testing.T) {
	const tps = 150.0
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "llm", Model: "m", TTFT: 40 * time.Millisecond,
		TokensPerSecond: tps, TokensPerChunk: 1, ReasoningTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	args := []string{"--no-tui", "-o", "json", "--requests", "6", "-i", "0s", "--max-tokens", "48",
		"--api", strings.Join(sim.APIs, ",")}
	for _, api := range sim.APIs {
		args = append(args, "-u", srv.BaseURLFor("llm", api), "-m", "m")
	}
	r := runBinary(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	doc := parseSummary(t, "five APIs", r.stdout)
	if len(doc.Endpoints) != len(sim.APIs) {
		t.Fatalf("%d endpoints, want %d", len(doc.Endpoints), len(sim.APIs))
	}
	rates := map[string]float64{}
	for i, ep := range doc.Endpoints {
		api := sim.APIs[i]
		if ep["api"] != api {
			t.Errorf("endpoint %d (%v): api %v, want %s", i+1, ep["name"], ep["api"], api)
		}
		if fmt.Sprint(ep["errors"]) != "0" || fmt.Sprint(ep["ok"]) != "6" || ep["token_source"] != "usage" {
			t.Errorf("%s: ok %v errors %v (%v), tokens from %v: want 6 ok from usage, no error", api, ep["ok"], ep["errors"], ep["error_kinds"], ep["token_source"])
		}
		v, ok := p50(t, ep, "decode_tps")
		if !ok {
			t.Errorf("%s: no decode tok/s", api)
			continue
		}
		rates[api] = v
	}
	t.Logf("decode tok/s p50 by API (schedule %.0f): %v", tps, rates)
	for api, v := range rates {
		if math.Abs(v-tps) > 0.03*tps {
			t.Errorf("%s: decode %.2f tok/s, the server's schedule is %.0f (±3%%)", api, v, tps)
		}
		for other, w := range rates {
			if math.Abs(v-w) > 0.03*math.Max(v, w) {
				t.Errorf("%s %.2f tok/s and %s %.2f tok/s differ by more than 3%%", api, v, other, w)
			}
		}
	}
}

// An Anthropic endpoint's key goes out as x-api-key with anthropic-version, read from
// ANTHROPIC_API_KEY by default, and never comes back out: not on stdout in any format, not on
// stderr, not in the record or the log, even from a server that echoes it in its error.
func TestAnthropicKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-tokscope-test-9c2e7b1d"
	var mu sync.Mutex
	var seen []http.Header
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := r.Header.Clone()
		h.Set("X-Test-Path", r.Method+" "+r.URL.Path)
		seen = append(seen, h)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		msg, _ := json.Marshal("invalid x-api-key: " + r.Header.Get("X-Api-Key"))
		fmt.Fprintf(w, `{"type":"error","error":{"type":"authentication_error","message":%s}}`, msg)
	}))
	defer echo.Close()
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "ok", Model: "m", TTFT: 10 * time.Millisecond, TokensPerSecond: 500, MaxTokens: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	dir := t.TempDir()
	for _, format := range []string{"json", "csv", "table"} {
		outputs, rec := leakRun(t, []string{"ANTHROPIC_API_KEY=" + key}, format, dir,
			"--api", "anthropic", "-u", srv.BaseURLFor("ok", sim.APIAnthropic), "-m", "m", "-u", echo.URL+"/v1", "-m", "m")
		if !strings.Contains(rec, "http_401") || !strings.Contains(rec, `"api":"anthropic"`) {
			t.Errorf("%s: the record does not hold the anthropic 401 (the test would prove nothing): %s", format, rec)
		}
		checkNoLeak(t, format, outputs, key, key[7:])
	}
	mu.Lock()
	defer mu.Unlock()
	messages := 0
	for _, h := range seen {
		if h.Get("X-Test-Path") != "POST /v1/messages" {
			continue // the server-metrics scrape of the same origin (GET /metrics), which may send it as a bearer token
		}
		messages++
		if h.Get("X-Api-Key") != key || h.Get("Anthropic-Version") != "2023-06-01" || h.Get("Authorization") != "" {
			t.Fatalf("%s: x-api-key set %v, anthropic-version %q, authorization set %v: want the key as x-api-key only",
				h.Get("X-Test-Path"), h.Get("X-Api-Key") == key, h.Get("Anthropic-Version"), h.Get("Authorization") != "")
		}
	}
	if messages == 0 {
		t.Fatal("the echo endpoint saw no Messages request")
	}
}
