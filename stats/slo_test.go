package stats

import (
	"fmt"
	"math"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/sample/sampletest"
	"tokscope/servermetrics"
)

const ns = time.Nanosecond

// Exactly at an objective meets it; one nanosecond over misses it.
func TestSLOBoundaries(t *testing.T) {
	noTTFT := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr()
	noTTFT.FirstToken, noTTFT.FirstAnswer = sample.Absent, sample.Absent
	for i := range noTTFT.Chunks {
		noTTFT.Chunks[i].Content = 0
	}
	for _, tc := range []struct {
		name string
		slo  config.SLO
		s    *sample.Sample
		good bool
		miss string
	}{
		{"ttft at", config.SLO{TTFT: 500 * msD}, sampletest.OK("a", "m", 0, t0).Stream(500*msD, 3, 10*msD, 3).
			Ptr(), true, ""},
		{"ttft over", config.SLO{TTFT: 500 * msD}, sampletest.OK("a", "m", 0, t0).
			Stream(500*msD+ns, 3, 10*msD, 3).Ptr(), false, "ttft"},
		{"ttft never came", config.SLO{TTFT: 500 * msD}, noTTFT, false, "ttft"},
		// TPOT = 10 gaps of 50 ms over 10 tokens after the first.
		{"tpot at", config.SLO{TPOT: 50 * msD}, sampletest.OK("a", "m", 0, t0).Stream(100*msD, 11, 50*msD, 11).
			Ptr(), true, ""},
		{"tpot over", config.SLO{TPOT: 50 * msD}, sampletest.OK("a", "m", 0, t0).
			Stream(100*msD, 11, 50*msD+ns, 11).Ptr(), false, "tpot"},
		{"tpot of one token", config.SLO{TPOT: ns}, sampletest.OK("a", "m", 0, t0).Stream(100*msD, 1, 0, 1).
			Ptr(), true, ""},
		// e2e = t0 → last chunk = 500 ms + 10 × 50 ms.
		{"e2e at", config.SLO{E2E: time.Second}, sampletest.OK("a", "m", 0, t0).
			Stream(500*msD, 11, 50*msD, 11).Ptr(), true, ""},
		{"e2e over", config.SLO{E2E: time.Second}, sampletest.OK("a", "m", 0, t0).
			Stream(500*msD, 11, 50*msD+ns, 11).Ptr(), false, "e2e"},
		// itl = the longest gap between token-bearing chunks.
		{"itl at", config.SLO{ITL: 200 * msD}, sampletest.OK("a", "m", 0, t0).Stream(100*msD, 4, 200*msD, 4).
			Ptr(), true, ""},
		{"itl over", config.SLO{ITL: 200 * msD}, sampletest.OK("a", "m", 0, t0).
			Stream(100*msD, 4, 200*msD+ns, 4).Ptr(), false, "itl"},
		{"itl of one chunk", config.SLO{ITL: ns}, sampletest.OK("a", "m", 0, t0).Stream(100*msD, 1, 0, 5).
			Ptr(), true, ""},
		{"every objective at once", config.SLO{TTFT: 500 * msD, TPOT: 50 * msD, E2E: time.Second, ITL: 50 * msD},
			sampletest.OK("a", "m", 0, t0).Stream(500*msD, 11, 50*msD, 11).Ptr(), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New([]config.Endpoint{{Name: "a", SLO: tc.slo}})
			a.Add(tc.s)
			st := a.Snapshot(t0.Add(10 * time.Second)).Endpoints[0].SLO
			if st == nil || st.Counted != 1 {
				t.Fatalf("SLO stats %+v, want one counted request", st)
			}
			if got := st.Good == 1; got != tc.good {
				t.Fatalf("good = %v, want %v (violations %v)", got, tc.good, st.Violations)
			}
			for k, n := range st.Violations {
				if want := map[bool]int{true: 1, false: 0}[k == tc.miss]; n != want {
					t.Errorf("violations[%s] = %d, want %d", k, n, want)
				}
			}
			if len(st.Violations) != len(tc.slo.Objectives()) {
				t.Errorf("violations %v: one key per objective set", st.Violations)
			}
		})
	}
}

// Errors and truncations count and are never good; tokscope's own cancellations, warm-ups and
// interactive requests do not count at all.
func TestSLOAttainmentAndGoodput(t *testing.T) {
	slo := config.SLO{TTFT: 300 * msD, ITL: 50 * msD}
	a := New([]config.Endpoint{{Name: "a", SLO: slo}})
	for i := range 8 {
		a.Add(sampletest.OK("a", "m", 0, t0.Add(time.Duration(i)*time.Second)).Stream(200*msD, 5, 20*msD, 5).Ptr())
	}
	a.Add(sampletest.OK("a", "m", 0, t0.Add(8*time.Second)).Stream(400*msD, 5, 60*msD, 5).Ptr()) // misses ttft and itl
	a.Add(sampletest.Err("a", "", 0, t0.Add(8*time.Second), "http_500", 429, "boom http_500").
		Times(msD, 5*msD).EndAt(6 * msD).Ptr())
	tr := sampletest.OK("a", "m", 0, t0.Add(9*time.Second)).Stream(200*msD, 5, 20*msD, 5).Ptr()
	tr.Outcome = sample.OutcomeTruncated
	a.Add(tr)
	a.Add(sampletest.Err("a", "", 0, t0.Add(9*time.Second), sample.ErrCanceled, 429, "boom "+sample.ErrCanceled).
		Times(msD, 5*msD).EndAt(6 * msD).Ptr())
	wu := sampletest.OK("a", "m", 0, t0).Stream(200*msD, 5, 20*msD, 5).Ptr()
	wu.Warmup = true
	a.Add(wu)
	inter := sampletest.OK("a", "m", 0, t0).Stream(200*msD, 5, 20*msD, 5).Ptr()
	inter.Stream = 7
	a.Add(inter)

	st := a.Snapshot(t0.Add(10 * time.Second)).Endpoints[0].SLO
	if st.Counted != 11 || st.Good != 8 || st.Failed != 2 {
		t.Fatalf("counted %d good %d failed %d, want 11, 8 and 2", st.Counted, st.Good, st.Failed)
	}
	if want := 8.0 / 11; math.Abs(st.Attainment-want) > 1e-12 {
		t.Errorf("attainment %v, want %v", st.Attainment, want)
	}
	if st.Violations["ttft"] != 1 || st.Violations["itl"] != 1 || len(st.Violations) != 2 {
		t.Errorf("violations %v, want ttft 1, itl 1", st.Violations)
	}
	// 8 good requests in the 9.281 s from the first t0 to the end of the last request (the
	// truncated one: started at 9 s, ended 281 ms later), not to the snapshot's instant.
	if want := 8 / 9.281; math.Abs(st.GoodputRPS-want) > 1e-12 {
		t.Errorf("goodput %v req/s, want %v", st.GoodputRPS, want)
	}
}

func TestSLORecentBreach(t *testing.T) {
	a := New([]config.Endpoint{{Name: "a", SLO: config.SLO{TPOT: 20 * msD}}})
	for i := range 10 {
		a.Add(sampletest.OK("a", "m", 0, t0.Add(time.Duration(i)*100*msD)).Stream(100*msD, 5, 10*msD, 5).Ptr())
	}
	later := t0.Add(100 * time.Second)
	for i := range 10 {
		gap := 10 * msD
		if i < 3 {
			gap = 30 * msD // TPOT 30 ms
		}
		a.Add(sampletest.OK("a", "m", 0, later.Add(time.Duration(i)*100*msD)).Stream(100*msD, 5, gap, 5).Ptr())
	}
	st := a.Snapshot(later.Add(5 * time.Second)).Endpoints[0].SLO
	if st.Attainment != 17.0/20 || st.RecentCounted != 10 || st.RecentAttainment != 0.7 {
		t.Fatalf("whole %v, recent %d at %v; want 0.85 and 10 at 0.7 (the early ones left the window)",
			st.Attainment, st.RecentCounted, st.RecentAttainment)
	}
	if !st.Breach || st.Worst != "tpot" || st.Target != DefaultBreachTarget {
		t.Fatalf("breach %v worst %q target %v, want a tpot breach below %v", st.Breach, st.Worst, st.Target, DefaultBreachTarget)
	}
	WithSLOTarget(0.7)(a)
	if st := a.Snapshot(later.Add(5 * time.Second)).Endpoints[0].SLO; st.Breach {
		t.Fatal("exactly at the target is no breach")
	}
	WithSLOTarget(0.95)(a)
	for i := range 5 {
		a.Add(sampletest.Err("a", "", 0, later.Add(6*time.Second+time.Duration(i)), "http_503", 429, "boom http_503").Times(msD, 5*msD).EndAt(6 * msD).Ptr())
	}
	if st := a.Snapshot(later.Add(7 * time.Second)).Endpoints[0].SLO; !st.Breach || st.Worst != "tpot" {
		t.Fatalf("breach %v worst %q", st.Breach, st.Worst)
	}
	b := New([]config.Endpoint{{Name: "b", SLO: config.SLO{TTFT: time.Second}}})
	b.AddAt(0, sampletest.Err("a", "", 0, t0, "http_503", 429, "boom http_503").Times(msD, 5*msD).EndAt(6*msD).Ptr())
	if st := b.Snapshot(t0.Add(time.Second)).Endpoints[0].SLO; !st.Breach || st.Worst != "errors" {
		t.Fatalf("failures alone: breach %v worst %q, want errors", st.Breach, st.Worst)
	}
}

func TestSLONoneAndReplay(t *testing.T) {
	a := New(nil)
	a.Add(sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr())
	if st := a.Snapshot(t0.Add(time.Second)).Endpoints[0]; st.SLO != nil || st.Cost != nil || st.Server != nil {
		t.Fatalf("no objectives, price or scrape: nil figures, got %+v %+v %+v", st.SLO, st.Cost, st.Server)
	}
	// --slo on a replay: cli gives the replay's endpoints (all of them known before the first
	// record) the objectives, and New judges their requests.
	r := New([]config.Endpoint{{Name: "a", SLO: config.SLO{TTFT: 50 * msD}}})
	r.Add(sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr())
	if st := r.Snapshot(t0.Add(time.Second)).Endpoints[0].SLO; st == nil || st.Counted != 1 || st.Good != 0 {
		t.Fatalf("replayed endpoint: %+v", st)
	}
}

func TestCost(t *testing.T) {
	tokens := func() *Aggregator {
		a := New([]config.Endpoint{{Name: "a", Price: &config.Price{Input: 0.15, Output: 0.6}}})
		for i := range 4 {
			s := sampletest.OK("a", "m", 0, t0.Add(time.Duration(i)*time.Second)).Stream(100*msD, 5, 10*msD, 500).Ptr()
			s.PromptTokens = 1000
			a.Add(s)
		}
		a.Add(sampletest.Err("a", "", 0, t0.Add(5*time.Second), "http_429", 429, "boom http_429").
			Times(msD, 5*msD).EndAt(6 * msD).Ptr())
		tr := sampletest.OK("a", "m", 0, t0.Add(6*time.Second)).Stream(100*msD, 5, 10*msD, 100).
			Ptr() // a cut stream: no usage, no prompt count
		tr.Outcome = sample.OutcomeTruncated
		a.Add(tr)
		wu := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 5, 10*msD, 9999).Ptr()
		wu.Warmup, wu.PromptTokens = true, 9999
		a.Add(wu)
		return a
	}()
	c := tokens.Snapshot(t0.Add(1800 * time.Second)).Endpoints[0].Cost
	if c.PromptTokens != 4000 || c.OutputTokens != 2100 {
		t.Fatalf("billed %d prompt, %d output tokens; want 4000 and 2100", c.PromptTokens, c.OutputTokens)
	}
	wantUSD := (4000*0.15 + 2100*0.6) / 1e6
	if math.Abs(c.USD-wantUSD) > 1e-15 || math.Abs(c.USDPerMTokOut-wantUSD/2100*1e6) > 1e-9 {
		t.Fatalf("usd %v (want %v), per 1M output %v (want %v)", c.USD, wantUSD, c.USDPerMTokOut, wantUSD/2100*1e6)
	}

	gpu := New([]config.Endpoint{{Name: "g", Price: &config.Price{GPUHour: 2}}})
	// Three requests over exactly half an hour: the last one (141 ms long) ends at 30 min.
	for _, start := range []time.Duration{0, 10 * time.Minute, 30*time.Minute - 141*msD} {
		gpu.AddAt(0, sampletest.OK("a", "m", 0, t0.Add(start)).Stream(100*msD, 5, 10*msD, 700).Ptr())
	}
	c = gpu.Snapshot(t0.Add(time.Hour)).Endpoints[0].Cost // idle after the run: not billed
	// Half an hour at 2 USD/h; 2100 tokens in 1800 s is 1.1667 tok/s, so 1M tokens take
	// 857143 s = 238.1 h = 476.19 USD.
	if math.Abs(c.USD-1) > 1e-12 {
		t.Fatalf("usd %v, want 1 (2 USD/h × 0.5 h of wall time)", c.USD)
	}
	tps := 2100.0 / 1800
	if want := 2.0 / (3600 * tps) * 1e6; math.Abs(c.USDPerMTokOut-want) > 1e-9 {
		t.Fatalf("usd per 1M output %v, want %v (gpu_hour at the measured throughput)", c.USDPerMTokOut, want)
	}
	empty := New([]config.Endpoint{{Name: "e", Price: &config.Price{Output: 1}}})
	if c := empty.Snapshot(t0).Endpoints[0].Cost; c.USD != 0 || c.OutputTokens != 0 {
		t.Fatalf("no request, no cost: %+v", c)
	}
}

func TestServerStats(t *testing.T) {
	a := New([]config.Endpoint{{Name: "a"}, {Name: "b"}})
	if a.ObserveServer(servermetrics.Update{Endpoint: 5}) {
		t.Error("an unknown endpoint changes nothing")
	}
	a.ObserveServer(servermetrics.Update{Endpoint: 1, State: servermetrics.StateUnavailable, Note: "HTTP 404"})
	for i := range 5 {
		v := func(x float64) servermetrics.Value { return servermetrics.Value{V: x, OK: true} }
		a.ObserveServer(servermetrics.Update{Endpoint: 0, Reading: servermetrics.Reading{
			Kind: servermetrics.KindVLLM, At: t0.Add(time.Duration(i) * time.Second),
			Running: v(float64(i + 1)), Waiting: v(0), KVCacheUsage: v(0.1 * float64(i+1)),
			GenTPS: v(100), GenLive: true, GenTokens: v(100), GenSpan: time.Second,
			PrefixFromCounters: true, PrefixHits: 30, PrefixQueries: 40, PrefixCacheHitRate: v(0.75),
		}})
	}
	a.ObserveServer(servermetrics.Update{Endpoint: 0, State: servermetrics.StateUnavailable, Note: "timeout"})
	snap := a.Snapshot(t0.Add(10 * time.Second))
	s := snap.Endpoints[0].Server
	if s.State != servermetrics.StateUnavailable || s.Note != "timeout" || s.Scrapes != 5 || s.Kind != servermetrics.KindVLLM {
		t.Fatalf("state %v %q, %d scrapes, kind %q", s.State, s.Note, s.Scrapes, s.Kind)
	}
	if s.Running.Count != 5 || s.Running.Max != 5 || s.Running.Mean != 3 || math.Abs(s.KVCacheUsage.Mean-0.3) > 1e-9 {
		t.Errorf("distributions over scrapes: running %+v kv %+v", s.Running, s.KVCacheUsage)
	}
	if !s.GenTPS.OK || s.GenTPS.V != 100 || !s.PrefixCacheHitRate.OK || s.PrefixCacheHitRate.V != 0.75 {
		t.Errorf("run-level gen %+v, hit rate %+v", s.GenTPS, s.PrefixCacheHitRate)
	}
	if len(s.History) != 5 || s.History[4].Running.V != 5 || s.Latest.Running.V != 5 {
		t.Errorf("history %d points, latest %+v", len(s.History), s.Latest.Running)
	}
	if b := snap.Endpoints[1].Server; b == nil || b.Scrapes != 0 || b.Note != "HTTP 404" {
		t.Errorf("an unavailable server is a note: %+v", b)
	}
	// A hit-rate gauge (SGLang, vLLM V0): the run's figure is its mean.
	g := New([]config.Endpoint{{Name: "g"}})
	for _, x := range []float64{0.2, 0.4} {
		g.ObserveServer(servermetrics.Update{Reading: servermetrics.Reading{Kind: servermetrics.KindSGLang,
			PrefixCacheHitRate: servermetrics.Value{V: x, OK: true}}})
	}
	if h := g.Snapshot(t0).Endpoints[0].Server.PrefixCacheHitRate; math.Abs(h.V-0.3) > 1e-12 {
		t.Errorf("gauge mean %+v, want 0.3", h)
	}
	a.Reset()
	if s := a.Snapshot(t0).Endpoints[0].Server; s.Scrapes != 0 || len(s.History) != 0 || s.Note != "timeout" {
		t.Errorf("after Reset: %+v", s)
	}
}

// The SLO table has one row per objective config knows, in config's order: the violations,
// the CSV columns and the "missed" list follow it.
func TestObjectivesAreConfigsKeys(t *testing.T) {
	t.Parallel()
	if len(objectives) != len(config.SLOKeys) {
		t.Fatalf("%d objectives, config has %d keys", len(objectives), len(config.SLOKeys))
	}
	for i, k := range config.SLOKeys {
		o := &objectives[i]
		if o.key != k {
			t.Errorf("objective %d is %q, config's key %q", i, o.key, k)
		}
		slo, err := config.ParseSLO(fmt.Sprintf("%s=%ds", k, i+1))
		if err != nil {
			t.Fatal(err)
		}
		if got := slo.Limit(o.key); got != time.Duration(i+1)*time.Second {
			t.Errorf("objective %q: limit %v of an SLO that sets %s to %v", k, got, k, time.Duration(i+1)*time.Second)
		}
	}
}
