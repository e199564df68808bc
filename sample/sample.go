// Package sample is the vocabulary every package speaks about a run: the Sample (what happened
// to one streamed request, instant by instant), the Events a run emits, and the figures derived
// from them (TTFT, decode rate, ITL, the server's own clock). It is a leaf: probe makes Samples,
// and the packages that only read them (metric, stats, record, export, report, the exporters)
// import this package and not the engine.
package sample

import (
	"time"

	"tokscope/workload"
)

// Outcome is how a request ended.
type Outcome string

const (
	OutcomeOK        Outcome = "ok"        // a finish_reason was seen
	OutcomeTruncated Outcome = "truncated" // the stream ended without a finish_reason
	OutcomeError     Outcome = "error"     // see Sample.ErrorKind
)

// Error kinds (Sample.ErrorKind). HTTP errors are "http_<status>", e.g. "http_429".
const (
	ErrDNS         = "dns"
	ErrConnect     = "connect"
	ErrTLS         = "tls"
	ErrTimeout     = "timeout"
	ErrStall       = "stall"
	ErrStreamError = "stream_error"
	ErrCanceled    = "canceled"
	ErrInternal    = "internal" // a bug in tokscope itself, recovered; details in the --log file
)

// TokenSource says where an output-token count came from, best first.
type TokenSource string

const (
	SourceUsage    TokenSource = "usage"    // final or cumulative per-chunk usage from the server
	SourceEstimate TokenSource = "estimate" // offline tokenizer estimate of the whole text
	SourceChunks   TokenSource = "chunks"   // one token per token-bearing chunk
)

// Absent marks an instant that did not happen (e.g. no TLS on a plain connection, or no
// first token on a failed request).
const Absent time.Duration = -1

// Chunk is one SSE data chunk as it arrived.
type Chunk struct {
	At        time.Duration // arrival offset from t0, stamped right after the raw read
	Content   int           // bytes of delta.content
	Reasoning int           // bytes of delta.reasoning_content / delta.reasoning
	// Tokens is the chunk's token count where the server reports cumulative usage per chunk,
	// else 0 (then only the request total N is known).
	Tokens int
}

// TokenBearing reports whether the chunk carries content or reasoning text.
func (c Chunk) TokenBearing() bool { return c.Content > 0 || c.Reasoning > 0 }

// Sample is everything measured about one finished request. Instants are offsets from t0 on
// the monotonic clock, Absent when they did not happen. Derived metrics are methods so that a
// record replayed later computes exactly what the live run computed.
type Sample struct {
	Endpoint string // endpoint name
	Model    string
	API      string // the wire protocol: "chat", "completions", "responses", "anthropic", "ollama"
	Seq      uint64 // request number within the endpoint, from 1
	Warmup   bool   // warm-up requests are recorded but never enter statistics
	// Stream is the id of the interactive Stream/Race request this was (Done.Stream), 0 for
	// the background loops; interactive requests never enter statistics either.
	Stream uint64
	// ResponseID is the "id" of the first chunk (e.g. chatcmpl-…); lets tests and the
	// simulator correlate a request with the server's own send times.
	ResponseID string

	Start time.Time     // wall-clock time of t0 (for time axes and records)
	Queue time.Duration // client queue: time waiting for a free worker slot before t0

	// httptrace phases; Absent when the connection was reused.
	DNS     time.Duration // DNS lookup duration
	Connect time.Duration // TCP connect duration
	TLS     time.Duration // TLS handshake duration
	Reused  bool          // the connection came from the idle pool
	// ConnRetry: the request failed on a reused connection before any byte of a response
	// (the server had closed it) and was sent again on a new one; the instants are those of
	// that second attempt.
	ConnRetry bool

	Wrote       time.Duration // request fully written
	Headers     time.Duration // first response byte
	FirstEvent  time.Duration // first SSE data chunk of any kind
	FirstToken  time.Duration // first chunk with content or reasoning
	FirstAnswer time.Duration // first chunk with content
	LastToken   time.Duration // last chunk with content or reasoning
	End         time.Duration // the request was finished (stream closed or error)

	Chunks []Chunk // every data chunk, in arrival order
	// Clock is the clock that stamped Headers and the chunks (kstamp.go): ClockKernel when the
	// kernel's receive time stamped every one of them, ClockUser when time.Now() after the
	// read stamped at least one (or none came); "" in records written before tokscope said.
	Clock string

	Tokens          int         // N, output tokens
	Source          TokenSource // where Tokens came from
	ReasoningTokens int         // of Tokens, reasoning (usage details, else estimate); 0 if none
	PromptTokens    int         // from usage when given, else 0
	// CachedTokens is usage.prompt_tokens_details.cached_tokens: the prompt tokens a server
	// prefix cache served. -1 when the server did not report it (which is not 0).
	CachedTokens int
	// OutputTarget is the output length the request asked for with --output-tokens
	// (min_tokens = max_tokens, ignore_eos); 0 without.
	OutputTarget int
	// Cache is the cache mode the request ran under: "bust" when its prompt started with a
	// unique tag, "reuse" when not; "" in records written before tokscope had the setting.
	Cache string
	// Conversation and Turn place the request in its conversation under --turns (both from
	// 1); 0 outside conversations.
	Conversation uint64
	Turn         int
	// Session places the request in an agent session under --sessions (its context, parent,
	// depth, gap, blocks and ideal cached prefix; Turn is its place in its context); nil
	// otherwise.
	Session *workload.SessionTurn

	// Cut: the request was still in flight when the run ended and its grace period was over
	// (finish.go). It is not an error (Outcome error, ErrorKind canceled, for readers that
	// do not know Cut): only a TTFT that had arrived counts, nothing else of it.
	Cut bool

	Outcome      Outcome
	FinishReason string
	ErrorKind    string // "" unless Outcome == OutcomeError
	ErrorMessage string // human text; never contains a key or Authorization header
	HTTPStatus   int    // 0 when no response
	RetryAfter   time.Duration
	// Backoff is the back-off this request started (a 429): the time the endpoint's new
	// requests then waited, beyond any back-off already running. It happens before the next
	// t0, so it is never latency; summed, it is the endpoint's back-off total, live and in a
	// replay alike.
	Backoff time.Duration

	// Server is the server's own clock for this request (servertiming.go), nil when its
	// response carried none.
	Server *ServerTiming

	// Rate-limit headers when the server sent them (-1 when absent).
	RateLimitRemainingRequests int
	RateLimitRemainingTokens   int
}

// KeepMicroseconds rounds every instant of s to the microsecond, what a --record line keeps
// (an instant that did not happen stays Absent). The Runner reports every Sample so rounded,
// so that a replay of the record aggregates exactly the values the live run did; a
// microsecond is far below the timing error of anything measured here. It writes s.Chunks
// in place: clone them first if the Sample is shared.
func (s *Sample) KeepMicroseconds() {
	for _, d := range []*time.Duration{&s.DNS, &s.Connect, &s.TLS, &s.Wrote, &s.Headers, &s.FirstEvent,
		&s.FirstToken, &s.FirstAnswer, &s.LastToken, &s.End} {
		if *d < 0 {
			*d = Absent
		} else {
			*d = d.Round(time.Microsecond)
		}
	}
	s.Queue, s.RetryAfter = s.Queue.Round(time.Microsecond), s.RetryAfter.Round(time.Microsecond)
	s.Backoff = s.Backoff.Round(time.Microsecond)
	for i := range s.Chunks {
		s.Chunks[i].At = s.Chunks[i].At.Round(time.Microsecond)
	}
}

// The clocks that stamp a request's reads (Sample.Clock).
const (
	ClockKernel = "kernel" // every chunk (and the first response byte) by the kernel's receive time
	ClockUser   = "user"   // time.Now() after the read, for at least one of them
)

// RunEnd says how a run ended, for its summary.
type RunEnd struct {
	Finished bool          // the run ended (Duration, Stop, Requests), not abandoned with its ctx
	Grace    time.Duration // the grace the requests in flight had
	Waited   time.Duration // how long the run waited for them (≤ Grace unless cut at once)
	Cut      bool          // some requests were still running when the grace was over
}
