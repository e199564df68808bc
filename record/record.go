// Package record owns the --record file: one JSON line per finished request (Record, with
// every chunk's arrival), written by a Recorder, read back by ReadFile, and replayed as the
// events of the run it recorded (LoadReplay).
//
// It imports config and probe only; never stats, export, ui, bubbletea, lipgloss or go-openai.
// A Record has no field for an API key or a header.
package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"tokscope/config"
	"tokscope/sample"
)

// Record is one finished request as one line of a --record file (JSON Lines). Instants are
// milliseconds from t0 with microsecond precision, null when the instant did not happen; the
// derived metrics are written for convenience (jq, spreadsheets) and ignored on reading,
// because Sample() recomputes them. A Record has no field for an API key or a header.
type Record struct {
	// Type is "" for a request; other lines say what they are ("server": a ServerLine) and are
	// never Records. Not written for requests.
	Type       string    `json:"type,omitempty"`
	Endpoint   string    `json:"endpoint"`
	Model      string    `json:"model"`
	API        string    `json:"api,omitempty"` // the wire protocol ("chat", "anthropic", …); absent in records older than it
	Seq        uint64    `json:"seq"`
	Warmup     bool      `json:"warmup"`
	ResponseID string    `json:"response_id,omitempty"` // absent when the response had none
	Stream     uint64    `json:"stream,omitempty"`      // interactive stream/race id; 0 for probe requests
	Start      time.Time `json:"start"`                 // RFC 3339 with nanoseconds, wall clock of t0

	QueueMS   float64  `json:"queue_ms"`
	DNSMS     *float64 `json:"dns_ms"`
	ConnectMS *float64 `json:"connect_ms"`
	TLSMS     *float64 `json:"tls_ms"`
	Reused    bool     `json:"reused"`
	// ConnRetry: sent again on a new connection after a reused one failed before any byte
	// of a response (docs/cli.md, dead connections); written only when true.
	ConnRetry   bool     `json:"conn_retry,omitempty"`
	WroteMS     *float64 `json:"wrote_ms"`
	HeadersMS   *float64 `json:"headers_ms"`
	FirstEvent  *float64 `json:"first_event_ms"`
	FirstToken  *float64 `json:"first_token_ms"`
	FirstAnswer *float64 `json:"first_answer_ms"`
	LastToken   *float64 `json:"last_token_ms"`
	EndMS       *float64 `json:"end_ms"`

	// Chunks are written as compact arrays [at_ms, content_bytes, reasoning_bytes, tokens].
	Chunks Chunks `json:"chunks"`
	// Clock stamped headers_ms and the chunks: "kernel" (the kernel's receive time of every
	// one) or "user" (the client's clock after the read, for at least one); absent in records
	// written before tokscope said.
	Clock string `json:"clock,omitempty"`

	Tokens int `json:"tokens"`
	// TokenSource is absent when no token was counted; ReasoningTokens absent when none were;
	// PromptTokens absent when the server reported no usage.
	TokenSource     string `json:"token_source,omitempty"`
	ReasoningTokens int    `json:"reasoning_tokens,omitempty"`
	PromptTokens    int    `json:"prompt_tokens,omitempty"`
	// The workload: cached prompt tokens as the server reported them (null when it did not),
	// the --output-tokens target (null without one), the cache mode ("bust" or "reuse";
	// absent in records written before tokscope had it).
	CachedTokens *int   `json:"cached_tokens"`
	OutputTarget *int   `json:"output_target"`
	Cache        string `json:"cache,omitempty"`
	// Conversation and Turn (from 1) under --turns; absent outside conversations.
	Conversation uint64 `json:"conversation,omitempty"`
	Turn         int    `json:"turn,omitempty"`
	SessionFields

	// Cut: still in flight when the run ended and its grace was over; not an error, though
	// outcome and error_kind say error/canceled for readers that do not know it. Written
	// only when true.
	Cut bool `json:"cut,omitempty"`
	// Outcome always; the others only when there is one: a finish reason (absent when the
	// stream ended without one), an error, a response's status (absent when none came), a
	// Retry-After. Records written before this version carry "" and 0 for these; they read
	// the same.
	Outcome      string  `json:"outcome"`
	FinishReason string  `json:"finish_reason,omitempty"`
	ErrorKind    string  `json:"error_kind,omitempty"`
	ErrorMessage string  `json:"error_message,omitempty"`
	HTTPStatus   int     `json:"http_status,omitempty"`
	RetryAfterMS float64 `json:"retry_after_ms,omitempty"`
	// BackoffMS is the back-off this request (a 429) started, so that a replay shows the live
	// run's back-off total; absent when it started none.
	BackoffMS float64 `json:"backoff_ms,omitempty"`
	// Rate-limit headers, null when the server sent none.
	RateLimitRemainingRequests *int `json:"ratelimit_remaining_requests"`
	RateLimitRemainingTokens   *int `json:"ratelimit_remaining_tokens"`
	// The server's own clock (sample.ServerTiming: absent figures null), when its response
	// carried one; ModelLoad: the request paid for loading the model (kept out of TTFT
	// figures). Written only when present.
	ServerTiming *sample.ServerTiming `json:"server_timing,omitempty"`
	ModelLoad    bool                 `json:"model_load,omitempty"`

	// Derived metrics (docs/outputs.md definitions), null when undefined. Output only.
	TTFBMS         *float64 `json:"ttfb_ms"`
	TTFTMS         *float64 `json:"ttft_ms"`
	TTFAMS         *float64 `json:"ttfa_ms"`
	DecodeTPS      *float64 `json:"decode_tps"`
	E2ETPS         *float64 `json:"e2e_tps"`
	TPOTMS         *float64 `json:"tpot_ms"`
	ITLP50MS       *float64 `json:"itl_p50_ms"`
	ITLP99MS       *float64 `json:"itl_p99_ms"`
	ITLMaxMS       *float64 `json:"itl_max_ms"`
	TokensPerChunk *float64 `json:"tokens_per_chunk"`
	ReasoningTPS   *float64 `json:"reasoning_tps"`
	AnswerTPS      *float64 `json:"answer_tps"`
	PrefillTPS     *float64 `json:"prefill_tps"`
	E2EMS          *float64 `json:"e2e_ms"`

	// Shard: the run's shard (--shard), written by a sharded run only (merge.go).
	Shard
}

// Chunks are a request's chunks in arrival order; At is kept to the microsecond in JSON.
type Chunks []sample.Chunk

// MarshalJSON writes [[at_ms, content_bytes, reasoning_bytes, tokens], …].
func (cs Chunks) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(cs)*20)
	b = append(b, '[')
	for i, c := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendFloat(b, durMS(c.At), 'f', -1, 64)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(c.Content), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(c.Reasoning), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(c.Tokens), 10)
		b = append(b, ']')
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (cs *Chunks) UnmarshalJSON(b []byte) error {
	var raw [][4]float64
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("chunks: %w", err)
	}
	if len(raw) == 0 {
		*cs = nil // a Sample without chunks has nil Chunks
		return nil
	}
	out := make(Chunks, len(raw))
	for i, r := range raw {
		out[i] = sample.Chunk{At: msDur(r[0]), Content: int(r[1]), Reasoning: int(r[2]), Tokens: int(r[3])}
	}
	*cs = out
	return nil
}

// durMS is d in milliseconds rounded to the microsecond.
func durMS(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)/time.Microsecond) / 1000
}

// msDur is the inverse of durMS.
func msDur(ms float64) time.Duration { return time.Duration(math.Round(ms*1000)) * time.Microsecond }

// instant is an optional instant: nil when Absent (or any negative offset).
func instant(d time.Duration) *float64 {
	if d < 0 {
		return nil
	}
	v := durMS(d)
	return &v
}

func fromInstant(p *float64) time.Duration {
	if p == nil {
		return sample.Absent
	}
	return msDur(*p)
}

func optDur(d time.Duration, ok bool) *float64 {
	if !ok {
		return nil
	}
	return instant(d)
}

func optRate(r float64, ok bool) *float64 {
	if !ok || math.IsNaN(r) || math.IsInf(r, 0) {
		return nil
	}
	v := round3(r)
	return &v
}

// round3 rounds to 3 decimals, as the summary does (no "-0").
func round3(v float64) float64 {
	r := math.Round(v*1000) / 1000
	if r == 0 {
		return 0
	}
	return r
}

func optCount(n int) *int {
	if n < 0 {
		return nil
	}
	return &n
}

func fromCount(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// FromSample converts a finished request into its Record, derived metrics included.
func FromSample(s *sample.Sample) Record {
	r := Record{
		Endpoint: s.Endpoint, Model: s.Model, API: s.API, Seq: s.Seq, Warmup: s.Warmup, ResponseID: s.ResponseID, Stream: s.Stream,
		Start:   s.Start,
		QueueMS: durMS(s.Queue),
		DNSMS:   instant(s.DNS), ConnectMS: instant(s.Connect), TLSMS: instant(s.TLS), Reused: s.Reused,
		ConnRetry: s.ConnRetry, Cut: s.Cut,
		WroteMS: instant(s.Wrote), HeadersMS: instant(s.Headers), FirstEvent: instant(s.FirstEvent),
		FirstToken: instant(s.FirstToken), FirstAnswer: instant(s.FirstAnswer),
		LastToken: instant(s.LastToken), EndMS: instant(s.End),
		Chunks: Chunks(slices.Clone(s.Chunks)), Clock: s.Clock,
		Tokens: s.Tokens, TokenSource: string(s.Source),
		ReasoningTokens: s.ReasoningTokens, PromptTokens: s.PromptTokens,
		CachedTokens: optCount(s.CachedTokens), Cache: s.Cache,
		Conversation: s.Conversation, Turn: s.Turn, SessionFields: sessionFields(s.Session),
		Outcome: string(s.Outcome), FinishReason: s.FinishReason,
		ErrorKind: s.ErrorKind, ErrorMessage: s.ErrorMessage,
		HTTPStatus: s.HTTPStatus, RetryAfterMS: durMS(s.RetryAfter), BackoffMS: durMS(s.Backoff),
		RateLimitRemainingRequests: optCount(s.RateLimitRemainingRequests),
		RateLimitRemainingTokens:   optCount(s.RateLimitRemainingTokens),
		ServerTiming:               s.Server, ModelLoad: s.Server.ModelLoad(),
	}
	r.TTFBMS = optDur(s.TTFB())
	r.TTFTMS = optDur(s.TTFT())
	r.TTFAMS = optDur(s.TTFA())
	r.DecodeTPS = optRate(s.DecodeRate())
	r.E2ETPS = optRate(s.E2ERate())
	r.TPOTMS = optDur(s.TPOT())
	if itl, ok := s.ITL(); ok {
		r.ITLP50MS, r.ITLP99MS, r.ITLMaxMS = instant(itl.P50), instant(itl.P99), instant(itl.Max)
	}
	r.TokensPerChunk = optRate(s.TokensPerChunk())
	r.PrefillTPS = optRate(s.PrefillRate())
	r.E2EMS = optDur(s.E2E())
	if s.OutputTarget > 0 {
		r.OutputTarget = &s.OutputTarget
	}
	if p, ok := s.PhaseSplit(); ok {
		r.ReasoningTPS = optRate(p.ReasoningRate, p.ReasoningOK)
		r.AnswerTPS = optRate(p.AnswerRate, p.AnswerOK)
	}
	return r
}

// Sample converts the Record back into the Sample it was made from; every instant survives
// a round trip through JSON to the microsecond.
func (r Record) Sample() sample.Sample {
	chunks := slices.Clone([]sample.Chunk(r.Chunks))
	return sample.Sample{
		Endpoint: r.Endpoint, Model: r.Model, API: r.API, Seq: r.Seq, Warmup: r.Warmup, ResponseID: r.ResponseID, Stream: r.Stream,
		Start: r.Start,
		Queue: msDur(r.QueueMS),
		DNS:   fromInstant(r.DNSMS), Connect: fromInstant(r.ConnectMS), TLS: fromInstant(r.TLSMS), Reused: r.Reused,
		ConnRetry: r.ConnRetry, Cut: r.Cut,
		Wrote: fromInstant(r.WroteMS), Headers: fromInstant(r.HeadersMS), FirstEvent: fromInstant(r.FirstEvent),
		FirstToken: fromInstant(r.FirstToken), FirstAnswer: fromInstant(r.FirstAnswer),
		LastToken: fromInstant(r.LastToken), End: fromInstant(r.EndMS),
		Chunks: chunks, Clock: r.Clock,
		Tokens: r.Tokens, Source: sample.TokenSource(r.TokenSource),
		ReasoningTokens: r.ReasoningTokens, PromptTokens: r.PromptTokens,
		CachedTokens: fromCount(r.CachedTokens), OutputTarget: max(fromCount(r.OutputTarget), 0), Cache: r.Cache,
		Conversation: r.Conversation, Turn: r.Turn, Session: r.sessionTurn(r.Turn),
		Outcome: sample.Outcome(r.Outcome), FinishReason: r.FinishReason,
		ErrorKind: r.ErrorKind, ErrorMessage: r.ErrorMessage,
		HTTPStatus: r.HTTPStatus, RetryAfter: msDur(r.RetryAfterMS), Backoff: msDur(r.BackoffMS),
		RateLimitRemainingRequests: fromCount(r.RateLimitRemainingRequests),
		RateLimitRemainingTokens:   fromCount(r.RateLimitRemainingTokens),
		Server:                     r.ServerTiming,
	}
}

// marshalLine is a line (a *Record or a *ServerLine) as one JSON line, newline included.
func marshalLine(r any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil { // Encode appends the newline
		return nil, err
	}
	return buf.Bytes(), nil
}

// Recorder appends one Record line per finished request to a file. It is safe for
// concurrent use. Each line reaches the file in one write to a file opened with O_APPEND, so
// lines never interleave. A SIGKILL can still tear the line being written: Linux stops a
// write to a regular file between pages when the process is killed, so a line crossing a
// page boundary may reach the file only in part. A killed run thus leaves at most one torn
// last line, which ReadFile tolerates, and which NewRecorder ends with a newline before
// appending so the next run's first record stays whole.
type Recorder struct {
	mu    sync.Mutex
	f     *os.File // nil once closed
	shard Shard    // written into every line (WithShard)
}

// Option is an option of NewRecorder.
type Option func(*Recorder)

// WithShard says in every line that the run is shard s (--shard): "shard": I, "shards": N.
// An unsharded run's lines (the zero config.Shard) say nothing.
func WithShard(s config.Shard) Option {
	return func(r *Recorder) { r.shard = shardOf(s) }
}

// NewRecorder opens (creating it if needed) path for appending. When the file ends in a torn
// line (a killed run), it first ends that line, so the torn record stays on its own line.
func NewRecorder(path string, opts ...Option) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if endsTorn(path) {
		if _, err := f.Write([]byte("\n")); err != nil {
			f.Close()
			return nil, err
		}
	}
	r := &Recorder{f: f}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// endsTorn reports whether the file at path is non-empty and does not end with a newline.
func endsTorn(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return false
	}
	last := make([]byte, 1)
	_, err = f.ReadAt(last, fi.Size()-1)
	return err == nil && last[0] != '\n'
}

// Write appends s as one line. It returns os.ErrClosed after Close.
func (r *Recorder) Write(s *sample.Sample) error {
	rec := FromSample(s)
	rec.Shard = r.shard
	line, err := marshalLine(&rec) // outside the lock: writers only queue for the write
	if err != nil {
		return fmt.Errorf("record %s #%d: %w", s.Endpoint, s.Seq, err)
	}
	return r.writeLine(line)
}

// Close flushes the file to stable storage (fsync) and closes it. Closing twice is a no-op.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	f := r.f
	r.f = nil
	return errors.Join(f.Sync(), f.Close())
}

// ErrTruncated marks a record cut short, as a process killed in the middle of a write leaves
// it (see Recorder); the whole records around it are returned.
var ErrTruncated = errors.New("truncated record (interrupted write)")

// File is a --record file read back: its requests and its server scrapes, each in file order.
type File struct {
	Records []Record
	Server  []ServerLine
	GPU     []GPULine // gpu.go
}

// ReadFile reads a --record file. Blank lines are skipped, and so are lines of a type this
// version does not know. A line whose JSON is cut short is a torn write: the last line
// (without a newline) or, once a later run appended after it, any line. Torn lines are
// skipped, and the whole lines are returned with an error wrapping ErrTruncated that names the
// first torn line and how many there were. Any other bad line stops reading with an error
// naming the line, after the lines before it.
func ReadFile(r io.Reader) (File, error) {
	br := bufio.NewReader(r)
	var f File
	torn, firstTorn := 0, 0
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return f, fmt.Errorf("line %d: %w", line, err)
		}
		complete := err == nil // ended with a newline
		if t := bytes.TrimSpace(b); len(t) > 0 {
			switch uerr := f.add(t); {
			case uerr == nil:
			case complete && !cutShort(t):
				return f, fmt.Errorf("line %d: %w", line, uerr)
			default:
				if torn++; torn == 1 {
					firstTorn = line
				}
			}
		}
		if !complete {
			break
		}
	}
	switch torn {
	case 0:
		return f, nil
	case 1:
		return f, fmt.Errorf("line %d: %w", firstTorn, ErrTruncated)
	}
	return f, fmt.Errorf("line %d and %d more: %w", firstTorn, torn-1, ErrTruncated)
}

// add decodes one line into f by its type.
func (f *File) add(line []byte) error {
	var rec Record
	if err := json.Unmarshal(line, &rec); err != nil {
		return err
	}
	switch rec.Type {
	case "":
		f.Records = append(f.Records, rec)
	case serverType:
		var l ServerLine
		if err := json.Unmarshal(line, &l); err != nil {
			return err
		}
		l.normalise()
		f.Server = append(f.Server, l)
	case gpuType:
		return f.addGPU(line)
	}
	return nil
}

// cutShort reports whether b is the beginning of a JSON value that ends too soon: what a torn
// write leaves, as opposed to a line that is not JSON at all.
func cutShort(b []byte) bool {
	var v any
	return errors.Is(json.NewDecoder(bytes.NewReader(b)).Decode(&v), io.ErrUnexpectedEOF)
}
