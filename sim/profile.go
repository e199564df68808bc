package sim

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Profile describes one simulated endpoint: its timing, its chunking and the faults it injects.
// The zero value of an optional field means "off" (no jitter, no role chunk, no keep-alives,
// no faults).
type Profile struct {
	Name  string // path prefix: served at /<Name>/v1/...
	Model string // model id reported by /v1/models and echoed in chunks; defaults to Name

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
}

// DefaultMaxTokens is the output length of a profile whose MaxTokens is 0.
const DefaultMaxTokens = 256

// maxOutputTokens bounds what one request may ask for, so a typo cannot pin a handler for hours.
const maxOutputTokens = 1 << 20

// DemoProfiles returns the endpoints of `tokscope --demo`: four visibly different servers whose
// default 256-token answer ends within about seven seconds. Their seeds are 0, so every demo run
// differs.
func DemoProfiles() []Profile {
	return []Profile{
		{
			Name: "fast-gpu", Model: "llama-3.1-8b-instruct",
			TTFT: 80 * time.Millisecond, TTFTJitter: 20 * time.Millisecond, HeadersDelay: 10 * time.Millisecond,
			TokensPerSecond: 120, Jitter: 0.15, TokensPerChunk: 1, RoleChunk: true,
		},
		{
			// 12 tok/s would be a truer CPU, but a 256-token answer would then take 21 s.
			Name: "slow-cpu", Model: "qwen2.5-7b-instruct-q4_k_m",
			TTFT: 600 * time.Millisecond, TTFTJitter: 150 * time.Millisecond, HeadersDelay: 20 * time.Millisecond,
			TokensPerSecond: 40, Jitter: 0.25, TokensPerChunk: 1,
		},
		{
			Name: "reasoner", Model: "deepseek-r1-distill-qwen-14b",
			TTFT: 250 * time.Millisecond, TTFTJitter: 50 * time.Millisecond, HeadersDelay: 15 * time.Millisecond,
			TokensPerSecond: 45, Jitter: 0.1, TokensPerChunk: 1, ReasoningTokens: 96, RoleChunk: true,
		},
		{
			Name: "flaky-cloud", Model: "gpt-4o-mini",
			TTFT: 350 * time.Millisecond, TTFTJitter: 150 * time.Millisecond, HeadersDelay: 120 * time.Millisecond,
			TokensPerSecond: 60, Jitter: 0.35, TokensPerChunk: 3, RoleChunk: true,
			KeepAlive: 250 * time.Millisecond,
			Rate429:   0.08, RetryAfter: time.Second,
			Rate500: 0.03, RateMidStreamError: 0.03, RateCut: 0.02, RateStall: 0.01,
		},
	}
}

// normalized returns p with defaults filled in, or why p cannot be served.
func (p Profile) normalized() (Profile, error) {
	switch {
	case p.Name == "":
		return p, errors.New("empty profile name")
	case strings.ContainsAny(p.Name, "/?#% "):
		return p, fmt.Errorf("profile %q: name must be one URL path segment", p.Name)
	case !(p.TokensPerSecond > 0):
		return p, fmt.Errorf("profile %q: TokensPerSecond must be > 0", p.Name)
	case p.Jitter < 0 || p.Jitter > 1:
		return p, fmt.Errorf("profile %q: Jitter must be in 0..1", p.Name)
	case p.TTFT < 0 || p.TTFTJitter < 0 || p.HeadersDelay < 0 || p.KeepAlive < 0 || p.RetryAfter < 0:
		return p, fmt.Errorf("profile %q: negative duration", p.Name)
	case p.TokensPerChunk < 0 || p.ReasoningTokens < 0 || p.MaxTokens < 0:
		return p, fmt.Errorf("profile %q: negative token count", p.Name)
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
	return p, nil
}
