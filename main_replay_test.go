package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"tokscope/cli"
	"tokscope/sim"
)

type summaryDoc struct {
	Endpoints  []map[string]any `json:"endpoints"`
	TTFTFrom   string           `json:"ttft_from"`
	HeadToHead []map[string]any `json:"head_to_head"`
}

func parseSummary(t *testing.T, what, stdout string) summaryDoc {
	t.Helper()
	var doc summaryDoc
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || dec.More() {
		t.Fatalf("%s: stdout is not one JSON document (%v):\n%s", what, err, stdout)
	}
	return doc
}

// p50 is the p50 of distribution key; ok is false when it is null.
func p50(t *testing.T, ep map[string]any, key string) (float64, bool) {
	t.Helper()
	if ep[key] == nil {
		return 0, false
	}
	d, ok := ep[key].(map[string]any)
	if !ok {
		t.Fatalf("endpoint %v: %s is %v", ep["name"], key, ep[key])
	}
	v, err := d["p50"].(json.Number).Float64()
	if err != nil {
		t.Fatal(err)
	}
	return v, true
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// byName indexes a summary's endpoints: a replay lists them in order of first appearance in
// the record, which is the order requests finished, not the configuration order.
func byName(doc summaryDoc) map[string]map[string]any {
	m := map[string]map[string]any{}
	for _, ep := range doc.Endpoints {
		m[ep["name"].(string)] = ep
	}
	return m
}

// recordDemo records a short headless run against the built-in simulator and returns the
// record file and the live run's result. The run is recorded once for the tests that read it
// (each used to record its own: 5-10 s of demo on a loaded machine); they only read the file.
func recordDemo(t *testing.T) (string, result) {
	t.Helper()
	demoRecord.Lock()
	defer demoRecord.Unlock()
	if demoRecord.path == "" {
		record := filepath.Join(binDir, "demo-run.jsonl")
		live := runBinary(t, nil, "--demo", "--no-tui", "--requests", "3", "--max-tokens", "32", "-i", "0s",
			"--record", record, "-o", "json")
		if live.code != 0 && live.code != 1 { // flaky-cloud may fail a request: exit 1
			t.Fatalf("live run: exit %d, stderr %s", live.code, live.stderr)
		}
		demoRecord.path, demoRecord.live = record, live
	}
	return demoRecord.path, demoRecord.live
}

// demoRecord is recordDemo's run, once recorded.
var demoRecord struct {
	sync.Mutex
	path string
	live result
}

// A replayed record summarises as the live run did: the same endpoints in the same order,
// the same counts, the same figures (the record keeps every instant to the microsecond, the
// summary rounds to the microsecond), and the same exit status.
func TestReplayReproducesLiveRun(t *testing.T) {
	t.Parallel()
	record, live := recordDemo(t)
	liveDoc := parseSummary(t, "live", live.stdout)

	replay := runBinary(t, nil, "replay", record, "--no-tui", "-o", "json")
	if replay.code != live.code {
		t.Errorf("replay exit %d, live exit %d; stderr %s", replay.code, live.code, replay.stderr)
	}
	if replay.stderr != "" {
		t.Errorf("replay of a complete file wrote to stderr: %s", replay.stderr)
	}
	doc := parseSummary(t, "replay", replay.stdout)
	if len(doc.Endpoints) != len(liveDoc.Endpoints) || len(doc.Endpoints) != 4 {
		t.Fatalf("replay has %d endpoints, live %d", len(doc.Endpoints), len(liveDoc.Endpoints))
	}
	// The demo's reasoner speaks Anthropic Messages: the replay says so from the records.
	if api := byName(doc)["reasoner"]["api"]; api != "anthropic" {
		t.Errorf("replayed reasoner's api %v, want anthropic (the others' are compared below)", api)
	}
	// Every figure of every endpoint, exactly as the live run printed it (89.049 live and
	// 89.05 replayed was a bug: the record and the Runner round instants alike now). Only what
	// a record does not keep differs: the URL. The server's own scraped metrics are in the
	// record (one line per scrape) and replay as the live run showed them.
	liveEps := byName(liveDoc)
	scraped := 0
	for _, ep := range doc.Endpoints {
		want, ok := liveEps[ep["name"].(string)]
		if !ok {
			t.Errorf("replayed endpoint %v is not in the live run", ep["name"])
			continue
		}
		if want["server"] != nil {
			scraped++
		}
		for k, v := range want {
			if k == "base_url" {
				continue
			}
			if got, _ := json.Marshal(ep[k]); string(got) != mustJSON(t, v) {
				t.Errorf("%v: %s = %s, live %s", ep["name"], k, got, mustJSON(t, v))
			}
		}
		if len(ep) != len(want) {
			t.Errorf("%v: %d keys replayed, %d live", ep["name"], len(ep), len(want))
		}
	}
	// The server's own clock (slow-cpu sends llama.cpp timings) is in the record and replays.
	if st, _ := liveEps["slow-cpu"]["server_timing"].(map[string]any); st == nil || st["source"] != "llamacpp" {
		t.Errorf("slow-cpu's server_timing %v, want llama.cpp's: the test compares nothing of it", liveEps["slow-cpu"]["server_timing"])
	}
	if scraped < 3 { // the simulator's three vllm endpoints answer /metrics (flaky-cloud does not)
		t.Errorf("the live run scraped %d endpoints' servers, want 3: the test compares nothing", scraped)
	}
	// The head-to-head rows too, matched by endpoint and metric (a replay orders endpoints by
	// their first record).
	key := func(r map[string]any) string { return r["endpoint"].(string) + " " + r["metric"].(string) }
	liveRows := map[string]string{}
	for _, r := range liveDoc.HeadToHead {
		liveRows[key(r)] = mustJSON(t, r)
	}
	if len(doc.HeadToHead) == 0 || len(doc.HeadToHead) != len(liveDoc.HeadToHead) {
		t.Errorf("head_to_head: replay %d rows, live %d", len(doc.HeadToHead), len(liveDoc.HeadToHead))
	}
	for _, r := range doc.HeadToHead {
		if got := mustJSON(t, r); got != liveRows[key(r)] {
			t.Errorf("head_to_head %s: replay %s, live %s", key(r), got, liveRows[key(r)])
		}
	}
	if doc.TTFTFrom != "" {
		t.Errorf("ttft_from %q in a default run", doc.TTFTFrom)
	}

	// The other formats work on a replay too.
	for _, format := range []string{"csv", "table"} {
		r := runBinary(t, nil, "replay", record, "--no-tui", "-o", format)
		if r.code != live.code || !strings.Contains(r.stdout, "fast-gpu") {
			t.Errorf("%s: exit %d, stdout %s, stderr %s", format, r.code, r.stdout, r.stderr)
		}
	}
}

// --ttft-from first-event measures TTFT to the first SSE event, which never comes after the
// first token; decode tok/s keeps first_token as its start and does not change.
func TestReplayTTFTFrom(t *testing.T) {
	t.Parallel()
	record, _ := recordDemo(t)
	token := parseSummary(t, "first-token", runBinary(t, nil, "replay", record, "--no-tui", "-o", "json").stdout)
	r := runBinary(t, nil, "replay", record, "--no-tui", "-o", "json", "--ttft-from", "first-event")
	event := parseSummary(t, "first-event", r.stdout)
	if event.TTFTFrom != "first-event" {
		t.Errorf("ttft_from = %q", event.TTFTFrom)
	}
	stricter := false
	tokenEps := byName(token)
	for _, ep := range event.Endpoints {
		if ep["ok"] == json.Number("0") {
			continue
		}
		other := tokenEps[ep["name"].(string)]
		te, _ := p50(t, ep, "ttft_ms")
		tt, _ := p50(t, other, "ttft_ms")
		if te > tt {
			t.Errorf("%v: first-event TTFT p50 %v > first-token %v", ep["name"], te, tt)
		}
		if te < tt {
			stricter = true
		}
		d, _ := p50(t, ep, "decode_tps")
		w, _ := p50(t, other, "decode_tps")
		if d != w {
			t.Errorf("%v: decode p50 %v changed with the TTFT definition (%v)", ep["name"], d, w)
		}
	}
	if !stricter {
		t.Error("no endpoint's TTFT moved: the role-only first chunks of the demo should make first-event earlier")
	}
	// first-answer is never before the first token, and equals TTFA.
	answer := parseSummary(t, "first-answer", runBinary(t, nil, "replay", record, "--no-tui", "-o", "json", "--ttft-from", "first-answer").stdout)
	for _, ep := range answer.Endpoints {
		ta, aok := p50(t, ep, "ttft_ms")
		tt, tok := p50(t, tokenEps[ep["name"].(string)], "ttft_ms")
		tfa, fok := p50(t, ep, "ttfa_ms")
		if aok && tok && ta < tt || aok != fok || ta != tfa {
			t.Errorf("%v: first-answer TTFT %v (%v), first-token %v, TTFA %v (%v)", ep["name"], ta, aok, tt, tfa, fok)
		}
	}
}

// A run killed mid-write leaves a torn last line: the replay uses the records before it and
// warns on stderr; stdout stays one JSON document.
func TestReplayTruncatedRecord(t *testing.T) {
	t.Parallel()
	record, _ := recordDemo(t)
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	torn := filepath.Join(t.TempDir(), "torn.jsonl")
	last := lines[len(lines)-1]
	os.WriteFile(torn, []byte(strings.Join(lines[:len(lines)-1], "\n")+"\n"+last[:len(last)/2]), 0o600)

	r := runBinary(t, nil, "replay", torn, "--no-tui", "-o", "json")
	if r.code == cli.ExitUsage {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "warning") || !strings.Contains(r.stderr, "truncated") || !strings.Contains(r.stderr, "line ") {
		t.Errorf("stderr does not warn about the torn line: %q", r.stderr)
	}
	doc := parseSummary(t, "torn", r.stdout)
	total := 0
	for _, ep := range doc.Endpoints {
		n, _ := ep["requests"].(json.Number).Int64()
		total += int(n)
	}
	full := parseSummary(t, "full", runBinary(t, nil, "replay", record, "--no-tui", "-o", "json").stdout)
	fullTotal := 0
	for _, ep := range full.Endpoints {
		n, _ := ep["requests"].(json.Number).Int64()
		fullTotal += int(n)
	}
	if total != fullTotal-1 {
		t.Errorf("torn file: %d requests, want %d (all but the torn last one)", total, fullTotal-1)
	}
}

func TestReplayUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o600)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"endpoint\":\"a\"}\nnot json\n{\"endpoint\":\"a\"}\n"), 0o600)
	for _, c := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"missing file", []string{"replay", filepath.Join(dir, "nope.jsonl"), "--no-tui"}, "nope.jsonl"},
		{"empty file", []string{"replay", empty, "--no-tui"}, "no records"},
		{"bad line", []string{"replay", bad, "--no-tui"}, "line 2"},
		{"no file", []string{"replay", "--no-tui"}, "replay needs FILE…"},
		{"with demo", []string{"replay", empty, "--demo"}, "unknown flag: --demo"},
		// The old spelling checks what it excludes.
		{"old spelling with demo", []string{"--replay", empty, "--demo"}, "--replay and --demo exclude each other"},
		{"old spelling with record", []string{"--replay", empty, "--record", filepath.Join(dir, "x")}, "--record"},
		{"bad ttft-from", []string{"--demo", "--no-tui", "--requests", "1", "--ttft-from", "first-byte"}, "--ttft-from"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runBinary(t, nil, c.args...)
			if r.code != cli.ExitUsage || !strings.Contains(r.stderr, c.stderr) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, c.stderr)
			}
		})
	}
}

// --ttft-from applies to a live run too: the role-only first chunk comes right after the
// headers here, 60 ms before the first token.
func TestLiveTTFTFrom(t *testing.T) {
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "a", Model: "m", TTFT: 60 * time.Millisecond,
		TokensPerSecond: 500, TokensPerChunk: 1, MaxTokens: 10, RoleChunk: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	args := []string{"--no-tui", "-o", "json", "--requests", "2", "-i", "0s", "-u", srv.BaseURL("a"), "-m", "m"}
	token := parseSummary(t, "first-token", runBinary(t, nil, args...).stdout)
	r := runBinary(t, nil, append(args, "--ttft-from", "first-event")...)
	event := parseSummary(t, "first-event", r.stdout)
	if r.code != 0 || event.TTFTFrom != "first-event" {
		t.Fatalf("exit %d, ttft_from %q, stderr %s", r.code, event.TTFTFrom, r.stderr)
	}
	te, _ := p50(t, event.Endpoints[0], "ttft_ms")
	tt, _ := p50(t, token.Endpoints[0], "ttft_ms")
	if !(te < tt) {
		t.Errorf("first-event TTFT p50 %v, first-token %v: want it earlier", te, tt)
	}
}

// The time spent backing off after 429s is in the record (backoff_ms of the 429 that started
// it), so a replay's table shows the live run's "backed off" total.
func TestReplayKeepsBackoff(t *testing.T) {
	t.Parallel()
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "limited", Model: "m", TTFT: 5 * time.Millisecond,
		TokensPerSecond: 1000, TokensPerChunk: 1, MaxTokens: 8, Rate429: 0.4, RetryAfter: time.Second, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	record := filepath.Join(t.TempDir(), "run.jsonl")
	live := runBinary(t, nil, "--no-tui", "-o", "table", "--requests", "6", "-i", "0s", "--warmup", "0",
		"--record", record, "-u", srv.BaseURL("limited"), "-m", "m")
	backedOff := func(table string) string {
		for _, line := range strings.Split(table, "\n") {
			if strings.Contains(line, "backed off") {
				return strings.TrimSpace(line)
			}
		}
		return ""
	}
	want := backedOff(live.stdout)
	if want == "" {
		t.Fatalf("the live run did not back off (exit %d):\n%s\n%s", live.code, live.stdout, live.stderr)
	}
	replay := runBinary(t, nil, "replay", record, "--no-tui", "-o", "table")
	if got := backedOff(replay.stdout); got != want {
		t.Errorf("replay: %q, live: %q", got, want)
	}
}
