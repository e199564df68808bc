// Package stats owns the rolling statistics of every endpoint: whole-run and recent windows of
// HdrHistograms, aggregate tok/s, error counts. One Aggregator is written by a single
// goroutine (HdrHistogram is not goroutine-safe); readers get immutable Snapshots.
//
// It imports probe, servermetrics and config only; never bubbletea, lipgloss or go-openai.
package stats

import (
	"time"

	"tokscope/metric"
	"tokscope/sample"
)

// Dist summarises one metric over a window. Durations are in milliseconds, rates in tokens/s.
// Count == 0 means no data: every other field is then 0 and must be shown as "—" / null.
type Dist struct {
	Count                   int
	P10, P50, P90, P95, P99 float64
	Mean, Min, Max          float64
}

// Window holds every metric distribution over one window, over counted (ok, non-warm-up)
// requests only: one per registered metric (metric.All), read with Of. The named fields hold
// the metrics that had them before the registry, for the readers that name them; a new metric
// needs none (its distribution lives in dists).
type Window struct {
	dists [metric.NumIDs]Dist

	TTFB, TTFT, TTFA, TTFEvent Dist // ms
	DecodeTPS, E2ETPS          Dist // tokens/s per request
	TPOT                       Dist // ms
	ITL                        Dist // ms, every inter-chunk gap of every counted request
	MaxStall                   Dist // ms, per request longest gap
	TokensPerChunk             Dist
	ReasoningTPS, AnswerTPS    Dist // tokens/s per phase (reasoning models only)
	// Phase breakdown of TTFT (ms), over requests that had each phase.
	DNS, Connect, TLS, WaitHeaders, HeadersToFirstToken Dist
	// The prompt side, from the server's usage: prompt tokens (requests that reported
	// usage), cached prompt tokens (requests whose server reported cached_tokens; 0 counts),
	// and prefill tok/s = (prompt − cached) / TTFT (sample.Sample.PrefillRate).
	PromptTokens, CachedTokens Dist // tokens
	PrefillTPS                 Dist // tokens/s
	E2E                        Dist // ms, t0 → the last chunk
}

// Of is the distribution of metric id over the window.
func (w *Window) Of(id metric.ID) Dist { return *w.at(id) }

// Set sets the distribution of metric id (for building a Window by hand, as tests do).
func (w *Window) Set(id metric.ID, d Dist) { *w.at(id) = d }

// at is where the distribution of metric id lives: its named field when it has one (so that
// a Window built by naming its fields reads back through Of), else its registered slot.
func (w *Window) at(id metric.ID) *Dist {
	switch id {
	case metric.TTFB:
		return &w.TTFB
	case metric.TTFT:
		return &w.TTFT
	case metric.TTFA:
		return &w.TTFA
	case metric.TTFEvent:
		return &w.TTFEvent
	case metric.DecodeTPS:
		return &w.DecodeTPS
	case metric.E2ETPS:
		return &w.E2ETPS
	case metric.TPOT:
		return &w.TPOT
	case metric.ITL:
		return &w.ITL
	case metric.MaxGap:
		return &w.MaxStall
	case metric.TokensPerChunk:
		return &w.TokensPerChunk
	case metric.ReasoningTPS:
		return &w.ReasoningTPS
	case metric.AnswerTPS:
		return &w.AnswerTPS
	case metric.DNS:
		return &w.DNS
	case metric.Connect:
		return &w.Connect
	case metric.TLS:
		return &w.TLS
	case metric.WaitHeaders:
		return &w.WaitHeaders
	case metric.HeadersToFirstToken:
		return &w.HeadersToFirstToken
	case metric.PromptTokens:
		return &w.PromptTokens
	case metric.CachedTokens:
		return &w.CachedTokens
	case metric.PrefillTPS:
		return &w.PrefillTPS
	case metric.E2E:
		return &w.E2E
	}
	return &w.dists[id]
}

// ErrorRecord is one recent failed request, for the detail view.
type ErrorRecord struct {
	At      time.Time
	Kind    string
	Message string
}

// Point is one finished, counted request for time-series charts.
type Point struct {
	At        time.Time // wall-clock t0
	TTFT      float64   // ms
	DecodeTPS float64   // tokens/s; NaN-free: only set when DecodeOK
	DecodeOK  bool
}

// EndpointStats is one endpoint's statistics at snapshot time.
type EndpointStats struct {
	Name, Model, BaseURL string
	API                  string // the wire protocol: "chat" (also for an endpoint of unknown API), "anthropic", …

	Requests  int // finished, non-warm-up requests
	OK        int
	Errors    int
	Truncated int
	Warmups   int
	// Cut counts requests still in flight when the run ended and its grace was over: not in
	// Requests, not errors; a TTFT they had counts in the TTFT figures (docs/metrics.md).
	Cut        int
	ErrorKinds map[string]int // e.g. {"http_429": 2}

	// TokenSource is "usage", "estimate" or "chunks" when all counted requests agree, "mixed"
	// otherwise, "" with none ("unknown" for a counted Sample that named no source). Sources
	// are never silently mixed in one aggregate: OutputTokens and the tok/s distributions say
	// which sources they hold through TokenSource.
	TokenSource  string
	OutputTokens int64

	Whole  Window // the whole run
	Recent Window // the last RecentWindow (60 s)
	// ServerTiming is the server's own clock over the run: its source and model loads.
	ServerTiming ServerTiming

	// AggregateTPS is tokens received per second across all streams over the sliding window
	// AggregateWindow, tokens counted at their arrival, requests in flight included (live.go);
	// per second since the run's first token while that is more recent.
	AggregateTPS float64
	// Seconds is the last SecondsKept seconds up to the snapshot's own (not over yet: see
	// Second.Span), oldest first: tokens and TTFT per second, for time-series charts.
	Seconds []Second
	// InFlight is the counted requests in flight that have a first token; Latest the newest
	// TTFT and decode rate, in flight or finished.
	InFlight InFlight
	Latest   Latest

	LastError    *ErrorRecord  // most recent error, nil if none
	RecentErrors []ErrorRecord // newest last, bounded
	History      []Point       // bounded, newest last
	// Queue is the client queue time, ms (rate mode): of every non-warm-up request, and the
	// wait so far of the Waiting arrivals that have not started yet (Aggregator.SetWaiting).
	Queue        Dist
	Waiting      int
	BackoffTotal time.Duration // time spent backing off after 429s (never latency)

	// Open-loop arrivals so far (rate mode, Aggregator.SetArrivals): generated, and dropped
	// because the queue was full. Both 0 in the closed loop.
	Arrivals, DroppedArrivals uint64

	// The latest rate-limit headers any request of this endpoint carried (warm-ups and
	// interactive requests included: limits belong to the key). RateLimitAt is when the
	// request whose response carried them started; zero when none has yet, and then the two
	// counts mean nothing. A count is -1 when that response lacked its header.
	// LastRetryAfter is the latest Retry-After a response gave (0 if none).
	RateLimitRemainingRequests int
	RateLimitRemainingTokens   int
	RateLimitAt                time.Time
	LastRetryAfter             time.Duration

	// Raw per-request values of the last ≤1000 counted requests, oldest first, for
	// head-to-head comparisons (BootstrapMedianDiff). Fresh copies: callers may sort them.
	LastTTFT      []float64 // ms
	LastDecodeTPS []float64 // tokens/s, only requests where decode tok/s is defined

	SLO    *SLOStats    // nil without objectives (slo.go)
	Cost   *CostStats   // nil without a price (cost.go)
	Server *ServerStats // nil until the server-metrics scraper reported (server.go)
	GPU    *GPUStats    // nil without --gpu-metrics (gpu.go)

	// RunSpan is the first t0 to the last finish of a non-warm-up request; the throughput
	// is over it: output tokens of counted requests per second, and counted requests per
	// second (0 while RunSpan is 0); so are goodput and GPU-hour costs. A replay ends where its last request ended, so it
	// divides by the same span as the live run.
	RunSpan                 time.Duration
	OutputTPS, RequestsPerS float64
	// Cache is the cache mode the requests ran under: "bust", "reuse", "mixed" (a replay of
	// records of both), "" unknown (records from before the setting).
	Cache string
	// TargetRequests counts counted requests that asked for an exact output length
	// (--output-tokens); TargetReached those that got that many tokens.
	TargetRequests, TargetReached int
	// CacheHitRate is the sum of cached over the sum of prompt tokens of the counted requests
	// whose server reported both; nil without any (turns.go).
	CacheHitRate *float64
	// Turns are the figures by turn when a request of a conversation's later turn was seen
	// (--turns > 1); nil otherwise.
	Turns *TurnStats
	// Sessions are the agent-session figures (--sessions): ideal and served cache hits,
	// sessions completed, their durations; nil outside sessions (sessions.go).
	Sessions *SessionStats
}

// Snapshot is an immutable view of every endpoint's statistics at At.
type Snapshot struct {
	At        time.Time
	Endpoints []EndpointStats
	// TTFTFrom names the instant TTFT figures are measured to: "first-token" (docs/metrics.md's
	// definition), "first-event" or "first-answer" (WithTTFTFrom).
	TTFTFrom string
	// Rate is the open-loop arrival rate per endpoint, requests/s (WithRate); 0 in
	// the closed loop.
	Rate float64
	// End is how the run ended: its grace and how long it waited for the requests in flight
	// (Aggregator.SetEnd); zero (End.Finished false) while running and in a replay.
	End sample.RunEnd
	// Shards is how many shards' records a replay merged (--shard, --replay with several
	// records); 0 otherwise. Set by the replay, not by the Aggregator.
	Shards int
}

// Window lengths.
const (
	RecentWindow    = 60 * time.Second
	AggregateWindow = 10 * time.Second
)
