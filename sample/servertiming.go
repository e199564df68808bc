package sample

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
	PromptTokens  Figure `json:"prompt_tokens"`  // llama.cpp prompt_n (the cached prefix excluded), Ollama prompt_eval_count (the whole prompt)
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
