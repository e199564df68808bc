package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptrace"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"tokscope/apiwire"
	"tokscope/sample"

	openai "github.com/sashabaranov/go-openai"

	"tokscope/config"
	"tokscope/kstamp"
	"tokscope/workload"
)

// maxIdlePerHost is far above any concurrency a user sets: the default transport keeps only
// 2 idle connections per host, and at concurrency 8 most requests then silently reconnected
// (docs/architecture.md, pitfalls). Concurrency changes live, so the bound cannot follow it. At 1024,
// 4096 streams reconnected a third of their requests; the open-file limit binds long before
// this one.
const maxIdlePerHost = 1 << 16

// Sentinel causes for the request context, so the end of a request can be classified by
// what cancelled it rather than by the text of a transport error.
var (
	errStall    = errors.New("no chunk within the stall limit")
	errDeadline = errors.New("request deadline exceeded")
	errDrain    = errors.New("body not ended after [DONE]")
)

// Client sends streamed chat completions to one endpoint and turns each into a Sample.
// It is safe for concurrent use; all requests share one connection pool.
type Client struct {
	ep            config.Endpoint
	api           *openai.Client
	transport     http.RoundTripper // the pool: kept-alive connections, dialled through conns
	fresh         http.RoundTripper // a new connection per request, closed after it (conn.go)
	conns         *connWatch        // learns whether the server closes every connection
	maxCompletion bool              // the model rejects max_tokens (o-series, gpt-5): send max_completion_tokens
	wire          apiwire.API       // the endpoint's API
	doer          *doer             // the one send path of every API
	perChunk      perChunkLearner   // the endpoint's tokens per chunk, for live counts (progress.go)
	count         tokenCounting     // how its decoders count tokens offline (progress.go)
	vllm          atomic.Bool       // the server is known to be vLLM (serverkind.go)
}

// NewClient builds the go-openai client and HTTP transport of one endpoint. The API key is not
// captured: it is read through ep.APIKey() for every request.
func NewClient(ep config.Endpoint) *Client { return newClientWith(ep, clientSetup{}) }

// clientSetup is what builds a Client besides its endpoint. The zero value is the product's;
// tests set their own per Client (newClientWith) or per Runner (Options.setup), so that no test
// changes what another one's clients do.
type clientSetup struct {
	resolver  *net.Resolver // resolves host names; nil: net.DefaultResolver
	userClock bool          // no kernel receive timestamps: the user clock alone (kstamp.go)
	count     tokenCounting // zero fields: the offline tokenizer, a Progress every ProgressEvery
}

func newClientWith(ep config.Endpoint, setup clientSetup) *Client {
	watch := &connWatch{}
	resolver := setup.resolver
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	// Every connection reads with the kernel's receive timestamps where it can (kstamp.go).
	dial := stampDial((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Resolver: resolver}).DialContext,
		!setup.userClock)
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           watch.dialer(dial),
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   maxIdlePerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		// Compressed SSE is buffered by the decompressor and skews every instant.
		DisableCompression: true,
		TLSClientConfig:    &tls.Config{InsecureSkipVerify: ep.InsecureSkipVerify}, //nolint:gosec // opt-in per endpoint
	}
	// Not watched: these connections are closed after one request by design.
	fresh := tr.Clone()
	fresh.DisableKeepAlives = true
	fresh.DialContext = dial
	c := newClientOver(ep, tr, fresh, watch)
	c.count = setup.count.withDefaults()
	return c
}

// newClientOver builds a client whose requests go through tr, or through fresh when the
// server closes every connection (watch) and for the retry of a request that met a dead
// kept-alive connection. The http.Clients have no Timeout: it would cut long stream bodies;
// deadlines are contexts.
func newClientOver(ep config.Endpoint, tr, fresh http.RoundTripper, watch *connWatch) *Client {
	cfg := openai.DefaultConfig("") // the key is added per request by the doer
	cfg.BaseURL = ep.BaseURL
	cfg.EmptyMessagesLimit = 1 << 30 // keep-alive comments count as empty messages; our stall timer replaces the limit
	dr := newDoer(ep, &http.Client{Transport: tr, CheckRedirect: checkRedirect},
		&http.Client{Transport: fresh, CheckRedirect: checkRedirect}, watch)
	cfg.HTTPClient = dr
	c := &Client{ep: ep, api: openai.NewClientWithConfig(cfg), transport: tr, fresh: fresh, conns: watch,
		wire: apiwire.Of(ep), doer: dr, count: tokenCounting{}.withDefaults()}
	probeReq := openai.ChatCompletionRequest{Model: ep.Model, MaxTokens: 1}
	c.maxCompletion = errors.Is(openai.NewReasoningValidator().Validate(probeReq), openai.ErrReasoningModelMaxTokensDeprecated)
	c.vllm.Store(ep.KnownVLLM)
	return c
}

// maxRedirects bounds the same-origin redirects one request follows.
const maxRedirects = 3

// checkRedirect follows a redirect only when it keeps the method and body (307, 308) and the
// origin (scheme, host and port); any other redirect is handed back as the response and
// reported as http_<status> naming its target. A 301/302/303 would turn the POST into a GET,
// and another origin would receive the key and every configured header (net/http strips
// only Authorization and cookies, and only for another host name: a different port keeps
// them all).
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	switch {
	case len(via) > maxRedirects,
		req.Response == nil,
		req.Response.StatusCode != http.StatusTemporaryRedirect && req.Response.StatusCode != http.StatusPermanentRedirect,
		req.URL.Scheme != first.Scheme || req.URL.Host != first.Host:
		return http.ErrUseLastResponse
	}
	if x, _ := req.Context().Value(exchangeKey{}).(*exchange); x != nil {
		// The instants are the final request's: the redirect's answer is not the server's.
		x.wrote.Store(-1)
		x.firstByte.Store(-1)
	}
	return nil
}

// Endpoint returns the endpoint this client measures.
func (c *Client) Endpoint() config.Endpoint { return c.ep }

// CloseIdleConnections closes the pooled keep-alive connections (and their goroutines).
func (c *Client) CloseIdleConnections() {
	for _, tr := range []http.RoundTripper{c.transport, c.fresh} {
		if t, ok := tr.(interface{ CloseIdleConnections() }); ok {
			t.CloseIdleConnections()
		}
	}
}

// ClosesConnections reports whether the server was seen to close every kept-alive connection
// right after its response: requests then each open a new connection (conn.go), and connect
// time is part of every TTFT on this endpoint.
func (c *Client) ClosesConnections() bool { return c.conns.closesEvery() }

func (c *Client) request(w workload.Request) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{
		Model:         c.ep.Model,
		Messages:      make([]openai.ChatCompletionMessage, len(w.Messages)),
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	for i, m := range w.Messages {
		req.Messages[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
		if m.Parts != nil {
			parts := make([]openai.ChatMessagePart, len(m.Parts))
			for j, t := range m.Parts {
				parts[j] = openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: t}
			}
			req.Messages[i] = openai.ChatCompletionMessage{Role: m.Role, MultiContent: parts}
		}
		req.Messages[i].ToolCallID = m.ToolCallID
		for _, tc := range m.ToolCalls { // agent sessions' tool calls (apiwire/tools.go has the other APIs')
			req.Messages[i].ToolCalls = append(req.Messages[i].ToolCalls, openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
	}
	if c.maxCompletion {
		req.MaxCompletionTokens = w.MaxTokens
	} else {
		req.MaxTokens = w.MaxTokens
	}
	return req
}

// Live is what a caller follows of a request while it streams; either may be nil. Both are
// called from the goroutine that reads the stream, between two reads: they must be quick.
// Endpoint, Seq, Stream and Warmup are left for the caller to fill.
type Live struct {
	Delta func(sample.Delta) // every piece of content or reasoning text as it arrives
	// Progress gets the tokens so far at the first token and then every ProgressEvery
	// (progress.go); the pointer is valid during the call only.
	Progress func(*sample.Progress)
}

// SendLive sends one streamed request built from w and measures it, reporting the request's
// text and progress to live as they arrive. It never returns an error: a failure is a Sample
// with Outcome error and a classified ErrorKind.
//
// The request ends at ctx's end (ErrorKind canceled), at ep.Timeout (timeout) or when no
// chunk arrived for ep.Stall (stall), whichever comes first.
func (c *Client) SendLive(ctx context.Context, w workload.Request, live Live) (s sample.Sample) {
	s = newSample(c.ep)
	s.OutputTarget = max(w.MinTokens, 0)
	s.Cache = config.CacheReuse
	if w.Tag != "" {
		s.Cache = config.CacheBust
	}
	// A bug in tokscope (a panic while reading one response) fails that request only, as a
	// classified "internal" error: the endpoint and every other one keep measuring, and the
	// TUI keeps the terminal. The stack goes to the --log file, never the screen.
	defer func() {
		if p := recover(); p != nil {
			log.Printf("probe: internal error on %s: %v\n%s", c.ep.Name, p, debug.Stack())
			s.Outcome, s.ErrorKind = sample.OutcomeError, sample.ErrInternal
			s.ErrorMessage = fmt.Sprintf("tokscope internal error: %v (stack in the --log file)", p)
		}
	}()
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	x := &exchange{fields: withMetricsAsk(apiwire.RequestFields(w, c.ep, c.wire), c.vllm.Load(), c.wire), maxTokens: w.MaxTokens}
	x.reset()
	reqCtx = httptrace.WithClientTrace(reqCtx, x.trace())
	reqCtx = context.WithValue(reqCtx, exchangeKey{}, x)

	var d decoder
	d.init(&s, live.Delta, w.MaxTokens)
	d.wire.API, d.onProgress, d.perChunk, d.count = c.wire, live.Progress, c.perChunk.get(), c.count

	t0 := time.Now()
	x.t0, s.Start, d.t0 = t0, t0, t0
	reqCtx, lim := c.limit(reqCtx, t0, cancel)
	defer lim.stop()

	stream, err := c.open(reqCtx, w)
	if retryAt := x.retryOffset(); retryAt > 0 {
		// A dead kept-alive connection was replaced: the instants are those of the attempt
		// that got the answer, from when it started.
		t0 = t0.Add(retryAt)
		s.Start, d.t0 = t0, t0
	}
	if err != nil {
		c.failed(ctx, reqCtx, &s, x, t0, err)
		s.Clock = x.headersClock().clock()
		return s
	}
	defer stream.Close()
	clocks := x.headersClock()
	readErr, unparsed := read(stream, &d, lim, t0, x.kc.Load(), &clocks)
	c.ended(ctx, reqCtx, &s, &d, x, t0, readErr, unparsed, lim)
	s.Clock = clocks.clock()
	if errors.Is(readErr, io.EOF) && x.tail != nil {
		// [DONE] (or the API's last event) often comes before the body's terminating chunk
		// has been read; a body closed before its EOF takes its connection down with it, and
		// the next request would pay connect (+TLS) inside its TTFT. Read to EOF, briefly.
		t := time.AfterFunc(drainLimit, func() { cancel(errDrain) })
		_, _ = io.Copy(io.Discard, io.LimitReader(x.tail, 64<<10))
		t.Stop()
	}
	return s
}

// limits are a request's timeout (from t0, as every instant: never a timeout "before"
// ep.Timeout) and stall timer.
type limits struct {
	stall    *time.Timer
	every    time.Duration
	deadline context.CancelFunc
}

func (c *Client) limit(ctx context.Context, t0 time.Time, cancel context.CancelCauseFunc) (context.Context, *limits) {
	l := &limits{every: c.ep.Stall}
	if c.ep.Timeout > 0 {
		ctx, l.deadline = context.WithDeadlineCause(ctx, t0.Add(c.ep.Timeout), errDeadline)
	}
	if c.ep.Stall > 0 {
		l.stall = time.AfterFunc(c.ep.Stall, func() { cancel(errStall) })
	}
	return ctx, l
}

// pause stops the stall timer: reading is over.
func (l *limits) pause() {
	if l.stall != nil {
		l.stall.Stop()
	}
}

func (l *limits) stop() {
	l.pause()
	if l.deadline != nil {
		l.deadline()
	}
}

// read reads events until the stream ends, errs or the decoder stops it. Each event is
// stamped with the arrival of the read that delivered its last byte: by the kernel where kc
// has its receive time (kstamp.go), else when recv returned; clocks counts which.
func read(stream eventStream, d *decoder, lim *limits, t0 time.Time, kc *kstamp.Conn, clocks *clockTally) (readErr error, unparsed bool) {
	for {
		raw, err := stream.Recv()
		at, kernel := kc.Since(t0) // before decoding: the decoder's cost is ours, not the server's
		if err != nil {
			return err, errors.Is(err, errUnparsed)
		}
		clocks.count(kernel)
		stop := d.add(at, raw)
		if lim.stall != nil && !d.skip {
			lim.stall.Reset(lim.every)
		}
		if stop {
			if d.wire.Ended() && d.streamErr == "" {
				return io.EOF, false // the API's last event: drain the body like after [DONE]
			}
			return nil, false
		}
	}
}

// failed fills s for a request that got no stream: no response, or a non-2xx one.
func (c *Client) failed(ctx, reqCtx context.Context, s *sample.Sample, x *exchange, t0 time.Time, err error) {
	if resp := x.resp; resp != nil {
		_ = resp.Body.Close() // go-openai reads but never closes an error body
	}
	s.End = time.Since(t0)
	x.fill(s)
	s.Outcome = sample.OutcomeError
	s.ErrorKind, s.ErrorMessage = c.classifyRequestError(ctx, reqCtx, err, x)
	s.ErrorMessage = readable(redactFor(s.ErrorMessage, c.ep))
}

// ended fills s for a stream whose reading is over.
func (c *Client) ended(ctx, reqCtx context.Context, s *sample.Sample, d *decoder, x *exchange, t0 time.Time,
	readErr error, unparsed bool, lim *limits) {
	// What ended it is read now, so that the time spent counting the tokens of a long answer
	// (finalize) can turn it into neither a stall nor a timeout.
	lim.pause()
	var end ctxEnd
	end.kind, end.msg, end.ok = c.contextKind(ctx, reqCtx)
	s.End = time.Since(t0)
	x.fill(s)
	d.finalize()
	if s.ResponseID == "" && x.header != nil {
		// Ollama's native stream has no id; the request id header names the request instead.
		s.ResponseID = clip(x.header.Get("X-Request-Id"), 256)
	}
	if errors.Is(readErr, errUnparsed) {
		readErr = nil
	}
	c.outcome(end, s, d, x, readErr, unparsed)
	c.perChunk.learn(s)
	s.ErrorMessage = readable(redactFor(s.ErrorMessage, c.ep))
}

// open sends the request and returns its event stream: chat through go-openai, the other APIs
// through the same doer (one send path: extra_body, headers, key, retries, status).
func (c *Client) open(ctx context.Context, w workload.Request) (eventStream, error) {
	if c.wire == apiwire.Chat {
		stream, err := c.api.CreateChatCompletionStream(ctx, c.request(w))
		if err != nil {
			return nil, err
		}
		return chatStream{stream}, nil
	}
	body, err := c.wire.Encode(c.ep.Model, w)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.wire.URL(c.ep.BaseURL), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.wire.NDJSON() {
		req.Header.Set("Accept", "application/x-ndjson")
	}
	resp, err := c.doer.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		b, _ := io.ReadAll(resp.Body) // bounded: the doer's tail ends an error body at maxErrorBody
		_ = resp.Body.Close()
		return nil, &statusError{status: resp.StatusCode, text: resp.Status, body: b}
	}
	return apiwire.NewLineStream(resp.Body, c.wire.NDJSON()), nil
}

// drainLimit bounds the wait for the end of a body after [DONE].
const drainLimit = 250 * time.Millisecond

// outcome classifies how a stream that did get a 2xx response ended.
func (c *Client) outcome(ended ctxEnd, s *sample.Sample, d *decoder, x *exchange, readErr error, unparsed bool) {
	s.FinishReason = d.finishReason
	if x.status >= 300 && x.status < 400 { // go-openai takes a 3xx for a stream: see checkRedirect
		s.Outcome, s.ErrorKind = sample.OutcomeError, "http_"+strconv.Itoa(x.status)
		s.ErrorMessage = redirectMessage(x)
		return
	}
	switch {
	case d.streamErr != "":
		s.Outcome, s.ErrorKind, s.ErrorMessage = sample.OutcomeError, sample.ErrStreamError, d.streamErr
		return
	case unparsed:
		s.Outcome, s.ErrorKind = sample.OutcomeError, sample.ErrStreamError
		s.ErrorMessage = "error inside the stream: " + x.tail.errorText()
		return
	}
	if readErr != nil {
		if kind, msg, ok := ended.kind, ended.msg, ended.ok; ok {
			if d.finishReason != "" && kind != sample.ErrCanceled {
				// The answer was complete; only the trailer ([DONE], usage) was late.
				s.Outcome = sample.OutcomeOK
				return
			}
			s.Outcome, s.ErrorKind, s.ErrorMessage = sample.OutcomeError, kind, msg
			return
		}
	}
	if readErr != nil && !errors.Is(readErr, io.EOF) && !errors.Is(readErr, io.ErrUnexpectedEOF) {
		var bound *apiwire.BoundError
		if errors.As(readErr, &bound) && d.finishReason == "" {
			s.Outcome, s.ErrorKind, s.ErrorMessage = sample.OutcomeError, sample.ErrStreamError, bound.Error()
			return
		}
		var apiErr *openai.APIError
		if errors.As(readErr, &apiErr) {
			s.Outcome, s.ErrorKind, s.ErrorMessage = sample.OutcomeError, sample.ErrStreamError, "error inside the stream: "+apiErrorText(apiErr)
			return
		}
		if d.finishReason != "" {
			s.Outcome = sample.OutcomeOK
			return
		}
		s.Outcome, s.ErrorKind, s.ErrorMessage = sample.OutcomeError, sample.ErrStreamError, "stream read: "+readErr.Error()
		return
	}
	// Plain end of the body.
	if d.finishReason != "" {
		s.Outcome = sample.OutcomeOK
		return
	}
	if len(s.Chunks) == 0 && !isEventStream(x.header) && !(c.wire.NDJSON() && isNDJSON(x.header)) {
		// A server that ignores stream:true answers one JSON document; nothing can be timed per
		// token, so this is an error of the endpoint's setup, not a cut stream.
		s.Outcome, s.ErrorKind = sample.OutcomeError, sample.ErrStreamError
		s.ErrorMessage = "no SSE data: the server answered " + contentType(x.header) + " (ignored stream:true?)"
		if c.wire.NDJSON() {
			s.ErrorMessage = "no NDJSON data: the server answered " + contentType(x.header)
		}
		if t := x.tail.text(); t != "" {
			s.ErrorMessage += ": " + t
		}
		return
	}
	s.Outcome = sample.OutcomeTruncated
	if bad := d.wire.BadChunk(); bad != "" {
		s.ErrorMessage = "stream ended without finish_reason; undecodable chunk: " + bad
	} else {
		s.ErrorMessage = "stream ended without finish_reason"
	}
}

// exchange travels in the request context: the doer and the httptrace hooks write the
// response status, headers and connection phases into it for Do to read.
type exchange struct {
	t0     time.Time
	status int
	header http.Header
	resp   *http.Response
	tail   *tailBody
	sent   bool                       // the doer handed the request to the transport
	fields map[string]json.RawMessage // this request's own body fields (requestFields)

	// Offsets from t0 in nanoseconds; -1 = absent. Dial hooks may run on the transport's dial
	// goroutine, even after the request was served by another connection: hence atomics.
	dnsStart, dnsDone, connStart, connDone, tlsStart, tlsDone, wrote, firstByte atomic.Int64

	reused    atomic.Bool
	tlsFailed atomic.Bool

	// Attempts (conn.go): a request that met a dead kept-alive connection is sent again, by
	// the transport itself or by the doer. retryAt is the offset from t0 at which the last
	// attempt started (0: there was one attempt); every instant is then from there.
	attempts  atomic.Int32
	answered  atomic.Bool // the current attempt got a response byte (a redirect's counts)
	connRetry atomic.Bool
	retryAt   atomic.Int64
	maxTokens int                         // of the request: bounds what is read of its answer
	freshSent bool                        // the doer sent it again on a new connection (at most once)
	conn      atomic.Pointer[watchedConn] // the current attempt's, when the pool dialled it
	// kc is the current attempt's kernel-stamped connection (nil: none, or HTTP/2);
	// firstKernel says the kernel stamped firstByte.
	kc          atomic.Pointer[kstamp.Conn]
	firstKernel atomic.Bool
}

type exchangeKey struct{}

func (x *exchange) reset() {
	for _, v := range []*atomic.Int64{&x.dnsStart, &x.dnsDone, &x.connStart, &x.connDone, &x.tlsStart, &x.tlsDone, &x.wrote, &x.firstByte} {
		v.Store(-1)
	}
}

// getConn starts an attempt. One that follows an attempt that got no response byte is a
// retry after a dead connection (a redirect follows an answer, and is not one): the phases
// start again from here.
func (x *exchange) getConn() {
	if x.attempts.Add(1) > 1 && !x.answered.Swap(false) {
		x.reset()
		x.connRetry.Store(true)
		x.retryAt.Store(int64(time.Since(x.t0)))
	}
}

// retryOffset is the offset from t0 of the attempt that got the answer; 0 without a retry.
func (x *exchange) retryOffset() time.Duration { return time.Duration(x.retryAt.Load()) }

// deadConn reports whether a failed attempt met a dead kept-alive connection and may be sent
// again once on a new one: the connection was reused, no byte of a response arrived, the
// request can be rebuilt (GetBody) and nobody cancelled it.
func (x *exchange) deadConn(req *http.Request) bool {
	return !x.freshSent && x.reused.Load() && x.firstByte.Load() < 0 && !x.answered.Load() &&
		req.GetBody != nil && req.Context().Err() == nil
}

func (x *exchange) stamp(v *atomic.Int64) { v.CompareAndSwap(-1, int64(time.Since(x.t0))) }

// stampFirstByte stamps the first response byte like a chunk: with the arrival of the read
// that brought it (the transport's read loop has just made it on this connection).
func (x *exchange) stampFirstByte() {
	if x.firstByte.Load() != -1 {
		return
	}
	at, kernel := x.kc.Load().Since(x.t0)
	if x.firstByte.CompareAndSwap(-1, int64(at)) {
		x.firstKernel.Store(kernel)
	}
}

// headersClock counts the clock that stamped the first response byte, if one came.
func (x *exchange) headersClock() clockTally {
	var t clockTally
	if x.firstByte.Load() >= 0 {
		t.count(x.firstKernel.Load())
	}
	return t
}

func (x *exchange) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		DNSStart:     func(httptrace.DNSStartInfo) { x.stamp(&x.dnsStart) },
		DNSDone:      func(httptrace.DNSDoneInfo) { x.stamp(&x.dnsDone) },
		ConnectStart: func(string, string) { x.stamp(&x.connStart) },
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				x.stamp(&x.connDone)
			}
		},
		TLSHandshakeStart: func() { x.stamp(&x.tlsStart) },
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err != nil {
				x.tlsFailed.Store(true)
				return
			}
			x.stamp(&x.tlsDone)
		},
		GetConn: func(string) { x.getConn() },
		GotConn: func(info httptrace.GotConnInfo) {
			x.reused.Store(info.Reused)
			x.conn.Store(watched(info.Conn))
			x.kc.Store(stamped(info.Conn))
		},
		WroteRequest: func(httptrace.WroteRequestInfo) { x.stamp(&x.wrote) },
		GotFirstResponseByte: func() {
			x.answered.Store(true)
			x.stampFirstByte()
			if c := x.conn.Load(); c != nil {
				c.answered()
			}
		},
	}
}

func phase(start, done *atomic.Int64) time.Duration {
	s, d := start.Load(), done.Load()
	if s < 0 || d < s {
		return sample.Absent
	}
	return time.Duration(d - s)
}

// offset is v from the start of the attempt that got the answer (t0, or the retry's start).
func (x *exchange) offset(v *atomic.Int64) time.Duration {
	if n := v.Load() - x.retryAt.Load(); v.Load() >= 0 && n >= 0 {
		return time.Duration(n)
	}
	return sample.Absent
}

// fill copies what the transport saw into the sample.
func (x *exchange) fill(s *sample.Sample) {
	s.Reused = x.reused.Load()
	s.ConnRetry = x.connRetry.Load()
	if !s.Reused {
		s.DNS = phase(&x.dnsStart, &x.dnsDone)
		s.Connect = phase(&x.connStart, &x.connDone)
		s.TLS = phase(&x.tlsStart, &x.tlsDone)
	}
	s.Wrote = x.offset(&x.wrote)
	s.Headers = x.offset(&x.firstByte)
	s.HTTPStatus = x.status
	if x.header != nil {
		s.RetryAfter = retryAfter(x.header, time.Now())
		s.RateLimitRemainingRequests = rateLimitHeader(x.header, "X-Ratelimit-Remaining-Requests", "Anthropic-Ratelimit-Requests-Remaining")
		s.RateLimitRemainingTokens = rateLimitHeader(x.header, "X-Ratelimit-Remaining-Tokens", "Anthropic-Ratelimit-Tokens-Remaining")
	}
}

func newSample(ep config.Endpoint) sample.Sample {
	return sample.Sample{
		Endpoint: ep.Name, Model: ep.Model, API: apiwire.Of(ep).String(),
		DNS: sample.Absent, Connect: sample.Absent, TLS: sample.Absent,
		Wrote: sample.Absent, Headers: sample.Absent, FirstEvent: sample.Absent, FirstToken: sample.Absent,
		FirstAnswer: sample.Absent, LastToken: sample.Absent, End: sample.Absent,
		RateLimitRemainingRequests: -1, RateLimitRemainingTokens: -1,
		CachedTokens: -1,
	}
}
