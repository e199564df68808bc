package probe

import "math"

// ServerTiming is the server's own clock for one request, as its response said (DESIGN.md,
// "The server's own clock"): llama.cpp's `timings`, vLLM's `metrics`, Ollama's native
// durations. Times are milliseconds as the server gave them (Ollama's nanoseconds divided by
// 1e6), so tokscope keeps them to the hundredth of a ms and beyond; a figure the server did not
// give is -1.
type ServerTiming struct {
	Source string // "llamacpp", "vllm", "ollama"

	TTFTms   float64 // llama.cpp prompt_ms; vLLM time_to_first_token_ms; Ollama load + prompt_eval
	QueueMs  float64 // vLLM queue_time_ms
	DecodeMs float64 // llama.cpp predicted_ms; vLLM generation_time_ms; Ollama eval_duration
	// DecodeTokens is llama.cpp predicted_n, Ollama eval_count (vLLM gives none).
	DecodeTokens float64
	// DecodeTPS is vLLM's own tokens_per_second, when it gave one (the others' is derived).
	DecodeTPS     float64
	PromptTokens  float64 // llama.cpp prompt_n (the cached prefix excluded), Ollama prompt_eval_count
	CachedTokens  float64 // llama.cpp cache_n
	DraftN        float64 // llama.cpp draft_n (speculative decoding)
	DraftAccepted float64 // llama.cpp draft_n_accepted
	LoadMs        float64 // Ollama load_duration: loading the model, part of TTFTms
}

// NoServerTiming is a ServerTiming with every figure absent.
func NoServerTiming(source string) ServerTiming {
	return ServerTiming{Source: source, TTFTms: -1, QueueMs: -1, DecodeMs: -1, DecodeTokens: -1,
		DecodeTPS: -1, PromptTokens: -1, CachedTokens: -1, DraftN: -1, DraftAccepted: -1, LoadMs: -1}
}

// ModelLoadMs is the load time above which a request counts as having paid for loading the
// model: Ollama reports a few ms of load_duration on every request (a check that the model is
// there), and hundreds when it was loaded.
const ModelLoadMs = 100

// ModelLoad says the request paid for loading the model: Ollama's load_duration is over
// ModelLoadMs and is most of the server's TTFT. Such a request's TTFT is not the server's
// serving speed; the aggregator keeps it out of the TTFT figures (DESIGN.md: marked, not mixed).
func (t *ServerTiming) ModelLoad() bool {
	return t != nil && t.LoadMs > ModelLoadMs && t.LoadMs*2 > t.TTFTms
}

// DecodeRate is the server's decode speed: vLLM's tokens_per_second, else
// (decode tokens − 1) / decode time (llama.cpp predicted_n over predicted_ms, Ollama eval_count
// over eval_duration).
func (t *ServerTiming) DecodeRate() (float64, bool) {
	if t == nil {
		return 0, false
	}
	if t.DecodeTPS >= 0 {
		return t.DecodeTPS, true
	}
	if t.DecodeTokens >= 2 && t.DecodeMs > 0 {
		return (t.DecodeTokens - 1) / (t.DecodeMs / 1000), true
	}
	return 0, false
}

// DraftAcceptance is draft_n_accepted / draft_n under speculative decoding.
func (t *ServerTiming) DraftAcceptance() (float64, bool) {
	if t == nil || t.DraftN <= 0 || t.DraftAccepted < 0 {
		return 0, false
	}
	return t.DraftAccepted / t.DraftN, true
}

// OutsideMs is the client's TTFT less the server's: the network, HTTP, templating, a wait for
// a llama.cpp slot, the client itself.
func (s *Sample) OutsideMs() (float64, bool) {
	t := s.Server
	if t == nil || t.TTFTms < 0 {
		return 0, false
	}
	ttft, ok := s.TTFT()
	if !ok {
		return 0, false
	}
	return float64(ttft)/1e6 - t.TTFTms, true
}

// wireTimings is llama.cpp's `timings` object.
type wireTimings struct {
	CacheN         *float64 `json:"cache_n"`
	PromptN        *float64 `json:"prompt_n"`
	PromptMs       *float64 `json:"prompt_ms"`
	PredictedN     *float64 `json:"predicted_n"`
	PredictedMs    *float64 `json:"predicted_ms"`
	DraftN         *float64 `json:"draft_n"`
	DraftNAccepted *float64 `json:"draft_n_accepted"`
}

// wireMetrics is vLLM's per-request `metrics` object (include_metrics).
type wireMetrics struct {
	TTFTms          *float64 `json:"time_to_first_token_ms"`
	QueueMs         *float64 `json:"queue_time_ms"`
	GenerationMs    *float64 `json:"generation_time_ms"`
	MeanITLms       *float64 `json:"mean_itl_ms"`
	TokensPerSecond *float64 `json:"tokens_per_second"`
}

// or returns *p, or -1 when absent or not a finite non-negative number.
func or(p *float64) float64 {
	if p == nil || *p < 0 || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return -1
	}
	return *p
}

func (w *wireTimings) timing() *ServerTiming {
	t := NoServerTiming("llamacpp")
	t.TTFTms, t.DecodeMs = or(w.PromptMs), or(w.PredictedMs)
	t.DecodeTokens, t.PromptTokens, t.CachedTokens = or(w.PredictedN), or(w.PromptN), or(w.CacheN)
	t.DraftN, t.DraftAccepted = or(w.DraftN), or(w.DraftNAccepted)
	return &t
}

func (w *wireMetrics) timing() *ServerTiming {
	t := NoServerTiming("vllm")
	t.TTFTms, t.QueueMs, t.DecodeMs = or(w.TTFTms), or(w.QueueMs), or(w.GenerationMs)
	t.DecodeTPS = or(w.TokensPerSecond)
	return &t
}

// ollamaTiming is the done line's durations (nanoseconds; -1 absent).
func ollamaTiming(load, promptEval, eval, evalCount, promptCount int64) *ServerTiming {
	if promptEval < 0 && eval < 0 {
		return nil
	}
	t := NoServerTiming("ollama")
	nsMs := func(ns int64) float64 {
		if ns < 0 {
			return -1
		}
		return float64(ns) / 1e6
	}
	t.LoadMs, t.DecodeMs = nsMs(load), nsMs(eval)
	if promptEval >= 0 {
		t.TTFTms = nsMs(promptEval) + max(nsMs(load), 0)
	}
	if evalCount >= 0 {
		t.DecodeTokens = float64(evalCount)
	}
	if promptCount >= 0 {
		t.PromptTokens = float64(promptCount)
	}
	return &t
}

// takeServerTiming keeps the server's clock the event just decoded carried, if any (the last
// one wins: llama.cpp and vLLM send it once, on the last chunk).
func (d *decoder) takeServerTiming() {
	switch {
	case d.w.Timings != nil:
		d.s.Server = d.w.Timings.timing()
		d.w.Timings = nil
	case d.w.Metrics != nil:
		d.s.Server = d.w.Metrics.timing()
		d.w.Metrics = nil
	}
}
