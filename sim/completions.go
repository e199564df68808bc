package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"tokscope/kstamp"
)

// chatRequest is the part of an OpenAI chat request the simulator reads. Unknown fields
// (temperature, ...) are accepted and ignored; so is ignore_eos, as the simulator never stops
// before a requested limit anyway.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	MaxTokens           *int          `json:"max_tokens"`
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	MinTokens           *int          `json:"min_tokens"` // vLLM's: a floor under the output length
	Stream              bool          `json:"stream"`
	IncludeMetrics      bool          `json:"include_metrics"` // vLLM's per-request metrics (servertiming.go)
	StreamOptions       *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
}

// maxBodyBytes bounds a request body.
const maxBodyBytes = 8 << 20

// output is what one request will produce.
type output struct {
	prompt          prompt
	replied         prompt // the prompt with this answer after it (withReply): cached once sent
	reasoningTokens int
	answerTokens    int
	perChunk        int
	finish          string // "stop" or "length"
}

// shape decides the output of req on ep: the request's limit (max_completion_tokens, else
// max_tokens) is always reached, with finish_reason "length"; without a limit the answer is
// the profile's MaxTokens long, or min_tokens if longer, and ends with "stop". Reasoning
// tokens count in the output.
func (ep *endpoint) shape(req *chatRequest) (output, error) {
	p := ep.profile
	out := output{perChunk: p.TokensPerChunk, finish: "stop"}
	total := p.MaxTokens
	limit := req.MaxCompletionTokens
	if limit == nil {
		limit = req.MaxTokens
	}
	if limit != nil {
		if *limit < 1 {
			return out, errors.New("max_tokens must be at least 1")
		}
		total, out.finish = min(*limit, maxOutputTokens), "length"
	}
	if m := req.MinTokens; m != nil {
		switch {
		case *m < 0:
			return out, errors.New("min_tokens must be at least 0")
		case limit != nil && *m > *limit:
			return out, fmt.Errorf("min_tokens must be less than or equal to max_tokens=%d, got %d", *limit, *m)
		case limit == nil:
			total = max(total, min(*m, maxOutputTokens))
		}
	}
	blockTokens := 0
	if p.PrefixCache {
		blockTokens = p.PrefixBlockTokens
	}
	out.prompt = readPrompt(req.Messages, blockTokens, ep.tok)
	out.reasoningTokens = min(p.ReasoningTokens, total)
	out.answerTokens = total - out.reasoningTokens
	out.replied = withReply(req.Messages, Text(out.reasoningTokens, out.answerTokens), blockTokens, ep.tok)
	return out, nil
}

func (o output) completionTokens() int { return o.reasoningTokens + o.answerTokens }

// chunks is the number of token-bearing chunks. Reasoning and answer never share a chunk.
func (o output) chunks() int {
	return ceilDiv(o.reasoningTokens, o.perChunk) + ceilDiv(o.answerTokens, o.perChunk)
}

// chunk returns what token chunk i carries: its kind, the index of its first token in the
// whole output, and its token count.
func (o output) chunk(i int) (kind FrameKind, first, n int) {
	rc := ceilDiv(o.reasoningTokens, o.perChunk)
	if i < rc {
		first = i * o.perChunk
		return FrameReasoning, first, min(o.perChunk, o.reasoningTokens-first)
	}
	first = (i - rc) * o.perChunk
	return FrameContent, o.reasoningTokens + first, min(o.perChunk, o.answerTokens-first)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

type fault int

const (
	noFault fault = iota
	fault429
	fault500
	faultMidStream
	faultCut
	faultStall
)

// draw is everything random about one request, taken from the profile's generator at once so
// a seeded profile replays the same faults and timings for the same request order.
type draw struct {
	fault     fault
	faultFrac float64       // where in the stream the fault strikes, 0..1
	ttft      time.Duration // TTFT with its jitter applied
	rng       *rand.Rand    // this request's own generator, for the gap jitter
}

func (ep *endpoint) draw() draw {
	p := ep.profile
	ep.mu.Lock()
	u, frac, j := ep.rng.Float64(), ep.rng.Float64(), ep.rng.Float64()
	seed1, seed2 := ep.rng.Uint64(), ep.rng.Uint64()
	ep.mu.Unlock()

	d := draw{faultFrac: frac, rng: rand.New(rand.NewPCG(seed1, seed2))}
	for i, rate := range []float64{p.Rate429, p.Rate500, p.RateMidStreamError, p.RateCut, p.RateStall} {
		if u < rate {
			d.fault = fault(i + 1)
			break
		}
		u -= rate
	}
	d.ttft = max(0, p.TTFT+time.Duration((2*j-1)*float64(p.TTFTJitter)))
	return d
}

// faultChunk is the token chunk before which a mid-stream fault strikes: at least one token
// chunk goes out first and at least one is missing, when the output has two or more.
func (d draw) faultChunk(chunks int) int {
	if chunks < 2 {
		return 0
	}
	return 1 + min(int(d.faultFrac*float64(chunks-1)), chunks-2)
}

// schedule yields the target send time of each token chunk: the first at first, each next
// one its token count / the decode speed later, ± Jitter. The speed is TokensPerSecond slowed
// by the requests running in the backend at the moment the gap is computed, which is when the
// previous chunk has been sent. Targets are absolute, so time lost sleeping or writing is
// caught up rather than accumulated.
type schedule struct {
	out      output
	tps      float64
	slowdown float64
	jitter   float64
	rng      *rand.Rand
	eng      *backend // nil: no contention
	next     time.Time
	i        int
	step     time.Duration // Profile.Step: chunks leave on the backend's step boundaries
}

func newSchedule(p Profile, out output, d draw, first time.Time, eng *backend) *schedule {
	sc := &schedule{out: out, tps: p.TokensPerSecond, slowdown: p.BatchSlowdown, jitter: p.Jitter,
		rng: d.rng, eng: eng, next: first}
	if eng != nil {
		sc.step = p.Step
	}
	return sc
}

// target returns chunk i's send time; call it for i = 0, 1, 2, ... in order.
func (sc *schedule) target(i int) time.Time {
	for ; sc.i < i; sc.i++ {
		_, _, n := sc.out.chunk(sc.i + 1)
		gap := float64(n) / sc.speed() * (1 + sc.jitter*(2*sc.rng.Float64()-1))
		sc.next = sc.next.Add(time.Duration(gap * float64(time.Second)))
	}
	if sc.step <= 0 {
		return sc.next
	}
	// The next step boundary; the stream's own times stay unrounded, so no drift builds up.
	since := sc.next.Sub(sc.eng.epoch)
	return sc.eng.epoch.Add((since + sc.step - 1) / sc.step * sc.step)
}

// speed is one stream's decode rate now: TokensPerSecond / (1 + BatchSlowdown·(running−1)).
func (sc *schedule) speed() float64 {
	if sc.slowdown == 0 || sc.eng == nil {
		return sc.tps
	}
	return sc.tps / (1 + sc.slowdown*float64(max(sc.eng.running.Load()-1, 0)))
}

// job is an admitted request's life in its backend.
type job struct {
	eng       *backend
	t         *ticket
	prompt    prompt
	cached    int // prompt tokens served by the prefix cache
	sched     *schedule
	prefilled bool
}

// begin starts the job of a request admitted at t.at (its prompt already in the KV cache): the
// prefix cache is asked, and the first token is due after the jittered TTFT plus the prefill
// of the uncached prompt tokens.
func (c *call) begin() *job {
	p, eng := c.ep.profile, c.ep.backend
	j := &job{eng: eng, t: c.ticket, prompt: c.out.prompt}
	j.cached = eng.lookup(j.prompt)
	c.ep.seen.cached(c.seen, j.prompt, j.cached)
	first := c.ticket.at.Add(c.draw.ttft)
	if p.PrefillTokensPerSecond > 0 {
		first = first.Add(time.Duration(float64(j.prompt.tokens-j.cached) / p.PrefillTokensPerSecond * float64(time.Second)))
	}
	j.sched = newSchedule(p, c.out, c.draw, first, eng)
	return j
}

// due is called when a chunk's send time has come, with the tokens it carries (0 for the
// chunk a fault replaces): the first one ends the prefill.
func (j *job) due(tokens int) {
	if !j.prefilled {
		j.prefilled = true
		j.eng.prefilled(j.prompt)
	}
	if tokens > 0 {
		j.eng.generated(j.t, tokens)
	}
}

var (
	errClientGone = errors.New("client gone")
	errShutdown   = errors.New("simulator closed")
)

// waiter sleeps until absolute times, giving up when the client goes away or the server closes.
type waiter struct {
	timer *time.Timer
	gone  <-chan struct{}
	done  <-chan struct{}
}

func newWaiter(r *http.Request, done <-chan struct{}) *waiter {
	t := time.NewTimer(time.Hour)
	t.Stop() // Go ≥ 1.23 timers: Reset after Stop never sees a stale tick
	return &waiter{timer: t, gone: r.Context().Done(), done: done}
}

func (wt *waiter) until(t time.Time) error {
	_, err := wt.untilOr(t, nil)
	return err
}

// untilOr waits until t or until ready is closed (a nil ready never is), reporting which.
func (wt *waiter) untilOr(t time.Time, ready <-chan struct{}) (bool, error) {
	if d := time.Until(t); d > 0 {
		wt.timer.Reset(d)
		select {
		case <-wt.timer.C:
			return false, nil
		case <-ready:
			wt.timer.Stop()
			return true, nil
		case <-wt.gone:
			wt.timer.Stop()
			return false, errClientGone
		case <-wt.done:
			wt.timer.Stop()
			return false, errShutdown
		}
	}
	select {
	case <-wt.gone:
		return false, errClientGone
	case <-wt.done:
		return false, errShutdown
	case <-ready:
		return true, nil
	default:
		return false, nil
	}
}

// on blocks until ready is closed (nil: forever), the client goes away or the server closes.
func (wt *waiter) on(ready <-chan struct{}) error {
	select {
	case <-ready:
		return nil
	case <-wt.gone:
		return errClientGone
	case <-wt.done:
		return errShutdown
	}
}

// forever blocks until the client goes away or the server closes.
func (wt *waiter) forever() error { return wt.on(nil) }

// abort ends the response by dropping the connection: the client sees no [DONE] and no clean
// end of body. net/http recovers this panic without logging it.
func abort() { panic(http.ErrAbortHandler) }

// stopped handles an error from a wait or a write: a closed server aborts the connection, a
// gone client needs nothing more.
func stopped(err error) {
	if errors.Is(err, errShutdown) {
		abort()
	}
}

// call is one chat-completion request being served.
type call struct {
	w       http.ResponseWriter
	r       *http.Request
	req     chatRequest
	ep      *endpoint
	out     output
	draw    draw
	id      string
	arrival time.Time
	// received: when the request's last bytes reached the server's socket, by the kernel's
	// clock (kstamp), before the handler ran; zero unless Options.TrackSends stamps them.
	received time.Time
	wt       *waiter
	ticket   *ticket // its place in the backend; nil for a 429 or 500 answer
	seen     *Seen   // its entry in the profile's request log; nil without Options.LogRequests
	api      string  // APIChat, APICompletions, ...
}

// serve serves a POST of api (apis.go) on a profile: /v1/chat/completions, /v1/completions,
// /v1/responses, /v1/messages or /api/chat.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, ep *endpoint, api string) {
	c := &call{w: w, r: r, ep: ep, arrival: time.Now(), api: api}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeAPIError(w, api, http.StatusBadRequest, "cannot read request body: "+err.Error(), "invalid_request_error", nil)
		return
	}
	if kc, ok := r.Context().Value(connKey{}).(*kstamp.Conn); ok {
		c.received, _ = kc.At() // the read that delivered the body's last byte
	}
	if err := parseRequest(api, body, &c.req); err != nil {
		writeAPIError(w, api, http.StatusBadRequest, "invalid JSON body: "+err.Error(), "invalid_request_error", nil)
		return
	}
	if c.req.IncludeMetrics {
		ep.metricsAsked.Add(1)
	}
	if c.out, err = ep.shape(&c.req); err == nil && !c.req.Stream && api != APIChat {
		err = errNoUnary
	}
	if err != nil {
		writeAPIError(w, api, http.StatusBadRequest, err.Error(), "invalid_request_error", nil)
		return
	}
	c.draw = ep.draw()
	c.id = "chatcmpl-sim-" + strconv.FormatUint(s.nextID.Add(1), 10)
	w.Header().Set("X-Request-Id", c.id)
	c.seen = ep.seen.add(c, ep.tok)
	c.wt = newWaiter(r, s.done)
	p := ep.profile

	switch c.draw.fault {
	case fault429, fault500:
		if err := c.wt.until(c.arrival.Add(p.HeadersDelay)); err != nil {
			stopped(err)
			return
		}
		if c.draw.fault == fault429 {
			if p.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(p.RetryAfter)))
			}
			writeAPIError(w, api, http.StatusTooManyRequests, "Rate limit reached (simulated)", "requests", "rate_limit_exceeded")
		} else {
			writeAPIError(w, api, http.StatusInternalServerError, "The server had an error while processing your request (simulated)", "server_error", nil)
		}
		return
	}

	c.ticket = ep.backend.enqueue(c.arrival, c.out.prompt.tokens)
	defer ep.backend.leave(c.ticket)
	if c.req.Stream {
		s.stream(c)
	} else {
		s.complete(c)
	}
}

// complete answers a non-streaming request once the whole simulated generation has elapsed.
// It walks the schedule chunk by chunk all the same, so that the backend's counters and the
// contention it causes are those of a stream.
func (s *Server) complete(c *call) {
	if err := c.wt.on(c.ticket.ready); err != nil {
		stopped(err)
		return
	}
	j := c.begin()
	out, d := c.out, c.draw
	chunks := out.chunks()
	end := chunks - 1
	if d.fault != noFault {
		end = d.faultChunk(chunks)
	}
	for i := 0; i <= end; i++ {
		if err := c.wt.until(j.sched.target(i)); err != nil {
			stopped(err)
			return
		}
		_, _, n := out.chunk(i)
		if i == end && d.fault != noFault {
			n = 0 // the fault strikes instead
		}
		j.due(n)
	}
	w := c.w
	switch d.fault {
	case faultMidStream:
		writeError(w, http.StatusInternalServerError, midStreamMessage, "server_error", 500)
		return
	case faultCut:
		abort()
	case faultStall:
		stopped(c.wt.forever())
		return
	}

	type message struct {
		Role             string `json:"role"`
		Content          string `json:"content"`
		ReasoningContent string `json:"reasoning_content,omitempty"`
	}
	type choice struct {
		Index        int     `json:"index"`
		Message      message `json:"message"`
		FinishReason string  `json:"finish_reason"`
	}
	resp := struct {
		ID      string          `json:"id"`
		Object  string          `json:"object"`
		Created int64           `json:"created"`
		Model   string          `json:"model"`
		Choices []choice        `json:"choices"`
		Usage   json.RawMessage `json:"usage"`
	}{
		ID: c.id, Object: "chat.completion", Created: c.arrival.Unix(), Model: c.ep.profile.Model,
		Choices: []choice{{Message: message{
			Role:             "assistant",
			Content:          string(appendWords(nil, out.reasoningTokens, out.answerTokens)),
			ReasoningContent: string(appendWords(nil, 0, out.reasoningTokens)),
		}, FinishReason: out.finish}},
		Usage: appendUsage(nil, c.usage(j.cached, out.completionTokens(), out.reasoningTokens)),
	}
	body, err := json.Marshal(resp)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error(), "server_error", nil)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(append(body, '\n')); err == nil {
		c.ep.seen.ended(c.seen, time.Now())
	}
}

// usage is the request's usage so far; cached_tokens is reported when the profile has a
// prefix cache.
func (c *call) usage(cached, completion, reasoning int) usage {
	return usage{prompt: c.out.prompt.tokens, cached: cached, details: c.ep.profile.PrefixCache,
		completion: completion, reasoning: reasoning}
}

const midStreamMessage = "simulated upstream failure"

// stream answers a streaming request: headers after HeadersDelay, the API's opening frames
// (chat: the optional role chunk), the wait for a slot, the token chunks on schedule, then the
// API's end (chat: finish, usage and [DONE]) — or a fault.
func (s *Server) stream(c *call) {
	p, wt := c.ep.profile, c.wt
	if err := wt.until(c.arrival.Add(p.HeadersDelay)); err != nil {
		stopped(err)
		return
	}
	sw := s.startStream(c)
	if sw == nil {
		return
	}
	ka := keepAlive{period: p.KeepAlive, next: time.Now().Add(p.KeepAlive)}
	if sw.open(p.RoleChunk) != nil {
		return
	}
	if err := ka.waitFor(wt, sw, c.ticket.ready); err != nil {
		stopped(err)
		return
	}
	sw.admitted, sw.scheduled = time.Now(), c.ticket.at
	j := c.begin()
	sw.usage.cached = j.cached
	if !c.sendTokens(sw, &ka, j) {
		return
	}
	j.eng.served(c.out.replied)
	includeUsage := c.req.StreamOptions != nil && c.req.StreamOptions.IncludeUsage
	if sw.end(c.out.finish, includeUsage) == nil {
		c.ep.seen.ended(c.seen, time.Now())
	}
}

// startStream writes the stream's headers; nil when the client is gone.
func (s *Server) startStream(c *call) *streamWriter {
	p, w := c.ep.profile, c.w
	sw := newStreamWriter(c)
	sw.w, sw.rc = w, http.NewResponseController(w)
	if s.sends != nil {
		sw.record = s.sends.start(c.id, c.out.chunks()+4)
		sw.record.arrival, sw.record.received = c.arrival, c.received
	}
	h := w.Header()
	h.Set("Content-Type", sw.contentType())
	h.Set("Cache-Control", "no-cache")
	if p.CloseAfterStream {
		h.Set("Keep-Alive", "timeout=5, max=100")
		s.closeWhenIdle(c.r, p.CloseDelay)
	}
	w.WriteHeader(http.StatusOK)
	if err := sw.rc.Flush(); err != nil {
		return nil
	}
	return sw
}

// sendTokens sends the token chunks on schedule, or the request's fault in their midst; false
// when the stream is over (a fault, a gone client).
func (c *call) sendTokens(sw *streamWriter, ka *keepAlive, j *job) bool {
	out, d, wt := c.out, c.draw, c.wt
	chunks := out.chunks()
	faultAt := -1
	if d.fault != noFault {
		faultAt = d.faultChunk(chunks)
	}
	for i := range chunks {
		if i == faultAt {
			break
		}
		if err := ka.waitUntil(wt, sw, j.sched.target(i)); err != nil {
			stopped(err)
			return false
		}
		kind, first, n := out.chunk(i)
		j.due(n)
		if sw.tokens(kind, first, n) != nil {
			return false
		}
	}
	switch d.fault {
	case faultMidStream, faultCut:
		// Real upstreams fail after the usual gap, not instantly.
		if err := ka.waitUntil(wt, sw, j.sched.target(faultAt)); err != nil {
			stopped(err)
			return false
		}
		j.due(0)
		if d.fault == faultCut {
			abort()
		}
		_ = sw.fail()
		return false
	case faultStall:
		stopped(ka.waitForever(wt, sw))
		return false
	}
	return true
}

// keepAlive sends ": keep-alive" comments at a fixed period while the stream waits.
type keepAlive struct {
	period time.Duration // 0 = off
	next   time.Time
}

func (ka *keepAlive) waitUntil(wt *waiter, sw *streamWriter, target time.Time) error {
	for ka.period > 0 && ka.next.Before(target) {
		if err := ka.tick(wt, sw); err != nil {
			return err
		}
	}
	return wt.until(target)
}

func (ka *keepAlive) waitForever(wt *waiter, sw *streamWriter) error { return ka.waitFor(wt, sw, nil) }

// waitFor waits until ready is closed (nil: forever).
func (ka *keepAlive) waitFor(wt *waiter, sw *streamWriter, ready <-chan struct{}) error {
	for ka.period > 0 {
		ok, err := wt.untilOr(ka.next, ready)
		if ok || err != nil {
			return err
		}
		if err := ka.beat(sw); err != nil {
			return err
		}
	}
	return wt.on(ready)
}

func (ka *keepAlive) tick(wt *waiter, sw *streamWriter) error {
	if err := wt.until(ka.next); err != nil {
		return err
	}
	return ka.beat(sw)
}

// beat sends the keep-alive that is due now and sets the next one.
func (ka *keepAlive) beat(sw *streamWriter) error {
	if err := sw.comment(); err != nil {
		return errClientGone
	}
	ka.next = ka.next.Add(ka.period)
	if now := time.Now(); ka.next.Before(now) { // fell behind (slow client): skip the missed beats
		ka.next = now.Add(ka.period)
	}
	return nil
}
