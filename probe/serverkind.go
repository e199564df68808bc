package probe

import (
	"encoding/json"
	"maps"

	"tokscope/apiwire"
	"tokscope/sample"
)

// A Client asks its server for vLLM's per-request metrics ("include_metrics": true) on chat
// and completions requests once the server is known to be vLLM (MarkVLLM). No other server
// ever receives the field: some refuse unknown fields. What is known belongs to the Client,
// so two runs in one process (tests, a calibration beside a run) never share it.

// MarkVLLM says the client's server is vLLM: requests sent from then on ask it for its
// per-request metrics. Safe for concurrent use.
func (c *Client) MarkVLLM() { c.vllm.Store(true) }

// MarkVLLM says endpoint ep's server is vLLM: the Scraper recognised its /metrics families
// (cli wires servermetrics.Options.OnKind here), or discovery read it in /v1/models. Its
// requests sent from then on ask for the per-request metrics. Safe for concurrent use, before
// or during Run; an index out of range is ignored.
func (r *Runner) MarkVLLM(ep sample.EndpointIndex) {
	if l := r.lane(ep); l != nil {
		l.client.MarkVLLM()
	}
}

// withMetricsAsk adds "include_metrics": true to a request's own fields when its server is
// known to be vLLM and the API is one vLLM reports metrics on (chat, completions).
func withMetricsAsk(fields map[string]json.RawMessage, vllm bool, a apiwire.API) map[string]json.RawMessage {
	if (a != apiwire.Chat && a != apiwire.Completions) || !vllm {
		return fields
	}
	out := make(map[string]json.RawMessage, len(fields)+1)
	maps.Copy(out, fields)
	out["include_metrics"] = json.RawMessage("true")
	return out
}
