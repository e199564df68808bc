package stats

import (
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample/sampletest"
)

// TestWorkloadFigures: prompt and cached tokens from usage (an unreported cached count is
// left out, a reported 0 is not), prefill tok/s and e2e per request, throughput over the
// wall time, the output-target count and the cache mode.
func TestWorkloadFigures(t *testing.T) {
	a := New([]config.Endpoint{{Name: "a", Model: "m", Cache: config.CacheBust}, {Name: "b", Model: "m"}})
	cached := []int{-1, 0, 300}
	for i, c := range cached {
		s := sampletest.OK("a", "m", 0, t0.Add(time.Duration(i)*time.Second)).Stream(200*msD, 10, 10*msD, 10).Ptr()
		s.PromptTokens, s.CachedTokens, s.Cache = 1000, c, config.CacheBust
		s.OutputTarget = 10 + 5*i // the first reaches its target, the others do not
		a.Add(s)
	}
	noUsage := sampletest.OK("a", "m", 0, t0).Stream(200*msD, 10, 10*msD, 10).Ptr()
	noUsage.CachedTokens = -1
	a.Add(noUsage) // no prompt tokens, no cached tokens: in neither distribution, nor prefill
	failed := sampletest.Err("a", "", 0, t0, "http_500", 429, "boom http_500").Times(msD, 5*msD).EndAt(6 * msD).Ptr()
	failed.OutputTarget, failed.Cache = 10, config.CacheBust
	a.Add(failed)

	snap := a.Snapshot(t0.Add(10 * time.Second))
	st := snap.Endpoints[0]
	w := st.Whole
	if w.PromptTokens.Count != 3 || w.PromptTokens.Mean != 1000 {
		t.Errorf("prompt tokens %+v", w.PromptTokens)
	}
	if w.CachedTokens.Count != 2 || w.CachedTokens.Min != 0 || w.CachedTokens.Max != 300 {
		t.Errorf("cached tokens %+v, want the 0 and the 300 only", w.CachedTokens)
	}
	// (1000 − 0) / 0.2 s twice (unreported and reported 0), (1000 − 300) / 0.2 s once.
	if w.PrefillTPS.Count != 3 || w.PrefillTPS.Max != 5000 || w.PrefillTPS.Min != 3500 {
		t.Errorf("prefill %+v", w.PrefillTPS)
	}
	// e2e: the last chunk, 200 + 9 × 10 ms, of all four counted requests.
	if w.E2E.Count != 4 || w.E2E.Min != 290 || w.E2E.Max != 290 {
		t.Errorf("e2e %+v", w.E2E)
	}
	if st.TargetRequests != 3 || st.TargetReached != 1 {
		t.Errorf("targets %d reached %d, want 3 and 1 (the failed request is not counted)", st.TargetRequests, st.TargetReached)
	}
	// The run's span: the first t0 to the last finish (the third request: 2 s + 291 ms), not
	// to the snapshot; 4 counted requests of 10 tokens.
	if st.RunSpan != 2291*msD {
		t.Errorf("run span %v, want 2.291s", st.RunSpan)
	}
	exact(t, "output_tps", st.OutputTPS, 40/2.291)
	exact(t, "requests_per_s", st.RequestsPerS, 4/2.291)
	if later := a.Snapshot(t0.Add(time.Hour)).Endpoints[0]; later.OutputTPS != st.OutputTPS {
		t.Errorf("output_tps fell from %v to %v with the snapshot's clock", st.OutputTPS, later.OutputTPS)
	}
	if st.Cache != config.CacheBust || snap.Endpoints[1].Cache != "" {
		t.Errorf("cache %q %q", st.Cache, snap.Endpoints[1].Cache)
	}
	if st.LastError == nil || st.LastError.Message != "boom http_500" {
		t.Errorf("last error %+v", st.LastError)
	}

	// A replay knows the mode from its records only; records of both modes are "mixed".
	r := New([]config.Endpoint{{Name: "a", Model: "m"}})
	for _, mode := range []string{config.CacheReuse, config.CacheReuse, ""} {
		s := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr()
		s.Cache = mode
		r.Add(s)
	}
	if c := r.Snapshot(t0.Add(time.Second)).Endpoints[0].Cache; c != config.CacheReuse {
		t.Errorf("replayed cache %q", c)
	}
	s := sampletest.OK("a", "m", 0, t0).Stream(100*msD, 3, 10*msD, 3).Ptr()
	s.Cache = config.CacheBust
	r.Add(s)
	if c := r.Snapshot(t0.Add(time.Second)).Endpoints[0].Cache; c != "mixed" {
		t.Errorf("mixed cache %q", c)
	}
	r.Reset()
	if st := r.Snapshot(t0.Add(time.Second)).Endpoints[0]; st.Cache != "" || st.OutputTPS != 0 || st.TargetRequests != 0 {
		t.Errorf("after Reset: %q %v %d", st.Cache, st.OutputTPS, st.TargetRequests)
	}
}
