// Package config owns tokscope's configuration: the Config and Endpoint types, their defaults,
// the strict YAML loader (errors name file:line:col) and the config-file lookup order.
//
// It must not import any other tokscope package, bubbletea, lipgloss or go-openai.
package config

import (
	"os"
	"time"
)

// Defaults are the values an endpoint takes unless it overrides them.
const (
	DefaultPrompt      = "Write a short story about a lighthouse keeper who finds a message in a bottle."
	DefaultMaxTokens   = 256
	DefaultConcurrency = 1
	DefaultInterval    = time.Second
	DefaultTimeout     = 2 * time.Minute
	DefaultStall       = 30 * time.Second
	DefaultAPIKeyEnv   = "OPENAI_API_KEY"
)

// The APIs an endpoint may speak (Endpoint.API).
const (
	APIChat        = "chat"
	APICompletions = "completions"
	APIResponses   = "responses"
	APIAnthropic   = "anthropic"
	APIOllama      = "ollama"
)

// Config is the whole run configuration after the file, the flags and the defaults are merged.
type Config struct {
	// File is the config file this came from ("" when built from flags alone).
	File      string
	Endpoints []Endpoint
	// Grace is the top-level grace: how long requests in flight may finish when the run ends
	// (--grace overrides it); nil when the file does not set it.
	Grace *time.Duration
	// Trace is the top-level trace: (a Mooncake JSONL file, relative to the config file),
	// replayed when --trace is not given; "" without.
	Trace string
	// Watch is the watch: section (watch.go), nil without one. A config with a watch: section
	// may have no endpoints: it is then for `tokscope watch` only.
	Watch *Watch
	// Tiers are the top-level tiers: (tier.go), in the order written; --tier replaces them.
	Tiers []Tier
	// Sessions is the top-level sessions: (a file, glob or directory of agent sessions,
	// relative to the config file), replayed when --sessions is not given; "" without.
	Sessions string
	// SessionStart is the top-level session_start: SessionStartFirst or SessionStartRandom;
	// "" when not given (--session-start decides, first by default).
	SessionStart string
}

// Endpoint is one OpenAI-compatible endpoint to measure, with every default resolved.
type Endpoint struct {
	Name    string // unique, shown on its card; defaults to the model, or host:port/model when endpoints share it
	BaseURL string // e.g. http://127.0.0.1:8080/v1
	Model   string
	// API is the wire protocol the endpoint speaks: APIChat ("" means chat), APICompletions,
	// APIResponses, APIAnthropic or APIOllama (docs/apis.md, "Wire protocols").
	API string

	// APIKeyEnv names the environment variable holding the key. The key itself is read at
	// request time through APIKey() and is never stored in Config, printed, logged or recorded.
	APIKeyEnv string

	Headers   map[string]string // extra request headers (values may use ${ENV})
	ExtraBody map[string]any    // merged into the JSON request body (ignore_eos, temperature: 0, ...)

	Prompt      string
	MaxTokens   int
	Concurrency int
	Interval    time.Duration
	Timeout     time.Duration // deadline per request (context deadline, never http.Client.Timeout)
	Stall       time.Duration // no chunk for this long ends the request as a "stall" error

	// The workload (package workload builds each request from these). The prompt comes from
	// Prompts when set, else from InputTokens when set, else it is Prompt; OutputTokens, when
	// set, replaces MaxTokens and asks the server to ignore EOS.
	InputTokens  TokenLength // synthetic prompts of N[:SD] tokens
	OutputTokens TokenLength // max_tokens = min_tokens = N[:SD], ignore_eos
	Prompts      string      // JSONL or ShareGPT file, requests cycle through it
	Cache        string      // CacheBust or CacheReuse
	// Turns > 1: each stream sends conversations of Turns requests, each re-sending the
	// earlier turns with the replies as they streamed (0 and 1: single requests).
	Turns        int
	ThinkTime    ThinkTime // pause between a reply and the next turn
	SharedPrefix int       // tokens of system text every prompt starts with (0: none)

	InsecureSkipVerify bool // opt-in per endpoint; shown in its card

	// GPUMetrics is an NVIDIA dcgm-exporter (or compatible) /metrics URL scraped beside the
	// server's (gpu_metrics:, --gpu-metrics): watts, utilisation, tokens per joule. "" = none.
	GPUMetrics string

	SLO   SLO    // per-request objectives (zero: none)
	Price *Price // nil: no price, no cost figures

	// KnownVLLM: the server is known to be vLLM before the run (discovery read it in
	// /v1/models' owned_by), so its requests ask for vLLM's per-request metrics from the
	// first on (probe's serverkind.go). Never read from a config file or a flag.
	KnownVLLM bool
}

// APIKey reads the endpoint's key from the environment at the moment it is needed, so that
// the key never sits in a struct that could be printed or serialised. "" means no key.
func (e Endpoint) APIKey() string {
	if e.APIKeyEnv == "" {
		return ""
	}
	return os.Getenv(e.APIKeyEnv)
}
