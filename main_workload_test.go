package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tokscope/sim"
)

// workloadSummary is what the workload tests read of the headless JSON.
type workloadSummary struct {
	Endpoints []struct {
		OK           int                `json:"ok"`
		TTFT         map[string]float64 `json:"ttft_ms"`
		PromptTokens map[string]float64 `json:"prompt_tokens"`
		CachedTokens map[string]float64 `json:"cached_tokens"`
		PrefillTPS   map[string]float64 `json:"prefill_tps"`
		E2E          map[string]float64 `json:"e2e_ms"`
		OutputTPS    *float64           `json:"output_tps"`
		Cache        string             `json:"cache"`
		OutputTarget *struct {
			Requests, Reached int
		} `json:"output_target"`
	} `json:"endpoints"`
}

func runWorkload(t *testing.T, args ...string) workloadSummary {
	t.Helper()
	r := runBinary(t, nil, append([]string{"--no-tui", "-o", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("tokscope %q: exit %d, stderr %s", args, r.code, r.stderr)
	}
	var doc workloadSummary
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Endpoints) != 1 {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	return doc
}

// TestCacheBustVersusReuse runs the same synthetic workload against a simulator with a
// prefill rate and a prefix cache, once per cache mode. Under bust no request is served from
// the cache and TTFT holds the whole prompt's prefill; under reuse the warm-up fills the
// cache, every counted request reports its prompt as cached but the last block, and TTFT
// drops to the server's fixed part. The figures are checked against the simulator's own
// schedule: TTFT = 20 ms + uncached prompt tokens / 2000 tok/s.
func TestCacheBustVersusReuse(t *testing.T) {
	const ttft, prefill = 20 * time.Millisecond, 2000.0
	srv, err := sim.Start(sim.Options{}, sim.Profile{
		Name: "p", Model: "m", TTFT: ttft, TokensPerSecond: 1000,
		PrefillTokensPerSecond: prefill, PrefixCache: true, KVCacheTokens: 1 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := []string{"--requests", "5", "--warmup", "1", "-i", "0s", "--input-tokens", "1000", "--output-tokens", "16",
		"-u", srv.BaseURL("p"), "-m", "m"}

	bust := runWorkload(t, append(base, "--cache", "bust")...).Endpoints[0]
	reuse := runWorkload(t, append(base, "--cache", "reuse")...).Endpoints[0]
	t.Logf("bust:  TTFT p50 %.1f ms, prompt %v, cached %v, prefill p50 %.0f tok/s", bust.TTFT["p50"], bust.PromptTokens["p50"],
		bust.CachedTokens, bust.PrefillTPS["p50"])
	t.Logf("reuse: TTFT p50 %.1f ms, prompt %v, cached %v, prefill p50 %.0f tok/s", reuse.TTFT["p50"], reuse.PromptTokens["p50"],
		reuse.CachedTokens, reuse.PrefillTPS["p50"])

	for name, e := range map[string]struct {
		cache        string
		uncachedMost float64 // prompt tokens the cache may leave to prefill
	}{"bust": {"bust", 1e9}, "reuse": {"reuse", 16}} {
		got := bust
		if name == "reuse" {
			got = reuse
		}
		if got.OK != 5 || got.Cache != e.cache || got.OutputTarget == nil || got.OutputTarget.Reached != 5 || got.OutputTPS == nil {
			t.Fatalf("%s: ok %d cache %q target %+v output_tps %v", name, got.OK, got.Cache, got.OutputTarget, got.OutputTPS)
		}
		prompt, cached := got.PromptTokens["max"], got.CachedTokens["min"]
		// The simulator counts words: 1000 cl100k tokens of prose are several hundred.
		if got.PromptTokens["min"] < 500 || prompt > 1000 {
			t.Errorf("%s: prompt tokens %v, want the simulator's count of a 1000-token prompt", name, got.PromptTokens)
		}
		uncached := prompt - cached
		if name == "bust" && got.CachedTokens["max"] != 0 {
			t.Errorf("bust: cached tokens %v, want 0: a unique tag leads every prompt", got.CachedTokens)
		}
		if uncached > e.uncachedMost {
			t.Errorf("%s: %v of %v prompt tokens uncached, want at most %v", name, uncached, prompt, e.uncachedMost)
		}
		// TTFT: the schedule's, plus at most 150 ms of client, loopback and a loaded machine.
		want := float64(ttft.Milliseconds()) + (got.PromptTokens["p50"]-got.CachedTokens["p50"])/prefill*1000
		if p50 := got.TTFT["p50"]; p50 < want-2 || p50 > want+150 {
			t.Errorf("%s: TTFT p50 %.1f ms, the schedule's is %.1f ms", name, p50, want)
		}
		if p := got.PrefillTPS["p50"]; name == "bust" && (p > prefill || p < 0.75*prefill) {
			t.Errorf("bust: prefill p50 %.0f tok/s, want a lower bound close to the server's %v", p, prefill)
		}
		if got.E2E["p50"] <= got.TTFT["p50"] {
			t.Errorf("%s: e2e p50 %v ≤ TTFT p50 %v", name, got.E2E["p50"], got.TTFT["p50"])
		}
	}
	if saved := bust.TTFT["p50"] - reuse.TTFT["p50"]; saved < 0.8*(bust.PromptTokens["p50"]/prefill*1000) {
		t.Errorf("reuse saved %.1f ms of TTFT, want about the prompt's prefill (%.0f ms)", saved, bust.PromptTokens["p50"]/prefill*1000)
	}
}

// TestPromptsFileAgainstSimulator: requests cycle through a prompts file, each entry's
// max_tokens is honoured, and a bad line stops the run before anything is sent.
func TestPromptsFileAgainstSimulator(t *testing.T) {
	t.Parallel()
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "p", Model: "m", TTFT: 5 * time.Millisecond, TokensPerSecond: 2000})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	good := filepath.Join(dir, "p.jsonl")
	os.WriteFile(good, []byte(`{"prompt": "one two three", "max_tokens": 3}
{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "four five"}], "max_tokens": 5}
`), 0o600)
	doc := runWorkload(t, "--requests", "4", "--warmup", "0", "-i", "0s", "--prompts", good, "--cache", "reuse", "-u", srv.BaseURL("p"), "-m", "m")
	// Entries alternate: 3 words + 4, and 2 + 2 + 2 × 4 template tokens.
	if p := doc.Endpoints[0].PromptTokens; p["min"] != 7 || p["max"] != 12 || p["mean"] != 9.5 {
		t.Errorf("prompt tokens %v, want 7 and 12 alternating", p)
	}

	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"prompt\": \"a\"}\n\n{\"prompt\": \"b\", \"max_tokens\": 0}\n"), 0o600)
	r := runBinary(t, nil, "--no-tui", "--requests", "1", "--prompts", bad, "-u", srv.BaseURL("p"), "-m", "m")
	if want := "tokscope: " + bad + `:3: "max_tokens" must be a whole number from 1 to 1048576, got 0` + "\n"; r.code != 2 || r.stderr != want {
		t.Errorf("bad line: exit %d, stderr %q, want %q", r.code, r.stderr, want)
	}
	if n := srv.Requests("p"); n != 4 {
		t.Errorf("the simulator served %d requests, want the 4 of the good run only", n)
	}
}
