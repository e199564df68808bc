package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Profile describes one simulated endpoint: its timing, its chunking and the faults it injects.
// The zero value of an optional field means "off" (no jitter, no role chunk, no keep-alives,
// no faults).
type Profile struct {
	Name  string // path prefix: served at /<Name>/v1/...
	Model string // model id reported by /v1/models and echoed in chunks; defaults to Name
	// API is the API a client of this profile is meant to speak (the demo's endpoint for it):
	// "" or APIChat, APICompletions, ... The server answers all five on every profile anyway;
	// BaseURLFor(Name, API) is that client's base URL.
	API string

	TTFT         time.Duration // delay from request arrival to the first content/reasoning token
	TTFTJitter   time.Duration // uniform ± jitter on TTFT
	HeadersDelay time.Duration // delay before response headers are written (part of TTFT)

	TokensPerSecond float64 // decode speed (> 0)
	Jitter          float64 // fractional jitter on each inter-chunk gap (0.1 = ±10%), 0..1
	TokensPerChunk  int     // tokens per SSE chunk (≥1; >1 mimics speculative decoding); 0 means 1
	ReasoningTokens int     // tokens sent as delta.reasoning_content before the answer
	RoleChunk       bool    // send a role-only first chunk {"delta":{"role":"assistant"}} right after the headers
	// KeepAlive, if > 0, sends ": keep-alive" comment lines at this period from the moment the
	// headers are written until the stream ends (also during a stall, as a proxy in front of a
	// wedged backend would).
	KeepAlive time.Duration
	MaxTokens int // output length (reasoning included) when the request sets no limit; 0 means 256

	// Fault rates, each the probability per request (0..1). One uniform draw per request picks at
	// most one fault, in this order, so the rates are exact as long as they sum to at most 1.
	Rate429, Rate500, RateMidStreamError, RateCut, RateStall float64
	RetryAfter                                               time.Duration // Retry-After on 429, whole seconds rounded up; 0 omits the header
	Seed                                                     int64         // for reproducible fault/jitter draws; 0 = time-based

	// Contention: the profile's requests share one batch, as on a continuous-batching server.
	// A request is "running" from its admission until its response ends (its TTFT included).
	//
	// BatchSlowdown is the cost of each further running request: every gap between two chunks
	// of a stream is its tokens / (TokensPerSecond / (1 + BatchSlowdown·(running−1))), with
	// running counted when the earlier chunk is sent. It is a step-time model: one decode step
	// takes (1 + BatchSlowdown·(n−1))/TokensPerSecond with n requests in the batch, so
	// aggregate tok/s n·TokensPerSecond/(1 + BatchSlowdown·(n−1)) grows sub-linearly towards
	// TokensPerSecond/BatchSlowdown. 0 = no contention (every stream decodes at TokensPerSecond).
	BatchSlowdown float64
	// Step puts every chunk on the backend's decode-step clock, as a batching server sends
	// them: a chunk goes out at the first step boundary (multiples of Step since the server
	// started) at or after its own time, so the chunks of all running streams leave together,
	// once a step. 0 = each stream on its own clock.
	Step time.Duration
	// MaxRunning caps the requests running at once (vLLM max_num_seqs, llama.cpp slots). Further
	// requests wait first in, first out; their headers still come after HeadersDelay, and their
	// TTFT starts at admission, so the client's TTFT includes the wait. 0 = unlimited.
	MaxRunning int

	// PrefillTokensPerSecond adds the prompt's uncached tokens / PrefillTokensPerSecond to the
	// TTFT (after the jittered TTFT, which stays the fixed overhead). 0 = prefill costs nothing.
	PrefillTokensPerSecond float64
	// PrefixCache caches prompt prefixes in blocks of PrefixBlockTokens tokens, like vLLM's
	// automatic prefix caching: a block matches only behind an identical prefix, whole blocks
	// only, and never the prompt's last token. Usage then reports
	// prompt_tokens_details.cached_tokens. The cache holds KVCacheTokens/PrefixBlockTokens
	// blocks, least recently used out first; a prompt's blocks enter it when its first token
	// is due (prefill done).
	PrefixCache       bool
	PrefixBlockTokens int // 0 means 16
	// Tokenizer counts and hashes the prompt's text: TokenizerWords ("" too: one token a
	// word) or TokenizerCl100k (tokscope's offline tokenizer, so that the server's token
	// counts and block boundaries are those tokscope builds its prompts in).
	Tokenizer string
	// KVCacheTokens is the KV-cache capacity: vllm:kv_cache_usage_perc is the running requests'
	// prompt + generated tokens over it (at most 1), and it bounds the prefix cache. 0 means 65536.
	KVCacheTokens int

	// Timings: chat, completions and Responses streams end with llama.cpp's per-request
	// `timings`; VLLMMetrics: chat and completions streams end with vLLM's `metrics` when the
	// request asks ("include_metrics": true). Both follow the schedule (servertiming.go);
	// Ollama's /api/chat reports its durations always.
	Timings, VLLMMetrics bool

	// NoMetrics leaves the profile out of /metrics, as a hosted API exposes none.
	NoMetrics bool
	// CloseAfterStream answers streams with "Keep-Alive: timeout=5, max=100" yet closes the
	// connection right after each streamed response, as llama.cpp's llama-server does: a client
	// that reuses the connection at once finds it dead.
	CloseAfterStream bool
	// CloseDelay delays that close: a client that starts its next request at once surely
	// writes it into the connection before it dies (tests of the dead-connection retry).
	CloseDelay time.Duration

	// GPU, when it has a Count, serves dcgm-exporter-style GPU telemetry whose energy follows
	// the profile's work (gpu.go).
	GPU GPU
}

// Defaults of the profile fields whose zero value means "the default".
const (
	DefaultMaxTokens         = 256   // output length without a limit in the request
	DefaultPrefixBlockTokens = 16    // vLLM's block size
	DefaultKVCacheTokens     = 65536 // KV-cache capacity
)

// maxOutputTokens bounds what one request may ask for, so a typo cannot pin a handler for hours.
const maxOutputTokens = 1 << 20

// DemoProfiles returns the endpoints of `tokscope --demo`: four visibly different servers.
// Each answers its own MaxTokens in 1.1–1.4 s at concurrency 1 (so a card has figures
// within 3 s even after a warm-up request and a 1 s interval), when the demo sends each
// profile's MaxTokens as the endpoint's max_tokens. They model contention (a batch, slots),
// prefill and a prefix cache; all four appear in /metrics. flaky-cloud's faults come on a
// fixed schedule (its Seed, demoFaultSeed); the others' seeds are 0, so their jitter differs
// from run to run.
func DemoProfiles() []Profile {
	return []Profile{
		{
			// vLLM on a GPU: a wide batch, fast prefill, a KV cache that fills visibly from
			// about 16 streams (or fewer with long prompts).
			Name: "fast-gpu", Model: "llama-3.1-8b-instruct",
			TTFT: 60 * time.Millisecond, TTFTJitter: 15 * time.Millisecond, HeadersDelay: 10 * time.Millisecond,
			TokensPerSecond: 140, Jitter: 0.15, TokensPerChunk: 1, RoleChunk: true, MaxTokens: 160,
			BatchSlowdown: 0.07, MaxRunning: 64,
			PrefillTokensPerSecond: 8000, PrefixCache: true, KVCacheTokens: 8192,
			VLLMMetrics: true, // its per-request metrics, once tokscope knows it is vLLM
		},
		{
			// llama.cpp on a CPU with two slots: a batch barely helps, a third request waits,
			// and prefill is slow enough that a cached prefix shows in the TTFT. 12 tok/s would
			// be a truer CPU, but then an answer would take seconds.
			Name: "slow-cpu", Model: "qwen2.5-7b-instruct-q4_k_m",
			TTFT: 200 * time.Millisecond, TTFTJitter: 60 * time.Millisecond, HeadersDelay: 20 * time.Millisecond,
			TokensPerSecond: 30, Jitter: 0.25, TokensPerChunk: 1, MaxTokens: 28,
			BatchSlowdown: 0.5, MaxRunning: 2,
			PrefillTokensPerSecond: 150, PrefixCache: true, KVCacheTokens: 4096,
			Timings: true, // llama.cpp's per-request timings
		},
		{
			// Spoken to through the Anthropic Messages API (as vLLM serves it), so that the
			// demo shows an endpoint that is not chat: the same figures, thinking_delta events.
			Name: "reasoner", Model: "deepseek-r1-distill-qwen-14b", API: APIAnthropic,
			TTFT: 150 * time.Millisecond, TTFTJitter: 40 * time.Millisecond, HeadersDelay: 15 * time.Millisecond,
			TokensPerSecond: 70, Jitter: 0.1, TokensPerChunk: 1, ReasoningTokens: 40, RoleChunk: true, MaxTokens: 80,
			BatchSlowdown: 0.12, MaxRunning: 16,
			PrefillTokensPerSecond: 3000, PrefixCache: true, KVCacheTokens: 8192,
		},
		{
			// A remote server behind a busy gateway: barely slowed by load, prompt caching in
			// 128-token steps like OpenAI, and faults. Its faults come on a fixed schedule
			// (Seed): the warm-up and the first counted request succeed, the second is a 429,
			// then a 429, a 500, a cut stream, a 500… in the same order every run,
			// and no stall in its first 200 requests; so a headless demo of N requests always
			// sees the same errors and exits with the same status (1 from N = 2 on). Its
			// series are in /metrics like the others': a card with nothing to say about the
			// server would open the demo on a note.
			Name: "flaky-cloud", Model: "gpt-4o-mini",
			TTFT: 250 * time.Millisecond, TTFTJitter: 100 * time.Millisecond, HeadersDelay: 120 * time.Millisecond,
			TokensPerSecond: 90, Jitter: 0.35, TokensPerChunk: 3, RoleChunk: true, MaxTokens: 90,
			KeepAlive: 250 * time.Millisecond,
			Rate429:   0.08, RetryAfter: time.Second,
			Rate500: 0.03, RateMidStreamError: 0.03, RateCut: 0.02, RateStall: 0.01,
			BatchSlowdown: 0.02, PrefillTokensPerSecond: 5000, PrefixCache: true, PrefixBlockTokens: 128,
			Seed: demoFaultSeed,
		},
	}
}

// demoFaultSeed is flaky-cloud's Seed: the smallest of the seeds whose third request (the
// second counted, after the warm-up) is a 429, whose first 200 requests have no stall (it
// would hold a headless run for the stall limit), whose first 60 have every other fault and
// at most 6 429s (not a wall of them), and whose first 100 have 14–18 faults (the rates).
const demoFaultSeed = 1481

// normalized returns p with defaults filled in, or why p cannot be served.
func (p Profile) normalized() (Profile, error) {
	switch {
	case p.Name == "":
		return p, errors.New("empty profile name")
	case strings.ContainsAny(p.Name, "/?#% "):
		return p, fmt.Errorf("profile %q: name must be one URL path segment", p.Name)
	case p.Name == "metrics":
		return p, errors.New(`profile "metrics": the name is the server's /metrics`)
	case p.Name == "v1" || p.Name == "api":
		return p, fmt.Errorf("profile %q: the name is the server's root /%s (serving by model name)", p.Name, p.Name)
	case !(p.TokensPerSecond > 0):
		return p, fmt.Errorf("profile %q: TokensPerSecond must be > 0", p.Name)
	case p.Jitter < 0 || p.Jitter > 1:
		return p, fmt.Errorf("profile %q: Jitter must be in 0..1", p.Name)
	case p.TTFT < 0 || p.TTFTJitter < 0 || p.HeadersDelay < 0 || p.KeepAlive < 0 || p.RetryAfter < 0:
		return p, fmt.Errorf("profile %q: negative duration", p.Name)
	case p.TokensPerChunk < 0 || p.ReasoningTokens < 0 || p.MaxTokens < 0 || p.MaxRunning < 0 ||
		p.PrefixBlockTokens < 0 || p.KVCacheTokens < 0:
		return p, fmt.Errorf("profile %q: negative count", p.Name)
	case !(p.BatchSlowdown >= 0 && p.BatchSlowdown <= 1e6):
		return p, fmt.Errorf("profile %q: BatchSlowdown must be ≥ 0", p.Name)
	case !(p.PrefillTokensPerSecond >= 0 && p.PrefillTokensPerSecond <= math.MaxFloat64):
		return p, fmt.Errorf("profile %q: PrefillTokensPerSecond must be ≥ 0", p.Name)
	}
	if p.Tokenizer != "" && p.Tokenizer != TokenizerWords && p.Tokenizer != TokenizerCl100k {
		return p, fmt.Errorf("profile %q: unknown tokenizer %q (%s or %s)", p.Name, p.Tokenizer, TokenizerWords, TokenizerCl100k)
	}
	if p.API != "" && !slices.Contains(APIs, p.API) {
		return p, fmt.Errorf("profile %q: unknown API %q", p.Name, p.API)
	}
	for _, r := range []float64{p.Rate429, p.Rate500, p.RateMidStreamError, p.RateCut, p.RateStall} {
		if !(r >= 0 && r <= 1) {
			return p, fmt.Errorf("profile %q: fault rates must be in 0..1", p.Name)
		}
	}
	if p.Model == "" {
		p.Model = p.Name
	}
	if p.TokensPerChunk == 0 {
		p.TokensPerChunk = 1
	}
	if p.MaxTokens == 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	if p.PrefixBlockTokens == 0 {
		p.PrefixBlockTokens = DefaultPrefixBlockTokens
	}
	if p.KVCacheTokens == 0 {
		p.KVCacheTokens = DefaultKVCacheTokens
	}
	return p, nil
}
