package watch

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// instantOf parses an exposition file as one good scrape of target key at at.
func instantOf(t *testing.T, key, file string, at time.Time) Instant {
	t.Helper()
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return instantOfText(t, key, string(body), at)
}

func instantOfText(t *testing.T, key, body string, at time.Time) Instant {
	t.Helper()
	fams, err := parseExposition([]byte(body), "text/plain; version=0.0.4")
	if err != nil {
		t.Fatal(err)
	}
	k, ok := detectKind(fams)
	if !ok {
		t.Fatalf("not recognised")
	}
	return Instant{Target: key, At: at, Kind: k, Models: extractModels(fams, k)}
}

func oneTargetFleet(t *testing.T, window time.Duration) (*Fleet, Target) {
	t.Helper()
	tg, err := NewTarget("http://127.0.0.1:8000/v1", "url")
	if err != nil {
		t.Fatal(err)
	}
	f := NewFleet(window)
	f.SetTargets([]Target{tg})
	return f, tg
}

func near(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = null, want %v", what, want)
		return
	}
	if math.Abs(*got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", what, *got, want)
	}
}

// TestVLLMHistogramsMoveByKnownCounts: two scrapes 10 s apart of a vLLM exposition whose
// counters and buckets moved by known amounts (testdata/gen_vllm_hist.py); every figure is
// what the numbers say, the percentiles what linear interpolation within the bucket gives.
func TestVLLMHistogramsMoveByKnownCounts(t *testing.T) {
	f, tg := oneTargetFleet(t, 10*time.Second)
	f.Observe(instantOf(t, tg.Key(), "testdata/vllm-hist-1.txt", t0))
	f.Observe(instantOf(t, tg.Key(), "testdata/vllm-hist-2.txt", t0.Add(10*time.Second)))
	rows := f.Rows(t0.Add(10 * time.Second))
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	near(t, "running", r.Running, 8)
	near(t, "waiting", r.Waiting, 5)
	near(t, "kv", r.KVCacheUsage, 0.625)
	near(t, "gen tok/s", r.GenTPS, 3456.0/10)
	near(t, "prompt tok/s", r.PromptTPS, 3000.0/10)
	near(t, "prefix hit rate", r.PrefixHitRate, 1500.0/2000)
	near(t, "preemptions", r.Preemptions, 3)
	near(t, "spec acceptance", r.SpecAcceptance, 450.0/600)
	near(t, "span", r.SpanS, 10)
	// TTFT: 40 new: 4 in (0.06,0.08], 16 in (0.08,0.1], 20 in (0.1,0.25].
	// p50: rank 20 ends the 0.1 bucket exactly: 0.08 + 0.02·16/16 = 100 ms.
	// p99: rank 39.6, 19.6 of 20 into (0.1,0.25]: 0.1 + 0.15·0.98 = 247 ms.
	checkQ(t, "ttft", r.TTFT, 40, 100, 247)
	// ITL: 1000 new: 200 ≤ 0.01, 600 in (0.01,0.025], 200 in (0.025,0.05].
	checkQ(t, "itl", r.ITL, 1000, 10+15*300.0/600, 25+25*190.0/200)
	// Queue: 40 new, all ≤ 0.3: the lowest bucket interpolates from 0.
	checkQ(t, "queue", r.Queue, 40, 300*20.0/40, 300*39.6/40)
	// E2E: 10 in (1.5,2], 30 in (2,2.5].
	checkQ(t, "e2e", r.E2E, 40, 2000+500*10.0/30, 2000+500*29.6/30)
	if len(r.Badges) != 0 {
		t.Errorf("badges %v, want none", r.Badges)
	}
	if r.GPUPowerW != nil || r.TokensPerJoule != nil {
		t.Error("GPU figures without a GPU exporter")
	}
}

func checkQ(t *testing.T, what string, q *Quantiles, count, p50, p99 float64) {
	t.Helper()
	if q == nil {
		t.Errorf("%s: null", what)
		return
	}
	if q.Count != count || !q.Estimate {
		t.Errorf("%s: count %v estimate %v, want %v true", what, q.Count, q.Estimate, count)
	}
	near(t, what+" p50", q.P50, p50)
	near(t, what+" p99", q.P99, p99)
}

// TestResetShowsRestarted: a server whose counters begin again shows RESTARTED and never a
// negative rate; after the reset the window starts over from the new counters.
func TestResetShowsRestarted(t *testing.T) {
	f, tg := oneTargetFleet(t, 10*time.Second)
	f.Observe(instantOf(t, tg.Key(), "testdata/vllm-hist-2.txt", t0))
	f.Observe(instantOf(t, tg.Key(), "testdata/vllm-hist-1.txt", t0.Add(time.Second))) // every counter lower
	r := f.Rows(t0.Add(time.Second))[0]
	if !contains(r.Badges, BadgeRestarted) {
		t.Errorf("badges %v, want RESTARTED", r.Badges)
	}
	if r.GenTPS != nil || r.TTFT != nil {
		t.Errorf("rates right after a restart: gen %v ttft %v; want none until a second scrape", r.GenTPS, r.TTFT)
	}
	f.Observe(instantOf(t, tg.Key(), "testdata/vllm-hist-2.txt", t0.Add(3*time.Second)))
	r = f.Rows(t0.Add(3 * time.Second))[0]
	near(t, "gen tok/s after the restart", r.GenTPS, 3456.0/2)
	if !contains(r.Badges, BadgeRestarted) {
		t.Error("RESTARTED gone 2 s after the restart")
	}
	if r := f.Rows(t0.Add(time.Minute))[0]; contains(r.Badges, BadgeRestarted) {
		t.Error("RESTARTED still shown a minute later")
	}
}

// TestWindowSpan: rates cover at most the window, from the oldest scrape inside it.
func TestWindowSpan(t *testing.T) {
	f, tg := oneTargetFleet(t, 2*time.Second)
	body, _ := os.ReadFile("testdata/vllm-hist-1.txt")
	for i := 0; i <= 5; i++ { // generation counter +100 a second
		text := strings.Replace(string(body), `generation_tokens_total{engine="0",model_name="Qwen/Qwen2.5-0.5B-Instruct"} 120000.0`,
			`generation_tokens_total{engine="0",model_name="Qwen/Qwen2.5-0.5B-Instruct"} `+ftoa(120000+100*float64(i*i)), 1)
		f.Observe(instantOfText(t, tg.Key(), text, t0.Add(time.Duration(i)*time.Second)))
	}
	r := f.Rows(t0.Add(5 * time.Second))[0]
	near(t, "span", r.SpanS, 2)
	near(t, "gen tok/s over the last 2 s", r.GenTPS, 100*(25-9)/2.0)
	sum := f.Summary(t0.Add(5 * time.Second))[0]
	near(t, "whole-run span", sum.SpanS, 5)
	near(t, "whole-run gen tok/s", sum.GenTPS, 100*25/5.0)
}

func ftoa(v float64) string { b, _ := json.Marshal(v); return string(b) }

// TestStaleKeepsLastError: a failed scrape marks the server STALE with its error; the
// figures of its last good scrape stay, and a good scrape clears the badge.
func TestStaleKeepsLastError(t *testing.T) {
	f, tg := oneTargetFleet(t, 10*time.Second)
	f.Observe(instantOf(t, tg.Key(), "testdata/vllm-hist-1.txt", t0))
	f.Observe(Instant{Target: tg.Key(), At: t0.Add(time.Second), Error: "answered HTML, not Prometheus metrics"})
	r := f.Rows(t0.Add(time.Second))[0]
	if !contains(r.Badges, BadgeStale) || r.LastError == nil || *r.LastError != "answered HTML, not Prometheus metrics" {
		t.Errorf("badges %v error %v", r.Badges, r.LastError)
	}
	near(t, "running (last known)", r.Running, 3)
	f.Observe(instantOf(t, tg.Key(), "testdata/vllm-hist-2.txt", t0.Add(2*time.Second)))
	if r := f.Rows(t0.Add(2 * time.Second))[0]; len(r.Badges) != 0 || r.LastError != nil {
		t.Errorf("after a good scrape: badges %v error %v", r.Badges, r.LastError)
	}
}

// TestSGLangCapture: the SGLang v0.5.10 capture (servermetrics/testdata), then the same with
// its counters and TTFT buckets moved by known amounts.
func TestSGLangCapture(t *testing.T) {
	f, tg := oneTargetFleet(t, 10*time.Second)
	file := filepath.Join("..", "servermetrics", "testdata", "sglang-0.5.10.txt")
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	first := instantOfText(t, tg.Key(), string(body), t0)
	if len(first.Models) != 1 {
		t.Fatalf("%d models", len(first.Models))
	}
	m := first.Models[0]
	for _, k := range []string{gRunning, gWaiting, gKV, gHitRate} {
		if _, ok := m.Gauges[k]; !ok {
			t.Errorf("gauge %s missing", k)
		}
	}
	ttft, ok := m.Hists[hTTFT]
	if !ok || ttft.Count <= 0 {
		t.Fatalf("TTFT histogram %+v", ttft)
	}
	// Move: +500 generation tokens, +2 observations in TTFT's first bucket (and every bucket
	// above it, cumulative, and the count).
	second := first
	second.At = t0.Add(5 * time.Second)
	mm := ModelInstant{Model: m.Model, Gauges: m.Gauges, Counters: map[string]float64{}, Hists: map[string]Hist{}}
	for k, v := range m.Counters {
		mm.Counters[k] = v
	}
	for k, v := range m.Hists {
		mm.Hists[k] = v
	}
	mm.Counters[cGen] += 500
	h := Hist{Bounds: ttft.Bounds, Count: ttft.Count + 2, Sum: ttft.Sum}
	for _, c := range ttft.Cum {
		h.Cum = append(h.Cum, c+2)
	}
	mm.Hists[hTTFT] = h
	second.Models = []ModelInstant{mm}
	f.Observe(first)
	f.Observe(second)
	r := f.Rows(second.At)[0]
	near(t, "gen tok/s", r.GenTPS, 100)
	near(t, "running", r.Running, m.Gauges[gRunning])
	checkQ(t, "ttft", r.TTFT, 2, ttft.Bounds[0]*1000/2, ttft.Bounds[0]*1000*1.98/2)
	if r.ITL == nil || r.ITL.Count != 0 || r.ITL.P50 != nil {
		t.Errorf("ITL with no new observations: %+v; want count 0, p50 null", r.ITL)
	}
	if r.Queue == nil || r.Queue.Count != 0 {
		t.Errorf("queue %+v; want count 0", r.Queue)
	}
}

// TestLlamaCppCaptures: the llama.cpp b10470 capture while two streams decode: running 2,
// waiting 0, no KV gauge (–); the live generation rate adds the busy slots' n_decoded.
func TestLlamaCppCaptures(t *testing.T) {
	f, tg := oneTargetFleet(t, 10*time.Second)
	dir := filepath.Join("..", "servermetrics", "testdata", "llamacpp-b10470")
	running := instantOf(t, tg.Key(), filepath.Join(dir, "metrics-2-streams-running.txt"), t0)
	slotsBody, _ := os.ReadFile(filepath.Join(dir, "slots-2-streams-running.json"))
	var raw []slotJSON
	if err := json.Unmarshal(slotsBody, &raw); err != nil {
		t.Fatal(err)
	}
	running.Slots = slotsOf(raw)
	if len(running.Slots) != 2 || running.Slots[0].Decoded != 46 || !running.Slots[1].Processing || running.Slots[1].Task != 1 {
		t.Fatalf("slots %+v", running.Slots)
	}
	idle := instantOf(t, tg.Key(), filepath.Join(dir, "metrics-idle-after.txt"), t0.Add(2*time.Second))
	idle.Slots = []Slot{{ID: 0}, {ID: 1, Task: 1}}
	f.Observe(running)
	f.Observe(idle)
	r := f.Rows(idle.At)[0]
	gen0 := running.Models[0].Counters[cGen] + 92
	gen1 := idle.Models[0].Counters[cGen]
	near(t, "gen tok/s", r.GenTPS, (gen1-gen0)/2)
	near(t, "running", r.Running, 0)
	if r.KVCacheUsage != nil || r.TTFT != nil {
		t.Errorf("kv %v ttft %v: llama.cpp b10470 exports neither", r.KVCacheUsage, r.TTFT)
	}
	if !r.GenLive {
		t.Error("llama.cpp with /slots: gen not live")
	}
	near(t, "gen tok/s: both requests' 96 tokens over 2 s", r.GenTPS, 96*2/2.0-46)
}
