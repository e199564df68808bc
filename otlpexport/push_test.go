package otlpexport_test

import (
	"context"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/metric"
	"tokscope/otlpexport"
	"tokscope/promexport"
	"tokscope/sample"
	"tokscope/sample/sampletest"
)

const ms = time.Millisecond

func testEndpoints() []config.Endpoint {
	return []config.Endpoint{
		{Name: "local", Model: "m1", BaseURL: "http://127.0.0.1:8080/v1"},
		{Name: "groq", Model: "llama", BaseURL: "https://user:pw-secret@api.groq.com/openai/v1"},
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * ms)
	}
}

// TestPushNamesAttributesValues: the registry's series arrive, decoded by the Collector's
// pdata, under the GenAI conventions' names and attributes, with the values observed; the
// pusher pushes on its interval and once more at Shutdown, with what came in between.
func TestPushNamesAttributesValues(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer otlp-secret")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	rcv := newReceiver(t)
	eps := testEndpoints()
	exp := promexport.New(eps)
	exp.Observe(sampletest.OK("local", "m1", 1, time.Time{}).Times(0, 5*ms).Role(6*ms).
		ChunksAt(3, 20*ms, 30*ms, 45*ms).Tokens(9, sample.SourceUsage).Prompt(100, 0).EndAfter(ms).Ptr())
	exp.Observe(&sample.Sample{Endpoint: "groq", Model: "llama", Seq: 1, Outcome: sample.OutcomeError, ErrorKind: "http_429"})

	push, err := otlpexport.Start(context.Background(), exp.Registry(), otlpexport.Options{
		URL: rcv.url, Interval: 50 * ms, Version: "v9.9", Endpoints: eps, Shard: "1/3"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two periodic pushes", func() bool { return rcv.count() >= 2 })
	exp.Observe(sampletest.OK("local", "m1", 2, time.Time{}).Times(0, 5*ms).Role(6*ms).
		ChunksAt(3, 40*ms, 50*ms).Tokens(6, sample.SourceUsage).Prompt(50, 0).EndAfter(ms).Ptr()) // only the push at exit has it
	if err := push.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	md, _ := rcv.last(t)
	metrics, units, resource := pushed(t, md)

	for k, want := range map[string]string{"service.name": "tokscope", "service.version": "v9.9", "tokscope.shard": "1/3"} {
		if resource[k] != want {
			t.Errorf("resource %s = %q, want %q", k, resource[k], want)
		}
	}
	if resource["service.instance.id"] == "" {
		t.Error("no service.instance.id")
	}
	for _, p := range rcv.paths {
		if p != "/v1/metrics" {
			t.Errorf("pushed to %q, want /v1/metrics", p)
		}
	}
	if got := rcv.headers[0].Get("Authorization"); got != "Bearer otlp-secret" {
		t.Errorf("Authorization header %q: OTEL_EXPORTER_OTLP_HEADERS not applied", got)
	}

	local := map[string]string{"tokscope.endpoint": "local", "gen_ai.request.model": "m1", "gen_ai.operation.name": "chat",
		"gen_ai.provider.name": "openai", "server.address": "127.0.0.1", "server.port": "8080"}
	ttft := one(t, metrics, "gen_ai.client.operation.time_to_first_chunk", local)
	if ttft.count != 2 || math.Abs(ttft.sum-0.060) > 1e-9 || !ttft.cumulative {
		t.Errorf("TTFT count %d sum %g cumulative %v, want 2, 0.060 s, true", ttft.count, ttft.sum, ttft.cumulative)
	}
	if itl := one(t, metrics, "gen_ai.client.operation.time_per_output_chunk", local); itl.count != 3 || math.Abs(itl.sum-0.035) > 1e-9 {
		t.Errorf("ITL count %d sum %g, want 3 gaps summing 0.035 s", itl.count, itl.sum)
	}
	if e2e := one(t, metrics, "gen_ai.client.operation.duration", local); e2e.count != 2 {
		t.Errorf("operation.duration count %d, want 2", e2e.count)
	}
	out := one(t, metrics, "gen_ai.client.token.usage", merge(local, map[string]string{"gen_ai.token.type": "output"}))
	in := one(t, metrics, "gen_ai.client.token.usage", merge(local, map[string]string{"gen_ai.token.type": "input"}))
	if out.count != 2 || out.sum != 15 || in.count != 2 || in.sum != 150 {
		t.Errorf("token usage: output %d/%g, input %d/%g; want 2/15, 2/150", out.count, out.sum, in.count, in.sum)
	}
	if !slices.Equal(out.bounds, metric.UsageBuckets) {
		t.Errorf("token usage bounds %v, want the conventions' %v", out.bounds, metric.UsageBuckets)
	}
	if tok := one(t, metrics, "tokscope.generation_tokens", local); tok.value != 15 || !tok.monotonic {
		t.Errorf("generation tokens %g monotonic %v, want 15, true", tok.value, tok.monotonic)
	}
	groq := map[string]string{"tokscope.endpoint": "groq", "gen_ai.provider.name": "groq", "server.address": "api.groq.com",
		"server.port": "443", "tokscope.outcome": "error", "error.type": "http_429"}
	if r := one(t, metrics, "tokscope.requests", groq); r.value != 1 {
		t.Errorf("groq error requests %g, want 1", r.value)
	}
	if r := one(t, metrics, "tokscope.requests", merge(local, map[string]string{"tokscope.outcome": "ok"})); r.value != 2 {
		t.Errorf("local ok requests %g, want 2", r.value)
	}
	if okLocal := having(metrics["tokscope.requests"], map[string]string{"tokscope.outcome": "ok"}); len(okLocal) > 0 {
		if _, ok := okLocal[0].attrs["error.type"]; ok {
			t.Error("an ok series carries error.type: empty Prometheus labels must be dropped")
		}
	}
	checkUnits(t, units)
	checkNoSecret(t, metrics, resource, "pw-secret", "otlp-secret")
}

func checkUnits(t *testing.T, units map[string]string) {
	t.Helper()
	for name, want := range map[string]string{
		"gen_ai.client.operation.time_to_first_chunk": "s", "gen_ai.client.token.usage": "{token}",
		"gen_ai.client.operation.duration": "s", "tokscope.requests": "{request}", "tokscope.time_to_first_byte": "s",
	} {
		if units[name] != want {
			t.Errorf("%s unit %q, want %q", name, units[name], want)
		}
	}
	for name := range units {
		if strings.HasPrefix(name, "tokscope_") {
			t.Errorf("%s went out under its Prometheus name: add it to otelNames", name)
		}
	}
}

func checkNoSecret(t *testing.T, metrics map[string][]point, resource map[string]string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		for k, v := range resource {
			if strings.Contains(v, s) {
				t.Errorf("resource %s carries a secret", k)
			}
		}
		for name, ps := range metrics {
			for _, p := range ps {
				for k, v := range p.attrs {
					if strings.Contains(v, s) {
						t.Errorf("%s attribute %s carries a secret", name, k)
					}
				}
			}
		}
	}
}

// one is the one point of the metric whose attributes include want.
func one(t *testing.T, metrics map[string][]point, name string, want map[string]string) point {
	t.Helper()
	ps, ok := metrics[name]
	if !ok {
		t.Fatalf("no metric %s pushed", name)
	}
	got := having(ps, want)
	if len(got) != 1 {
		t.Fatalf("%s: %d points with %v, want 1 (points: %v)", name, len(got), want, ps)
	}
	return got[0]
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// TestFailingCollectorIsANote: a collector answering 503, or not listening at all, makes
// Shutdown return promptly with a note counting the failed pushes, which never shows the
// headers; it is not a panic or a hang.
func TestFailingCollectorIsANote(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer otlp-secret")
	rcv := newReceiver(t)
	rcv.setStatus(http.StatusServiceUnavailable)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	for _, url := range []string{rcv.url, closed} {
		exp := promexport.New(testEndpoints())
		push, err := otlpexport.Start(context.Background(), exp.Registry(), otlpexport.Options{
			URL: url, Interval: 50 * ms, Timeout: 300 * ms, Endpoints: testEndpoints()})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "two pushes", func() bool { made, _ := otlpexport.Pushes(push); return made >= 2 })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		start := time.Now()
		err = push.Shutdown(ctx)
		cancel()
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%s: Shutdown took %v with a dead collector", url, took)
		}
		made, failed := otlpexport.Pushes(push)
		if err == nil || failed == 0 || failed != made {
			t.Fatalf("%s: Shutdown %v, pushes %d failed %d: want every push failed and said so", url, err, made, failed)
		}
		if !strings.Contains(err.Error(), "pushes failed") || strings.Contains(err.Error(), "otlp-secret") {
			t.Errorf("%s: note %q", url, err)
		}
	}
}

func TestEndpointURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/metrics"},
		{"http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/metrics"},
		{"https://otel.example.com/custom/path", "https://otel.example.com/custom/path"},
		{" http://collector:4318/v1/metrics ", "http://collector:4318/v1/metrics"},
		{"127.0.0.1:4318", ""},
		{"ftp://host/x", ""},
		{"http://user:pw@host:4318", ""},
		{"http://host:4318/v1/metrics?x=1", ""},
		{"http:///v1/metrics", ""},
	} {
		got, err := otlpexport.EndpointURL(c.in)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("EndpointURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
