package watch

import (
	"path/filepath"
	"testing"
	"time"
)

// TestCapturesReadAsTheySay: one scrape of each real capture (servermetrics/testdata) gives
// the gauges its text holds, and – for what the server does not export.
func TestCapturesReadAsTheySay(t *testing.T) {
	dir := filepath.Join("..", "servermetrics", "testdata")
	for _, c := range []struct {
		file                 string
		kind                 Kind
		running, waiting, kv *float64
	}{
		{"vllm-v1-0.10.txt", KindVLLM, num(0), num(0), num(1.3798051715085968e-05)},
		{"sglang-docs.txt", KindSGLang, num(162), num(2826), num(0.28)},
		{"tgi.txt", KindTGI, num(0), num(0), nil},
		{"llamacpp-b10470/metrics-2-streams-running.txt", KindLlamaCpp, num(2), num(0), nil},
	} {
		in := instantOf(t, "k", filepath.Join(dir, c.file), t0)
		if in.Kind != c.kind || len(in.Models) != 1 {
			t.Errorf("%s: kind %q, %d models", c.file, in.Kind, len(in.Models))
			continue
		}
		f := NewFleet(time.Second)
		f.SetTargets([]Target{{URL: "k", MetricsPath: ""}})
		in.Target = Target{URL: "k"}.Key()
		f.Observe(in)
		r := f.Rows(t0)[0]
		for _, g := range []struct {
			what      string
			got, want *float64
		}{{"running", r.Running, c.running}, {"waiting", r.Waiting, c.waiting}, {"kv", r.KVCacheUsage, c.kv}} {
			if g.want == nil {
				if g.got != nil {
					t.Errorf("%s: %s = %v, want – (not exported)", c.file, g.what, *g.got)
				}
				continue
			}
			near(t, c.file+" "+g.what, g.got, *g.want)
		}
		if r.GenTPS != nil || r.TTFT != nil {
			t.Errorf("%s: rates from one scrape", c.file)
		}
	}
}

// TestOneRowPerModel: a server whose series name two models has a row for each; engines of
// one model add up, their KV use is the mean; a tensor-parallel rank other than 0 is left out.
func TestOneRowPerModel(t *testing.T) {
	text := `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="a"} 3
vllm:num_requests_running{engine="1",model_name="a"} 4
vllm:num_requests_running{engine="0",model_name="b"} 9
vllm:num_requests_running{engine="0",model_name="b",tp_rank="1"} 9
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="a"} 0.2
vllm:kv_cache_usage_perc{engine="1",model_name="a"} 0.4
vllm:kv_cache_usage_perc{engine="0",model_name="b"} 0.9
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="a"} 100
vllm:generation_tokens_total{engine="1",model_name="a"} 100
vllm:generation_tokens_total{engine="0",model_name="b"} 50
`
	f, tg := oneTargetFleet(t, 10*time.Second)
	f.Observe(instantOfText(t, tg.Key(), text, t0))
	later := instantOfText(t, tg.Key(), text, t0.Add(2*time.Second))
	later.Models[0].Counters[cGen] += 40 // model a: 40 more tokens over 2 s
	f.Observe(later)
	rows := f.Rows(t0.Add(2 * time.Second))
	if len(rows) != 2 || rows[0].Model != "a" || rows[1].Model != "b" {
		t.Fatalf("rows %+v", rows)
	}
	near(t, "a running (two engines)", rows[0].Running, 7)
	near(t, "a kv (mean)", rows[0].KVCacheUsage, 0.3)
	near(t, "a gen tok/s", rows[0].GenTPS, 20)
	near(t, "b running (rank 0 only)", rows[1].Running, 9)
	near(t, "b gen tok/s", rows[1].GenTPS, 0)
}
