// Package servermetrics scrapes an inference server's own Prometheus /metrics, beside the
// client-side measurement: requests running and waiting, KV-cache usage, prefix-cache hit rate
// and the server's generation tok/s, for vLLM, SGLang, llama.cpp and TGI.
//
// It imports config and the Prometheus libraries only; never probe, stats, ui, bubbletea,
// lipgloss or go-openai. Scrapes run in the Scraper's own goroutines, never on a probe's path,
// and a failed scrape is a note, never an error count.
package servermetrics

import (
	"encoding/json"
	"time"
)

// Kind is the server family an exposition was recognised as.
type Kind string

const (
	KindVLLM     Kind = "vllm"
	KindSGLang   Kind = "sglang"
	KindLlamaCpp Kind = "llamacpp"
	KindTGI      Kind = "tgi"
)

// Value is one figure of a scrape; OK is false when the server does not expose it (or it
// is undefined this time, such as a rate before the second scrape). V is then 0.
type Value struct {
	V  float64
	OK bool
}

func some(v float64) Value { return Value{V: v, OK: true} }

// MarshalJSON writes a figure as a number, null when the server did not expose it: a
// Reading's and a GPUReading's JSON is a --record file's scrape line (package record).
func (v Value) MarshalJSON() ([]byte, error) {
	if !v.OK {
		return []byte("null"), nil
	}
	return json.Marshal(v.V)
}

// UnmarshalJSON reads null as a figure not exposed.
func (v *Value) UnmarshalJSON(b []byte) error {
	var p *float64
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*v = Value{}
	if p != nil {
		*v = some(*p)
	}
	return nil
}

// RateWindow is the span over which counters become rates (generation tok/s, prefix-cache hit
// rate): the client's aggregate tok/s uses the same 10 s, so the two can be read side by side.
const RateWindow = 10 * time.Second

// Reading is one endpoint's server-side figures from one scrape. Its JSON is the figures of a
// --record file's server line (package record, which writes At and GenSpan itself).
type Reading struct {
	Kind Kind      `json:"kind,omitempty"`
	At   time.Time `json:"-"` // when the scrape's response arrived

	Running Value `json:"running"` // requests the server is running (in its batch, or busy slots)
	Waiting Value `json:"waiting"` // requests queued in the server, waiting for a batch slot
	// KVCacheUsage is the fraction of the KV cache in use, 0–1.
	KVCacheUsage Value `json:"kv_cache_usage"`
	// PrefixCacheHitRate is the share of prompt tokens served from the prefix cache, 0–1:
	// from the hit and query counters over RateWindow where the server counts them, else the
	// server's own hit-rate gauge.
	PrefixCacheHitRate Value `json:"prefix_cache_hit_rate"`
	// GenTPS is the server's generation tokens/s over RateWindow.
	GenTPS Value `json:"gen_tps"`
	// GenLive reports whether GenTPS rises while tokens stream. False when the only source is
	// a counter the server raises when a request ends (TGI, llama.cpp without /slots, SGLang's
	// generation_tokens_total): then GenTPS comes in bursts as requests finish.
	GenLive bool `json:"gen_live"`

	// What happened since the previous scrape of this endpoint, for run-level figures.
	// GenTokens is the tokens generated over GenSpan (the gauge × GenSpan where the server
	// gives only a throughput gauge); not OK on the first scrape. PrefixHits/PrefixQueries are
	// the counters' increments when PrefixFromCounters, else 0 (the hit rate is then a gauge);
	// a record leaves out a 0, which reads back as 0 (no stand-in for "not counted").
	GenTokens          Value         `json:"gen_tokens"`
	GenSpan            time.Duration `json:"-"`
	PrefixHits         float64       `json:"prefix_hits,omitempty"`
	PrefixQueries      float64       `json:"prefix_queries,omitempty"`
	PrefixFromCounters bool          `json:"prefix_from_counters"`
}

// State says whether an Update carries a Reading.
type State int

const (
	// StateOK: the scrape was read and recognised; Reading holds it.
	StateOK State = iota
	// StateUnavailable: no metrics could be fetched (connection refused, HTTP 404, timeout,
	// a body too large, …).
	StateUnavailable
	// StateUnrecognised: the server answered, but with no family tokscope knows, or none for
	// this endpoint's model.
	StateUnrecognised
)

// Update is what the Scraper reports for one endpoint after each of its scrapes; the UI
// receives it as a message of its own. Note is a short, quiet explanation when State is not
// StateOK ("HTTP 404", "connection refused", "not recognised"): it never holds a URL, a header
// or a response body, so it cannot leak a key.
type Update struct {
	Endpoint int // index in the configured order, as in probe events
	// Source is what was scraped: the server (Reading) or its GPUs' exporter (GPU, gpu.go).
	// The zero value is the server, so Updates built before GPU telemetry read as before.
	Source  Source
	State   State
	Reading Reading    // when State == StateOK and Source == SourceServer
	GPU     GPUReading // when State == StateOK and Source == SourceGPU
	Note    string
}
