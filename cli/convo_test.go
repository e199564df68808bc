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
	"testing"
	"time"

	"tokscope/cli/clitest"
	"tokscope/sim"
)

// TestTurnsRun: --turns 3 against a simulator with a prefix cache: the JSON's "turns" and a
// cache-hit rate above zero, the record's conversation and turn, and a replay that gives the
// same figures.
func TestTurnsRun(t *testing.T) {
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "cv", Model: "m", TTFT: 5 * time.Millisecond,
		TokensPerSecond: 2000, MaxTokens: 12, PrefixCache: true, PrefillTokensPerSecond: 20000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	var stdout, stderr bytes.Buffer
	args := []string{"--no-tui", "-o", "json", "--requests", "6", "-n", "2", "-i", "0s", "--server-metrics", "off",
		"-u", srv.BaseURL("cv"), "-m", "m", "--turns", "3", "--think-time", "1ms-5ms", "--input-tokens", "40",
		"--shared-prefix", "64", "--max-tokens", "12", "--record", rec}
	if code := Main("", args, &stdout, &stderr); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	type figures struct {
		Requests     int                                          `json:"requests"`
		CacheHitRate *float64                                     `json:"cache_hit_rate"`
		Turns        map[string]map[string]*struct{ P50 float64 } `json:"turns"`
	}
	var live struct{ Endpoints []figures }
	if err := json.Unmarshal(stdout.Bytes(), &live); err != nil {
		t.Fatal(err)
	}
	e := live.Endpoints[0]
	if e.Requests != 6 || e.CacheHitRate == nil || *e.CacheHitRate <= 0.3 {
		t.Fatalf("requests %d, cache hit rate %v: %s", e.Requests, e.CacheHitRate, stdout.String())
	}
	first, later := e.Turns["first"]["prompt_tokens"], e.Turns["later"]["prompt_tokens"]
	if first == nil || later == nil || later.P50 <= first.P50 || e.Turns["later"]["ttft_ms"] == nil {
		t.Errorf("turns %+v", e.Turns)
	}
	turns := map[int]int{}
	for _, r := range clitest.WholeRecords(t, rec) {
		if !r.Warmup {
			turns[r.Turn]++
			if r.Conversation == 0 {
				t.Errorf("record without its conversation: %+v", r.Seq)
			}
		}
	}
	if turns[1] != 2 || turns[2] != 2 || turns[3] != 2 {
		t.Errorf("records by turn %v", turns)
	}
	stdout.Reset()
	if code := Main("", []string{"replay", rec, "--no-tui", "-o", "json"}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("replay: exit %d %s", code, stderr.String())
	}
	var replay struct{ Endpoints []json.RawMessage }
	var liveRaw struct{ Endpoints []json.RawMessage }
	_ = json.Unmarshal(stdout.Bytes(), &replay)
	_ = json.Unmarshal(mustJSON(t, live), &liveRaw)
	var r figures
	_ = json.Unmarshal(replay.Endpoints[0], &r)
	if string(mustJSON(t, r)) != string(mustJSON(t, e)) {
		t.Errorf("replay %s, live %s", mustJSON(t, r), mustJSON(t, e))
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTraceFlags: a bad trace line exits 2 naming file:line before anything is sent, and the
// flags that pace requests otherwise are refused beside --trace.
func TestTraceFlags(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "t.jsonl")
	os.WriteFile(bad, []byte("{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 3}\n{\"timestamp\": 1, \"input_length\": 100}\n"), 0o600)
	var stdout, stderr bytes.Buffer
	code := Main("", []string{"--no-tui", "-u", "http://127.0.0.1:9/v1", "-m", "m", "--trace", bad}, &stdout, &stderr)
	if code != ExitUsage || !strings.Contains(stderr.String(), bad+":2: ") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	for _, extra := range [][]string{{"--rate", "2"}, {"--turns", "2"}} {
		stderr.Reset()
		args := append([]string{"--no-tui", "-u", "http://127.0.0.1:9/v1", "-m", "m", "--trace", bad}, extra...)
		if code := Main("", args, &stdout, &stderr); code != ExitUsage || !strings.Contains(stderr.String(), "exclude each other") {
			t.Errorf("%v: exit %d, stderr %q", extra, code, stderr.String())
		}
	}
	for _, a := range [][]string{{"--turns", "0"}, {"--think-time", "3s-1s"}, {"--shared-prefix", "-2"}, {"--trace-speedup", "0"}} {
		stderr.Reset()
		args := append([]string{"--no-tui", "-u", "http://127.0.0.1:9/v1", "-m", "m"}, a...)
		if code := Main("", args, &stdout, &stderr); code != ExitUsage || !strings.Contains(stderr.String(), a[0]) {
			t.Errorf("%v: exit %d, stderr %q", a, code, stderr.String())
		}
	}
}

// TestTraceRun: a trace replayed headless: its requests, its lengths, the open loop's queue.
func TestTraceRun(t *testing.T) {
	url := clitest.BusySim(t)
	path := filepath.Join(t.TempDir(), "t.jsonl")
	lines := "{\"timestamp\": 0, \"input_length\": 700, \"output_length\": 3, \"hash_ids\": [1, 2]}\n" +
		"{\"timestamp\": 300, \"input_length\": 650, \"output_length\": 4, \"hash_ids\": [1, 3]}\n" +
		"{\"timestamp\": 600, \"input_length\": 90, \"output_length\": 5, \"hash_ids\": [9]}\n"
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := Main("", []string{"--no-tui", "-o", "json", "--server-metrics", "off", "-u", url, "-m", "m",
		"--trace", path, "--trace-speedup", "3"}, &stdout, &stderr)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("the trace's 600 ms at 3× took %v", took)
	}
	out := stdout.String()
	if !strings.Contains(out, `"requests":3,`) || !strings.Contains(out, `"arrivals":3`) || !strings.Contains(out, `"output_len":{"p50":4,`) {
		t.Errorf("summary %s", out)
	}
}

// TestTurnsLlamaCppUsage: a server answering each turn with the usage a real llama-server
// b10470 gave for the three turns of one conversation (fixtures/servers/llamacpp-b10470/
// streams/multiturn-cache.json: 66, 143, 218 prompt tokens, 14, 72, 144 cached) gives the
// cache-hit rate 230/427 and first/later prompt tokens 66 and 143–218, turn picked by how
// many replies the request carried.
func TestTurnsLlamaCppUsage(t *testing.T) {
	// A copy of the capture (shared/fixtures/servers/llamacpp-b10470/streams/multiturn-cache.json).
	raw, err := os.ReadFile("testdata/llamacpp-b10470-multiturn-cache.json")
	if err != nil {
		t.Fatalf("the capture: %v", err)
	}
	var turns []struct {
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(raw, &turns); err != nil || len(turns) != 3 {
		t.Fatalf("capture: %v (%d turns)", err, len(turns))
	}
	for i := range turns { // one SSE data line each
		var b bytes.Buffer
		if err := json.Compact(&b, turns[i].Usage); err != nil {
			t.Fatal(err)
		}
		turns[i].Usage = b.Bytes()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct{ Role string } `json:"messages"`
		}
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body)
		k := 0
		for _, m := range body.Messages {
			if m.Role == "assistant" {
				k++
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" reply %d\"},\"finish_reason\":null}]}\n\n", k)
		fmt.Fprintf(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprintf(w, "data: {\"id\":\"x\",\"choices\":[],\"usage\":%s}\n\ndata: [DONE]\n\n", turns[min(k, 2)].Usage)
	}))
	t.Cleanup(srv.Close)
	var stdout, stderr bytes.Buffer
	args := []string{"--no-tui", "-o", "json", "--requests", "3", "--warmup", "0", "-i", "0s", "--server-metrics", "off",
		"-u", srv.URL + "/v1", "-m", "m", "--turns", "3", "-p", "Tell me about caches."}
	if code := Main("", args, &stdout, &stderr); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	var doc struct {
		Endpoints []struct {
			CacheHitRate *float64                                               `json:"cache_hit_rate"`
			Turns        map[string]map[string]*struct{ P50, Min, Max float64 } `json:"turns"`
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	e := doc.Endpoints[0]
	if e.CacheHitRate == nil || *e.CacheHitRate != 0.539 { // 230/427, rounded to 3 decimals
		t.Errorf("cache_hit_rate %v, want 0.539", e.CacheHitRate)
	}
	if f, l := e.Turns["first"]["prompt_tokens"], e.Turns["later"]["prompt_tokens"]; f == nil || l == nil || f.P50 != 66 || l.Min != 143 || l.Max != 218 {
		t.Errorf("prompt tokens first %+v later %+v", f, l)
	}
}
