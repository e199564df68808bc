package report

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/sample/sampletest"
	"tokscope/stats"
)

// synthEndpoint is the timing of one made-up endpoint of a synthetic run.
type synthEndpoint struct {
	name, model string
	ttft        time.Duration // mean
	tps         float64       // decode tok/s
	tokens      int           // output tokens per request
	errRate     float64       // share of requests that fail (http_500)
}

var synthEndpoints = []synthEndpoint{
	{"fast-gpu", "llama-3.1-8b-instruct", 90 * time.Millisecond, 120, 128, 0},
	{"slow-cpu", "qwen2.5-7b-instruct-q4_k_m", 600 * time.Millisecond, 40, 64, 0},
	{"flaky-cloud", "gpt-4o-mini", 350 * time.Millisecond, 60, 96, 0.06},
}

// synthRun makes perEndpoint finished requests for each endpoint (plus one warm-up each),
// `streams` in flight per endpoint, closed loop, from a fixed seed: the same arguments give
// the same Samples. Prompt sizes vary when varyPrompt. A request fails (http_500) at the
// endpoint's error rate; an ok one decodes all its tokens (finish_reason length), 4 bytes a
// chunk, at ±10 % of the endpoint's rate with ±40 % jitter between chunks.
func synthRun(eps []synthEndpoint, perEndpoint, streams int, varyPrompt bool) ([]config.Endpoint, []sample.Sample) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)
	var cfg []config.Endpoint
	var out []sample.Sample
	for _, ep := range eps {
		cfg = append(cfg, config.Endpoint{Name: ep.name, Model: ep.model})
		clock := make([]time.Time, streams)
		for i := range clock {
			clock[i] = t0.Add(time.Duration(i) * 37 * time.Millisecond)
		}
		for seq := 0; seq <= perEndpoint; seq++ {
			k := seq % streams
			prompt := 40
			if varyPrompt {
				prompt = 100 + rng.IntN(4000)
			}
			ttft := time.Duration(float64(ep.ttft) * (0.7 + 0.6*rng.Float64()) * (1 + float64(prompt)/8000))
			var s sample.Sample
			if rng.Float64() < ep.errRate {
				s = sampletest.Err(ep.name, ep.model, uint64(seq+1), clock[k], "http_500", 500, "internal server error").
					Times(200*time.Microsecond, ttft/2).EndAt(ttft/2).Prompt(prompt, 0).Sample()
			} else {
				b := sampletest.OK(ep.name, ep.model, uint64(seq+1), clock[k]).Times(200*time.Microsecond, ttft/2).Prompt(prompt, 0)
				at, tps := ttft, ep.tps*(0.9+0.2*rng.Float64())
				for i := range ep.tokens {
					if i > 0 {
						at += time.Duration(float64(time.Second) / tps * (0.6 + 0.8*rng.Float64()))
					}
					b.Chunk(at, 4, 0)
				}
				s = b.Tokens(ep.tokens, sample.SourceUsage).EndAfter(time.Millisecond).
					With(func(s *sample.Sample) { s.FinishReason = "length" }).Sample()
			}
			s.Warmup = seq == 0
			out = append(out, s)
			clock[k] = clock[k].Add(s.End + 50*time.Millisecond)
		}
	}
	return cfg, out
}

// synthInput feeds samples to a Collector and an Aggregator, as a headless run does.
func synthInput(t testing.TB, cfg []config.Endpoint, samples []sample.Sample) Input {
	t.Helper()
	agg := stats.New(cfg)
	col := NewCollector(cfg)
	var end time.Time
	for i := range samples {
		s := &samples[i]
		s.KeepMicroseconds() // as the Runner does
		agg.Add(s)
		col.Add(s)
		if e := s.Start.Add(s.End); e.After(end) {
			end = e
		}
	}
	return Input{Summary: agg.Snapshot(end), Requests: col, Version: "v0.0.0-test",
		Settings: []Setting{{"command line", "tokscope --no-tui --requests 40 --report run.html"}}}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
