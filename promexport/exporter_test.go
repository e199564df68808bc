package promexport

import (
	"context"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/sample/sampletest"
)

const ms = time.Millisecond

// serve runs the exporter's real handler on a loopback port through Listen.
func serve(t *testing.T, e *Exporter) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addr, err := Listen(ctx, "0", e.Handler())
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/metrics"
}

// scrapeBody fetches the text exposition.
func scrapeBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// scrape fetches and parses the exposition as Prometheus would.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(scrapeBody(t, url)))
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// series finds the one metric of a family whose labels equal want exactly.
func series(t *testing.T, families map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	t.Helper()
	mf, ok := families[name]
	if !ok {
		t.Fatalf("no family %s in the exposition", name)
	}
next:
	for _, m := range mf.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
				continue next
			}
		}
		return m
	}
	t.Fatalf("%s: no series with labels %v", name, want)
	return nil
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

type histWant struct {
	count   uint64
	sum     float64
	buckets map[float64]uint64 // upper bound → cumulative count
}

func checkHistogram(t *testing.T, families map[string]*dto.MetricFamily, name string, labels map[string]string, want histWant) {
	t.Helper()
	h := series(t, families, name, labels).GetHistogram()
	if h == nil {
		t.Fatalf("%s is not a histogram", name)
	}
	if h.GetSampleCount() != want.count || !approx(h.GetSampleSum(), want.sum) {
		t.Errorf("%s%v: count %d sum %g, want count %d sum %g",
			name, labels, h.GetSampleCount(), h.GetSampleSum(), want.count, want.sum)
	}
	got := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		got[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	for le, n := range want.buckets {
		c, ok := got[le]
		if !ok {
			t.Errorf("%s%v: no bucket le=%g", name, labels, le)
		} else if c != n {
			t.Errorf("%s%v: bucket le=%g holds %d, want %d", name, labels, le, c, n)
		}
	}
}

func testEndpoints() []config.Endpoint {
	return []config.Endpoint{
		{Name: "local", Model: "m1", BaseURL: "http://127.0.0.1:8080/v1"},
		{Name: "remote", Model: "m2", BaseURL: "https://api.example.com/v1"},
	}
}

func TestObserveExposition(t *testing.T) {
	e := New(testEndpoints())
	url := serve(t, e)

	// A: TTFT 100 ms, TTFB 50 ms, gaps 20/30/100 ms, 7 tokens over 150 ms → TPOT 25 ms.
	a := sampletest.OK("local", "m1", 1, time.Time{}).Times(0, 50*ms).Role(51*ms).
		ChunksAt(3, 100*ms, 120*ms, 150*ms, 250*ms).Tokens(7, sample.SourceUsage).EndAt(260 * ms).Ptr()
	// B: TTFT 1.5 s, TTFB 200 ms, one gap of 5 ms, 2 tokens → TPOT 5 ms.
	b := sampletest.OK("local", "m1", 2, time.Time{}).Times(0, 200*ms).Role(201*ms).
		ChunksAt(3, 1500*ms, 1505*ms).Tokens(2, sample.SourceEstimate).EndAt(1510 * ms).Ptr()
	// C: one token: TTFT 30 ms, no gap, no TPOT.
	c := sampletest.OK("local", "m1", 3, time.Time{}).Times(0, 10*ms).Role(11*ms).ChunksAt(3, 30*ms).
		Tokens(1, sample.SourceUsage).EndAt(40 * ms).Ptr()
	// D: truncated — counts as a request, never in latency or tokens.
	d := sampletest.OK("local", "m1", 4, time.Time{}).Times(0, 5*ms).Role(6*ms).ChunksAt(3, 7*ms, 9*ms).
		Tokens(50, sample.SourceUsage).EndAt(20 * ms).Ptr()
	d.Outcome, d.FinishReason = sample.OutcomeTruncated, ""
	// E: a 429.
	e429 := &sample.Sample{Endpoint: "local", Model: "m1", Seq: 5, Headers: 3 * ms,
		FirstToken: sample.Absent, LastToken: sample.Absent, End: 4 * ms,
		Outcome: sample.OutcomeError, ErrorKind: "http_429", HTTPStatus: 429}
	// F: a warm-up with absurd numbers: must leave no trace.
	f := sampletest.OK("local", "m1", 6, time.Time{}).Times(0, 9000*ms).Role(9001*ms).
		ChunksAt(3, 9100*ms, 9200*ms).Tokens(1000, sample.SourceUsage).EndAt(9300 * ms).Ptr()
	f.Warmup = true
	// G: a stream error on the other endpoint, whose API code rides on the kind.
	g := &sample.Sample{Endpoint: "remote", Model: "m2", Seq: 1, Headers: 80 * ms,
		FirstToken: sample.Absent, LastToken: sample.Absent, End: 90 * ms,
		Outcome: sample.OutcomeError, ErrorKind: "http_400 (Bad Request: bogus!)"}
	a.PromptTokens, a.CachedTokens = 500, 128
	b.PromptTokens, b.CachedTokens = 300, -1
	c.CachedTokens = -1
	d.PromptTokens, d.CachedTokens = 900, 900
	f.PromptTokens, f.CachedTokens = 9000, 9000
	for _, s := range []*sample.Sample{a, b, c, d, e429, f, g, nil} {
		e.Observe(s)
	}

	fams := scrape(t, url)
	local := map[string]string{"endpoint": "local", "model": "m1"}
	checkHistogram(t, fams, nameTTFT, local, histWant{3, 0.1 + 1.5 + 0.03,
		map[float64]uint64{0.02: 0, 0.04: 1, 0.1: 2, 1.0: 2, 2.5: 3, 2560: 3}})
	checkHistogram(t, fams, nameTTFB, local, histWant{3, 0.05 + 0.2 + 0.01,
		map[float64]uint64{0.01: 1, 0.06: 2, 0.25: 3}})
	checkHistogram(t, fams, nameITL, local, histWant{4, 0.02 + 0.03 + 0.1 + 0.005,
		map[float64]uint64{0.0025: 0, 0.005: 1, 0.02: 2, 0.03: 3, 0.075: 3, 0.1: 4}})
	checkHistogram(t, fams, nameTPOT, local, histWant{2, 0.025 + 0.005,
		map[float64]uint64{0.003: 0, 0.005: 1, 0.02: 1, 0.025: 2}})
	// e2e is t0 → the last chunk (here the last token chunk), not the end of the stream.
	checkHistogram(t, fams, nameE2E, local, histWant{3, 0.25 + 1.505 + 0.03,
		map[float64]uint64{0.05: 1, 0.2: 1, 0.3: 2, 1.5: 2, 2.0: 3}})
	// The other endpoint exists from the start, empty.
	checkHistogram(t, fams, nameTTFT, map[string]string{"endpoint": "remote", "model": "m2"}, histWant{0, 0, nil})

	counter := func(name string, labels map[string]string) float64 {
		t.Helper()
		return series(t, fams, name, labels).GetCounter().GetValue()
	}
	if got := counter(nameTokens, local); got != 10 {
		t.Errorf("generation tokens = %g, want 10 (ok requests only)", got)
	}
	// Prompt tokens 500 + 300 (C had no usage), cached 128 (B's server did not report it:
	// -1 adds nothing); the truncated D and the warm-up F add nothing.
	if p, c := counter(namePrompt, local), counter(nameCached, local); p != 800 || c != 128 {
		t.Errorf("prompt tokens %g, cached %g; want 800 and 128", p, c)
	}
	req := func(ep, model, outcome, errType string) map[string]string {
		return map[string]string{"endpoint": ep, "model": model, "outcome": outcome, "error_type": errType}
	}
	for _, tc := range []struct {
		labels map[string]string
		want   float64
	}{
		{req("local", "m1", "ok", ""), 3},
		{req("local", "m1", "truncated", ""), 1},
		{req("local", "m1", "error", "http_429"), 1},
		{req("remote", "m2", "ok", ""), 0},
		{req("remote", "m2", "error", "http_400"), 1},
	} {
		if got := counter(nameRequests, tc.labels); got != tc.want {
			t.Errorf("requests_total%v = %g, want %g", tc.labels, got, tc.want)
		}
	}
	if n := len(fams[nameRequests].GetMetric()); n != 6 {
		t.Errorf("requests_total has %d series, want 6 (4 pre-created + 2 error series)", n)
	}
	src := func(s string) map[string]string {
		return map[string]string{"endpoint": "local", "model": "m1", "source": s}
	}
	if u, est := counter(nameSources, src("usage")), counter(nameSources, src("estimate")); u != 2 || est != 1 {
		t.Errorf("token sources usage=%g estimate=%g, want 2 and 1", u, est)
	}
	// Go and process collectors ride along.
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("no %s in the exposition", name)
		}
	}
}

func gauge(t *testing.T, e *Exporter, endpoint, model string) float64 {
	t.Helper()
	fams, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, mf := range fams {
		byName[mf.GetName()] = mf
	}
	return series(t, byName, nameInFlight, map[string]string{"endpoint": endpoint, "model": model}).GetGauge().GetValue()
}

func TestInFlightCannotDrift(t *testing.T) {
	e := New(testEndpoints())
	if got := gauge(t, e, "local", "m1"); got != 0 {
		t.Fatalf("in flight at start = %g", got)
	}
	e.Started("local", 1)
	e.Started("local", 2)
	e.Started("remote", 1)
	if l, r := gauge(t, e, "local", "m1"), gauge(t, e, "remote", "m2"); l != 2 || r != 1 {
		t.Fatalf("in flight local=%g remote=%g, want 2 and 1", l, r)
	}
	e.Observe(&sample.Sample{Endpoint: "local", Model: "m1", Seq: 1, Outcome: sample.OutcomeOK})
	e.Observe(&sample.Sample{Endpoint: "local", Model: "m1", Seq: 1, Outcome: sample.OutcomeOK}) // again: no effect
	if got := gauge(t, e, "local", "m1"); got != 1 {
		t.Fatalf("after a double finish in flight = %g, want 1", got)
	}
	// A warm-up leaves the gauge too; a request that never started changes nothing.
	e.Observe(&sample.Sample{Endpoint: "local", Model: "m1", Seq: 2, Warmup: true, Outcome: sample.OutcomeOK})
	e.Observe(&sample.Sample{Endpoint: "local", Model: "m1", Seq: 77, Outcome: sample.OutcomeError, ErrorKind: "connect"})
	if got := gauge(t, e, "local", "m1"); got != 0 {
		t.Fatalf("in flight = %g, want 0", got)
	}
	if got := gauge(t, e, "remote", "m2"); got != 1 {
		t.Fatalf("remote in flight = %g, want 1", got)
	}
}

func TestConcurrentObserve(t *testing.T) {
	e := New(testEndpoints())
	url := serve(t, e)
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				seq := uint64(w*each + i + 1)
				e.Started("local", seq)
				e.Observe(sampletest.OK("local", "m1", seq, time.Time{}).Times(0, 10*ms).Role(11*ms).
					ChunksAt(3, 20*ms, 30*ms).Tokens(2, sample.SourceUsage).EndAt(40 * ms).Ptr())
			}
		})
	}
	wg.Add(1)
	go func() { // scrapes race with observations
		defer wg.Done()
		for range 5 {
			scrapeBody(t, url)
		}
	}()
	wg.Wait()
	fams := scrape(t, url)
	local := map[string]string{"endpoint": "local", "model": "m1"}
	if got := series(t, fams, nameTTFT, local).GetHistogram().GetSampleCount(); got != workers*each {
		t.Errorf("TTFT count = %d, want %d", got, workers*each)
	}
	if got := series(t, fams, nameInFlight, local).GetGauge().GetValue(); got != 0 {
		t.Errorf("in flight after all finished = %g", got)
	}
}

func TestNoSecretsInExposition(t *testing.T) {
	t.Setenv("TOKSCOPE_TEST_KEY", "sk-test-DO-NOT-LEAK-1234")
	eps := []config.Endpoint{
		{Name: "https://alice:hunter2@llm.example.com/v1", Model: "m", APIKeyEnv: "TOKSCOPE_TEST_KEY",
			BaseURL: "https://alice:hunter2@llm.example.com/v1",
			Headers: map[string]string{"Authorization": "Bearer sk-header-secret"}},
		{Name: "bob:pa55@gpu-box/llama", Model: "llama\xff", APIKeyEnv: "TOKSCOPE_TEST_KEY",
			BaseURL: "http://bob:pa55@gpu-box:8000/v1"},
	}
	e := New(eps)
	url := serve(t, e)
	for i, ep := range eps {
		e.Started(ep.Name, 1)
		e.Observe(sampletest.OK(ep.Name, "m1", uint64(i+2), time.Time{}).Times(0, 10*ms).Role(11*ms).
			ChunksAt(3, 20*ms, 30*ms).Tokens(2, sample.SourceUsage).EndAt(40 * ms).Ptr())
	}
	body := scrapeBody(t, url)
	for _, secret := range []string{"hunter2", "alice", "pa55", "bob:", "sk-test", "sk-header", "Bearer", "Authorization"} {
		if strings.Contains(body, secret) {
			t.Errorf("exposition contains %q", secret)
		}
	}
	for _, want := range []string{`endpoint="https://llm.example.com/v1"`, `endpoint="gpu-box/llama"`} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
}

func TestLabelHelpers(t *testing.T) {
	for in, want := range map[string]string{
		"local":                 "local",
		"127.0.0.1:8080/qwen":   "127.0.0.1:8080/qwen",
		"http://u:p@h:1/v1":     "http://h:1/v1",
		"http://u:p@h:1/v1 %zz": "http://h:1/v1 %zz", // unparseable URL
		"u:p@host/model":        "host/model",
		"team@example/model":    "team@example/model", // no password shape: left alone
		"m\xffx":                "m\uFFFDx",
	} {
		if got := safeLabel(in); got != want {
			t.Errorf("safeLabel(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"":                            "unknown",
		"http_429":                    "http_429",
		"stream_error":                "stream_error",
		"http_400 (Bad Request)":      "http_400",
		"Something Weird Happened!!!": "other",
	} {
		if got := errorTypeLabel(in); got != want {
			t.Errorf("errorTypeLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		"9464":           "127.0.0.1:9464",
		":9464":          "127.0.0.1:9464",
		" 9464 ":         "127.0.0.1:9464",
		"0":              "127.0.0.1:0",
		"0.0.0.0:9464":   "0.0.0.0:9464",
		"[::]:9464":      "[::]:9464",
		"[::1]:9464":     "[::1]:9464",
		"localhost:9464": "localhost:9464",
	} {
		got, err := ListenAddr(in)
		if err != nil || got != want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "host:", "a:b:c"} {
		if got, err := ListenAddr(bad); err == nil {
			t.Errorf("ListenAddr(%q) = %q, want an error", bad, got)
		}
	}
}

func TestListenBarePortIsLoopbackAndStops(t *testing.T) {
	e := New(nil)
	for _, addr := range []string{"0", ":0"} {
		ctx, cancel := context.WithCancel(context.Background())
		bound, err := Listen(ctx, addr, e.Handler())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(bound, "127.0.0.1:") || strings.HasSuffix(bound, ":0") {
			t.Fatalf("Listen(%q) bound %s, want 127.0.0.1 and a real port", addr, bound)
		}
		if body := scrapeBody(t, "http://"+bound+"/metrics"); !strings.Contains(body, "go_goroutines") {
			t.Fatalf("scrape of %s lacks go_goroutines", bound)
		}
		cancel()
		deadline := time.Now().Add(5 * time.Second)
		for {
			c := http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
			resp, err := c.Get("http://" + bound + "/metrics")
			if err != nil {
				break
			}
			resp.Body.Close()
			if time.Now().After(deadline) {
				t.Fatalf("%s still serving after ctx was canceled", bound)
			}
			time.Sleep(20 * ms)
		}
	}
	// The port is taken: the bind error comes back, not a silent goroutine failure.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bound, err := Listen(ctx, "0", e.Handler())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(ctx, bound, e.Handler()); err == nil {
		t.Fatalf("second Listen on %s succeeded", bound)
	} else if !strings.Contains(err.Error(), "metrics") {
		t.Errorf("bind error %q does not say it is the metrics listener", err)
	}
}

// The token counter rises as tokens arrive (Progress) and ends at the ok requests' exact
// totals: an ok request's final count replaces its live one, an estimate above the final count
// and the tokens of a request that failed are paid back by later tokens (a counter cannot go
// down), warm-ups and interactive requests never count.
func TestTokensCountLiveAndReconcile(t *testing.T) {
	e := New(testEndpoints())
	url := serve(t, e)
	local := map[string]string{"endpoint": "local", "model": "m1"}
	tokens := func() float64 {
		t.Helper()
		return series(t, scrape(t, url), nameTokens, local).GetCounter().GetValue()
	}
	progress := func(seq uint64, n float64) {
		e.Progress(&sample.Progress{Endpoint: 0, Seq: seq, Tokens: n, Estimated: true})
	}
	steps := []struct {
		what string
		do   func()
		want float64
	}{
		{"first token", func() { progress(1, 1) }, 1},
		{"in flight", func() { progress(1, 10) }, 10},
		{"a late Progress counts nothing twice", func() { progress(1, 8) }, 10},
		{"usage above the estimate", func() {
			e.Observe(sampletest.OK("local", "m1", 1, time.Time{}).Times(0, 5*ms).Role(6*ms).
				ChunksAt(3, 10*ms, 20*ms).Tokens(12, sample.SourceUsage).EndAt(30 * ms).Ptr())
		}, 12},
		{"estimate above the usage: 3 owed", func() {
			progress(2, 9)
			e.Observe(sampletest.OK("local", "m1", 2, time.Time{}).Times(0, 5*ms).Role(6*ms).
				ChunksAt(3, 10*ms, 20*ms).Tokens(6, sample.SourceUsage).EndAt(30 * ms).Ptr())
		}, 21},
		{"a failed request pays the 3 owed, then owes its 4", func() {
			progress(3, 4)
			s := sampletest.OK("local", "m1", 3, time.Time{}).Times(0, 5*ms).Role(6*ms).ChunksAt(3, 10*ms).
				Tokens(4, sample.SourceUsage).EndAt(30 * ms).Ptr()
			s.Outcome, s.ErrorKind = sample.OutcomeError, "stream_error"
			e.Observe(s)
		}, 22},
		{"warm-ups and streams never count", func() {
			e.Progress(&sample.Progress{Endpoint: 0, Seq: 4, Tokens: 50, Warmup: true})
			e.Progress(&sample.Progress{Endpoint: 0, Seq: 5, Tokens: 50, Stream: 1})
			e.Progress(&sample.Progress{Endpoint: 7, Seq: 5, Tokens: 50})
		}, 22},
		{"later tokens pay the 4 owed first", func() { progress(6, 5) }, 23},
		{"then count", func() { progress(6, 10) }, 28},
		{"and end exact", func() {
			e.Observe(sampletest.OK("local", "m1", 6, time.Time{}).Times(0, 5*ms).Role(6*ms).
				ChunksAt(3, 10*ms, 20*ms).Tokens(10, sample.SourceUsage).EndAt(30 * ms).Ptr())
		}, 28},
	}
	for _, s := range steps {
		s.do()
		if got := tokens(); got != s.want {
			t.Fatalf("%s: counter %g, want %g", s.what, got, s.want)
		}
	}
	// 12 + 6 + 10 tokens of ok requests: the counter equals their sum.
}

// A request cut by the end of the run counts as outcome "cut", not as an error; the TTFT it had
// counts in the TTFT histogram, its tokens and other figures do not.
func TestObserveCut(t *testing.T) {
	e := New(testEndpoints())
	url := serve(t, e)
	cut := sampletest.OK("local", "m1", 1, time.Time{}).Times(0, 20*ms).Role(21*ms).ChunksAt(3, 40*ms, 60*ms).
		Tokens(2, sample.SourceUsage).EndAt(70 * ms).Ptr()
	cut.Outcome, cut.ErrorKind, cut.FinishReason, cut.Cut = sample.OutcomeError, sample.ErrCanceled, "", true
	e.Observe(cut)
	fams := scrape(t, url)
	local := map[string]string{"endpoint": "local", "model": "m1"}
	checkHistogram(t, fams, nameTTFT, local, histWant{1, 0.04, map[float64]uint64{0.02: 0, 0.04: 1}})
	checkHistogram(t, fams, nameTTFB, local, histWant{0, 0, nil})
	if got := series(t, fams, nameRequests, map[string]string{"endpoint": "local", "model": "m1", "outcome": "cut", "error_type": ""}).GetCounter().GetValue(); got != 1 {
		t.Errorf("requests_total{outcome=cut} = %g, want 1", got)
	}
	for _, m := range fams[nameRequests].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "outcome" && l.GetValue() == "error" {
				t.Errorf("a cut request counted as an error: %v", m)
			}
		}
	}
	if got := series(t, fams, nameTokens, local).GetCounter().GetValue(); got != 0 {
		t.Errorf("generation tokens = %g, want 0", got)
	}
}
