package probe

import "encoding/json"

// ServerTiming is the server's own clock for one request, as its response said (docs/server-side.md,
// "The server's own clock"): llama.cpp's `timings`, vLLM's `metrics`, Ollama's native
// durations. Times are milliseconds as the server gave them (Ollama's nanoseconds divided by
// 1e6), so tokscope keeps them to the hundredth of a ms and beyond; a figure the server did not
// give is -1. Its JSON is the record's "server_timing" (the contract's keys; source, decode_tps
// and load_ms added, as replay needs them): absent figures null, every digit kept, so a replay
// reads them exactly.
type ServerTiming struct {
	Source string `json:"source"` // "llamacpp", "vllm", "ollama"

	TTFTms   Figure `json:"ttft_ms"`   // llama.cpp prompt_ms; vLLM time_to_first_token_ms; Ollama load + prompt_eval
	QueueMs  Figure `json:"queue_ms"`  // vLLM queue_time_ms
	DecodeMs Figure `json:"decode_ms"` // llama.cpp predicted_ms; vLLM generation_time_ms; Ollama eval_duration
	// DecodeTokens is llama.cpp predicted_n, Ollama eval_count (vLLM gives none).
	DecodeTokens  Figure `json:"decode_tokens"`
	PromptTokens  Figure `json:"prompt_tokens"`  // llama.cpp prompt_n (the cached prefix excluded), Ollama prompt_eval_count
	CachedTokens  Figure `json:"cached_tokens"`  // llama.cpp cache_n
	DraftN        Figure `json:"draft_n"`        // llama.cpp draft_n (speculative decoding)
	DraftAccepted Figure `json:"draft_accepted"` // llama.cpp draft_n_accepted
	// DecodeTPS is vLLM's own tokens_per_second, when it gave one (the others' is derived).
	DecodeTPS Figure `json:"decode_tps"`
	LoadMs    Figure `json:"load_ms"` // Ollama load_duration: loading the model, part of TTFTms
}

// UnmarshalJSON reads a record's "server_timing": a key that is missing is absent, as null is.
func (t *ServerTiming) UnmarshalJSON(b []byte) error {
	type plain ServerTiming // without this method
	p := plain(NoServerTiming(""))
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*t = ServerTiming(p)
	return nil
}

// Figure is one of the server's figures: -1 when it did not give one, JSON null then.
type Figure float64

// MarshalJSON writes an absent figure as null, a given one as encoding/json writes a float64.
func (f Figure) MarshalJSON() ([]byte, error) {
	if f < 0 {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

// UnmarshalJSON reads null (or a negative number, which no server gives) as absent.
func (f *Figure) UnmarshalJSON(b []byte) error {
	var p *float64
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*f = -1
	if p != nil && *p >= 0 {
		*f = Figure(*p)
	}
	return nil
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
// serving speed; the aggregator keeps it out of the TTFT figures (docs/metrics.md: marked, not mixed).
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
		return float64(t.DecodeTPS), true
	}
	if t.DecodeTokens >= 2 && t.DecodeMs > 0 {
		return float64((t.DecodeTokens - 1) / (t.DecodeMs / 1000)), true
	}
	return 0, false
}

// DraftAcceptance is draft_n_accepted / draft_n under speculative decoding.
func (t *ServerTiming) DraftAcceptance() (float64, bool) {
	if t == nil || t.DraftN <= 0 || t.DraftAccepted < 0 {
		return 0, false
	}
	return float64(t.DraftAccepted / t.DraftN), true
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
	return float64(ttft)/1e6 - float64(t.TTFTms), true
}

// wireTimings is llama.cpp's `timings` object, read as the ServerTiming it says.
type wireTimings struct{ ServerTiming }

func (w *wireTimings) UnmarshalJSON(b []byte) error {
	t := NoServerTiming("llamacpp")
	err := decodeFigures(b, map[string]*Figure{"prompt_ms": &t.TTFTms, "predicted_ms": &t.DecodeMs,
		"predicted_n": &t.DecodeTokens, "prompt_n": &t.PromptTokens, "cache_n": &t.CachedTokens,
		"draft_n": &t.DraftN, "draft_n_accepted": &t.DraftAccepted})
	if err == nil {
		w.ServerTiming = t
	}
	return err
}

// wireMetrics is vLLM's per-request `metrics` object (include_metrics), read as the
// ServerTiming it says.
type wireMetrics struct{ ServerTiming }

func (w *wireMetrics) UnmarshalJSON(b []byte) error {
	t := NoServerTiming("vllm")
	err := decodeFigures(b, map[string]*Figure{"time_to_first_token_ms": &t.TTFTms,
		"queue_time_ms": &t.QueueMs, "generation_time_ms": &t.DecodeMs, "tokens_per_second": &t.DecodeTPS})
	if err == nil {
		w.ServerTiming = t
	}
	return err
}

// decodeFigures fills each figure of figs from the object's key of that name. A key it does
// not name is ignored; a figure that is not a non-negative number stays absent (-1). An object
// that is not one is the json.UnmarshalTypeError a tolerant chunk reader skips.
func decodeFigures(b []byte, figs map[string]*Figure) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	for k, raw := range obj {
		if f := figs[k]; f != nil {
			_ = f.UnmarshalJSON(raw) // not a number: f stays as it was, absent
		}
	}
	return nil
}

// ollamaTiming is the done line's durations (nanoseconds; -1 absent).
func ollamaTiming(load, promptEval, eval, evalCount, promptCount int64) *ServerTiming {
	if promptEval < 0 && eval < 0 {
		return nil
	}
	t := NoServerTiming("ollama")
	nsMs := func(ns int64) Figure {
		if ns < 0 {
			return -1
		}
		return Figure(ns) / 1e6
	}
	t.LoadMs, t.DecodeMs = nsMs(load), nsMs(eval)
	if promptEval >= 0 {
		t.TTFTms = nsMs(promptEval) + max(nsMs(load), 0)
	}
	if evalCount >= 0 {
		t.DecodeTokens = Figure(evalCount)
	}
	if promptCount >= 0 {
		t.PromptTokens = Figure(promptCount)
	}
	return &t
}

// takeServerTiming keeps the server's clock the event just decoded carried, if any (the last
// one wins: llama.cpp and vLLM send it once, on the last chunk).
func (d *decoder) takeServerTiming() {
	var t *ServerTiming
	switch {
	case d.w.Timings != nil:
		t = &d.w.Timings.ServerTiming
	case d.w.Metrics != nil:
		t = &d.w.Metrics.ServerTiming
	}
	if t != nil && t.Source != "" { // "": the object was not one (decodeFigures)
		d.s.Server = t
	}
	d.w.Timings, d.w.Metrics = nil, nil
}
