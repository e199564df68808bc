package probe

import (
	"encoding/json"
	"maps"
	"sync"
)

// vllmURLs are the base URLs whose server is known to be vLLM (MarkVLLM): their chat and
// completions requests ask for vLLM's per-request metrics ("include_metrics": true). No
// other server ever receives the field: some refuse unknown fields.
var vllmURLs sync.Map // base URL → struct{}

// MarkVLLM says the server at baseURL is vLLM: the Scraper recognised its /metrics families
// (cli wires servermetrics.Options.OnKind here). Requests sent from then on ask it for its
// per-request metrics. Safe for concurrent use.
func MarkVLLM(baseURL string) { vllmURLs.Store(baseURL, struct{}{}) }

// KnownVLLM reports whether MarkVLLM was called for baseURL.
func KnownVLLM(baseURL string) bool {
	_, ok := vllmURLs.Load(baseURL)
	return ok
}

// withMetricsAsk adds "include_metrics": true to a request's own fields when its server is
// known to be vLLM and the API is one vLLM reports metrics on (chat, completions).
func withMetricsAsk(fields map[string]json.RawMessage, baseURL string, a wireAPI) map[string]json.RawMessage {
	if (a != apiChat && a != apiCompletions) || !KnownVLLM(baseURL) {
		return fields
	}
	out := make(map[string]json.RawMessage, len(fields)+1)
	maps.Copy(out, fields)
	out["include_metrics"] = json.RawMessage("true")
	return out
}
