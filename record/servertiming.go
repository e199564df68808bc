package record

import "tokscope/probe"

// ServerTiming is the server's own clock of one request in a record (DESIGN.md, "The server's
// own clock"): the keys of the contract, absent figures null, as the server gave them (JSON
// keeps every digit, so a replay reads them exactly). Source, decode_tps (vLLM's own
// tokens_per_second) and load_ms (Ollama's load_duration) are added keys; replay needs them.
type ServerTiming struct {
	Source        string   `json:"source"`
	TTFTMS        *float64 `json:"ttft_ms"`
	QueueMS       *float64 `json:"queue_ms"`
	DecodeMS      *float64 `json:"decode_ms"`
	DecodeTokens  *float64 `json:"decode_tokens"`
	PromptTokens  *float64 `json:"prompt_tokens"`
	CachedTokens  *float64 `json:"cached_tokens"`
	DraftN        *float64 `json:"draft_n"`
	DraftAccepted *float64 `json:"draft_accepted"`
	DecodeTPS     *float64 `json:"decode_tps"`
	LoadMS        *float64 `json:"load_ms"`
}

// opt is v, or nil when the server did not give it (-1).
func opt(v float64) *float64 {
	if v < 0 {
		return nil
	}
	return &v
}

// orAbsent is *p, or -1 when null.
func orAbsent(p *float64) float64 {
	if p == nil || *p < 0 {
		return -1
	}
	return *p
}

func serverTimingOf(t *probe.ServerTiming) *ServerTiming {
	if t == nil {
		return nil
	}
	return &ServerTiming{Source: t.Source, TTFTMS: opt(t.TTFTms), QueueMS: opt(t.QueueMs),
		DecodeMS: opt(t.DecodeMs), DecodeTokens: opt(t.DecodeTokens), PromptTokens: opt(t.PromptTokens),
		CachedTokens: opt(t.CachedTokens), DraftN: opt(t.DraftN), DraftAccepted: opt(t.DraftAccepted),
		DecodeTPS: opt(t.DecodeTPS), LoadMS: opt(t.LoadMs)}
}

func (r *ServerTiming) timing() *probe.ServerTiming {
	if r == nil {
		return nil
	}
	return &probe.ServerTiming{Source: r.Source, TTFTms: orAbsent(r.TTFTMS), QueueMs: orAbsent(r.QueueMS),
		DecodeMs: orAbsent(r.DecodeMS), DecodeTokens: orAbsent(r.DecodeTokens), PromptTokens: orAbsent(r.PromptTokens),
		CachedTokens: orAbsent(r.CachedTokens), DraftN: orAbsent(r.DraftN), DraftAccepted: orAbsent(r.DraftAccepted),
		DecodeTPS: orAbsent(r.DecodeTPS), LoadMs: orAbsent(r.LoadMS)}
}
