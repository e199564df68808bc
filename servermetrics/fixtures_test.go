package servermetrics

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func parseFile(t *testing.T, name string) instant {
	t.Helper()
	return parseFileFor(t, name, "any-model")
}

// parseTestdata is the metric families of testdata/name, read by the scraper's parser.
func parseTestdata(t *testing.T, name string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fams, err := parse(f)
	if err != nil {
		t.Fatalf("%s: the Prometheus text parser refused a real exposition: %v", name, err)
	}
	return fams
}

func parseFileFor(t *testing.T, name, model string) instant {
	t.Helper()
	in, note, ok := extract(parseTestdata(t, name), model)
	if !ok {
		t.Fatalf("%s: not recognised: %s", name, note)
	}
	return in
}

func wantValue(t *testing.T, what string, got Value, want float64) {
	t.Helper()
	if !got.OK || math.Abs(got.V-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %+v, want %v", what, got, want)
	}
}

func wantAbsent(t *testing.T, what string, got Value) {
	t.Helper()
	if got.OK {
		t.Errorf("%s = %v, want absent", what, got.V)
	}
}

// Each real exposition is recognised, and each figure comes from the family the README's
// table names, with the value written in the file.
func TestRealExpositions(t *testing.T) {
	t.Run("vllm v1", func(t *testing.T) {
		in := parseFile(t, "vllm-v1-0.10.txt")
		if in.kind != KindVLLM {
			t.Fatalf("kind %q", in.kind)
		}
		wantValue(t, "running", in.running, 0)
		wantValue(t, "waiting", in.waiting, 0)
		wantValue(t, "kv (kv_cache_usage_perc)", in.kv, 1.3798051715085968e-05)
		wantValue(t, "prefix hits (prefix_cache_hits_total)", in.hits, 0)
		wantValue(t, "prefix queries (prefix_cache_queries_total)", in.queries, 39)
		wantValue(t, "generation tokens", in.gen, 26)
		if !in.genLive {
			t.Error("vLLM's generation_tokens_total is counted per engine step: live")
		}
		wantAbsent(t, "hit-rate gauge (V0 only)", in.hitGauge)
	})
	t.Run("sglang docs example", func(t *testing.T) {
		in := parseFile(t, "sglang-docs.txt")
		if in.kind != KindSGLang {
			t.Fatalf("kind %q", in.kind)
		}
		wantValue(t, "running", in.running, 162)
		wantValue(t, "waiting (num_queue_reqs)", in.waiting, 2826)
		wantValue(t, "kv (token_usage)", in.kv, 0.28)
		wantValue(t, "hit rate (cache_hit_rate)", in.hitGauge, 0.007507552643049313)
		wantValue(t, "gen throughput gauge", in.genGauge, 86.50814177726902)
		wantValue(t, "generation_tokens_total", in.gen, 7.557572e+06)
		if in.genLive {
			t.Error("SGLang's generation_tokens_total rises when a request ends: not live")
		}
	})
	t.Run("sglang 0.5.10", func(t *testing.T) {
		in := parseFile(t, "sglang-0.5.10.txt")
		wantValue(t, "running", in.running, 0)
		wantValue(t, "kv", in.kv, 0.25)
		wantValue(t, "hit rate", in.hitGauge, 0.2)
		wantValue(t, "gen throughput gauge", in.genGauge, 425.5)
	})
	t.Run("tgi", func(t *testing.T) {
		in := parseFile(t, "tgi.txt")
		if in.kind != KindTGI {
			t.Fatalf("kind %q", in.kind)
		}
		wantValue(t, "running (batch_current_size)", in.running, 0)
		wantValue(t, "waiting (queue_size)", in.waiting, 0)
		wantValue(t, "generated tokens (histogram sum)", in.gen, 3423)
		wantAbsent(t, "kv", in.kv)
		wantAbsent(t, "prefix hits", in.hits)
	})
	t.Run("llama.cpp b10470 decoding", func(t *testing.T) {
		in := parseFile(t, "llamacpp-b10470/metrics-2-streams-running.txt")
		if in.kind != KindLlamaCpp {
			t.Fatalf("kind %q", in.kind)
		}
		wantValue(t, "running (requests_processing)", in.running, 2)
		wantValue(t, "waiting (requests_deferred)", in.waiting, 0)
		wantValue(t, "tokens_predicted_total mid-request", in.gen, 0)
		wantValue(t, "prefix hits (prompt_tokens_cached_total)", in.hits, 0)
		wantValue(t, "prefix queries (cached + processed)", in.queries, 90)
		wantAbsent(t, "kv (no gauge in this build)", in.kv)
	})
	t.Run("llama.cpp b10470 after", func(t *testing.T) {
		in := parseFile(t, "llamacpp-b10470/metrics-idle-after.txt")
		wantValue(t, "running", in.running, 0)
		wantValue(t, "tokens_predicted_total", in.gen, 192)
	})
}

// The busy slots of the real /slots answer: two requests, 46 tokens decoded each.
func TestDecodedInSlots(t *testing.T) {
	b, err := os.ReadFile("testdata/llamacpp-b10470/slots-2-streams-running.json")
	if err != nil {
		t.Fatal(err)
	}
	n, err := decodedInSlots(b)
	if err != nil || n != 92 {
		t.Fatalf("decoded = %v, %v; want 92", n, err)
	}
	older := `[{"id":0,"state":1,"next_token":{"n_decoded":7}},{"id":1,"state":0,"next_token":{"n_decoded":99}}]`
	if n, err := decodedInSlots([]byte(older)); err != nil || n != 7 {
		t.Fatalf("older build: decoded = %v, %v; want 7 (the idle slot's count is the last request's)", n, err)
	}
	if _, err := decodedInSlots([]byte(`{"error":"slots disabled"}`)); err == nil {
		t.Fatal("an object is not a slot list")
	}
}

func TestModelFilter(t *testing.T) {
	// One model named by path in the label, the client using an alias: taken.
	in := parseFileFor(t, "vllm-v1-0.10.txt", "qwen")
	wantValue(t, "generation tokens", in.gen, 26)

	two := `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="a"} 3
vllm:num_requests_running{engine="1",model_name="a"} 4
vllm:num_requests_running{engine="0",model_name="b"} 9
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="a"} 0.2
vllm:kv_cache_usage_perc{engine="1",model_name="a"} 0.4
vllm:kv_cache_usage_perc{engine="0",model_name="b"} 0.9
`
	fams, err := parse(stringsReader(two))
	if err != nil {
		t.Fatal(err)
	}
	a, _, ok := extract(fams, "a")
	if !ok {
		t.Fatal("model a not found")
	}
	wantValue(t, "running of a (sum over engines)", a.running, 7)
	wantValue(t, "kv of a (mean over engines)", a.kv, 0.3)
	b, _, _ := extract(fams, "b")
	wantValue(t, "running of b", b.running, 9)
	if _, note, ok := extract(fams, "c"); ok || note == "" {
		t.Fatalf("model c is not served there: ok=%v note=%q", ok, note)
	}
}

func TestNotRecognised(t *testing.T) {
	fams, err := parse(stringsReader("# TYPE go_goroutines gauge\ngo_goroutines 12\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, note, ok := extract(fams, "m"); ok || note == "" {
		t.Fatalf("a Go process's metrics are not a server's: ok=%v note=%q", ok, note)
	}
}

// SGLang: only rank 0 of a tensor-parallel group speaks for it; data-parallel ranks add up.
func TestSGLangRanks(t *testing.T) {
	text := `# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m",tp_rank="0",dp_rank="0"} 5
sglang:num_running_reqs{model_name="m",tp_rank="1",dp_rank="0"} 5
sglang:num_running_reqs{model_name="m",tp_rank="0",dp_rank="1"} 2
# TYPE sglang:realtime_tokens_total counter
sglang:realtime_tokens_total{model_name="m",tp_rank="0",mode="prefill_compute"} 1000
sglang:realtime_tokens_total{model_name="m",tp_rank="0",mode="decode"} 640
# TYPE sglang:gen_throughput gauge
sglang:gen_throughput{model_name="m",tp_rank="0"} 80
`
	fams, err := parse(stringsReader(text))
	if err != nil {
		t.Fatal(err)
	}
	in, _, ok := extract(fams, "m")
	if !ok {
		t.Fatal("not recognised")
	}
	wantValue(t, "running", in.running, 7)
	wantValue(t, "decode tokens (realtime_tokens_total{mode=decode})", in.gen, 640)
	if !in.genLive {
		t.Error("realtime_tokens_total is live")
	}
}

// vLLM V0: a hit-rate gauge, -1 while prefix caching is off (unknown, not -100 %).
func TestVLLMV0HitRateGauge(t *testing.T) {
	text := `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 1
# TYPE vllm:gpu_prefix_cache_hit_rate gauge
vllm:gpu_prefix_cache_hit_rate{model_name="m"} %s
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="m"} 0.61
`
	for _, tc := range []struct {
		gauge string
		want  Value
	}{{"-1.0", Value{}}, {"0.45", some(0.45)}} {
		fams, err := parse(stringsReader(sprintf(text, tc.gauge)))
		if err != nil {
			t.Fatal(err)
		}
		in, _, _ := extract(fams, "m")
		if in.hitGauge != tc.want {
			t.Errorf("gauge %s: hit rate %+v, want %+v", tc.gauge, in.hitGauge, tc.want)
		}
		wantValue(t, "kv (deprecated gpu_cache_usage_perc)", in.kv, 0.61)
	}
}
