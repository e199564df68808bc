package apiwire

import (
	"encoding/json"

	"tokscope/sample"
)

// wireTimings is llama.cpp's `timings` object, read as the ServerTiming it says.
type wireTimings struct{ sample.ServerTiming }

func (w *wireTimings) UnmarshalJSON(b []byte) error {
	t := sample.NoServerTiming("llamacpp")
	err := decodeFigures(b, map[string]*sample.Figure{"prompt_ms": &t.TTFTms, "predicted_ms": &t.DecodeMs,
		"predicted_n": &t.DecodeTokens, "prompt_n": &t.PromptTokens, "cache_n": &t.CachedTokens,
		"draft_n": &t.DraftN, "draft_n_accepted": &t.DraftAccepted})
	if err == nil {
		w.ServerTiming = t
	}
	return err
}

// wireMetrics is vLLM's per-request `metrics` object (include_metrics), read as the
// ServerTiming it says.
type wireMetrics struct{ sample.ServerTiming }

func (w *wireMetrics) UnmarshalJSON(b []byte) error {
	t := sample.NoServerTiming("vllm")
	err := decodeFigures(b, map[string]*sample.Figure{"time_to_first_token_ms": &t.TTFTms,
		"queue_time_ms": &t.QueueMs, "generation_time_ms": &t.DecodeMs, "tokens_per_second": &t.DecodeTPS})
	if err == nil {
		w.ServerTiming = t
	}
	return err
}

// decodeFigures fills each figure of figs from the object's key of that name. A key it does
// not name is ignored; a figure that is not a non-negative number stays absent (-1). An object
// that is not one is the json.UnmarshalTypeError a tolerant chunk reader skips.
func decodeFigures(b []byte, figs map[string]*sample.Figure) error {
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
func ollamaTiming(load, promptEval, eval, evalCount, promptCount int64) *sample.ServerTiming {
	if promptEval < 0 && eval < 0 {
		return nil
	}
	t := sample.NoServerTiming("ollama")
	nsMs := func(ns int64) sample.Figure {
		if ns < 0 {
			return -1
		}
		return sample.Figure(ns) / 1e6
	}
	t.LoadMs, t.DecodeMs = nsMs(load), nsMs(eval)
	if promptEval >= 0 {
		t.TTFTms = nsMs(promptEval) + max(nsMs(load), 0)
	}
	if evalCount >= 0 {
		t.DecodeTokens = sample.Figure(evalCount)
	}
	if promptCount >= 0 {
		t.PromptTokens = sample.Figure(promptCount)
	}
	return &t
}

// takeServerTiming keeps the server's clock the event just decoded carried, if any (llama.cpp
// and vLLM send it once, on the last chunk; Ollama's was taken from its done line).
func (d *Decoder) takeServerTiming() {
	var t *sample.ServerTiming
	switch {
	case d.w.Timings != nil:
		t = &d.w.Timings.ServerTiming
	case d.w.Metrics != nil:
		t = &d.w.Metrics.ServerTiming
	}
	if t != nil && t.Source != "" { // "": the object was not one (decodeFigures)
		d.server = t
	}
	d.w.Timings, d.w.Metrics = nil, nil
}
