package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// chatRequest is the part of an OpenAI chat request the simulator reads. Unknown fields
// (ignore_eos, temperature, ...) are accepted and ignored.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	MaxTokens           *int          `json:"max_tokens"`
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	Stream              bool          `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Content json.RawMessage `json:"content"` // a string, or an array of {"type":"text","text":...} parts
}

// maxBodyBytes bounds a request body.
const maxBodyBytes = 8 << 20

// output is what one request will produce.
type output struct {
	promptTokens    int
	reasoningTokens int
	answerTokens    int
	perChunk        int
	finish          string // "stop" or "length"
}

// shape decides the output of req on ep: the request's limit (max_completion_tokens, else
// max_tokens) is always reached, with finish_reason "length"; without a limit the answer is
// the profile's MaxTokens long and ends with "stop". Reasoning tokens count in the output.
func (ep *endpoint) shape(req *chatRequest) (output, error) {
	p := ep.profile
	out := output{promptTokens: promptTokens(req.Messages), perChunk: p.TokensPerChunk, finish: "stop"}
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
	out.reasoningTokens = min(p.ReasoningTokens, total)
	out.answerTokens = total - out.reasoningTokens
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

// promptTokens is a deterministic stand-in for a tokenizer: one token per word plus four per
// message for the chat template.
func promptTokens(messages []chatMessage) int {
	n := 0
	for _, m := range messages {
		n += 4
		var text string
		var parts []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Content, &text) == nil {
			n += len(strings.Fields(text))
		} else if json.Unmarshal(m.Content, &parts) == nil {
			for _, part := range parts {
				n += len(strings.Fields(part.Text))
			}
		}
	}
	return max(n, 1)
}

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

// schedule yields the target send time of each token chunk: the first at arrival+TTFT, each
// next one its token count / TokensPerSecond later, ± Jitter. Targets are absolute, so time
// lost sleeping or writing is caught up rather than accumulated.
type schedule struct {
	out    output
	tps    float64
	jitter float64
	rng    *rand.Rand
	next   time.Time
	i      int
}

func newSchedule(p Profile, out output, d draw, arrival time.Time) *schedule {
	return &schedule{out: out, tps: p.TokensPerSecond, jitter: p.Jitter, rng: d.rng, next: arrival.Add(d.ttft)}
}

// target returns chunk i's send time; call it for i = 0, 1, 2, ... in order.
func (sc *schedule) target(i int) time.Time {
	for ; sc.i < i; sc.i++ {
		_, _, n := sc.out.chunk(sc.i + 1)
		gap := float64(n) / sc.tps * (1 + sc.jitter*(2*sc.rng.Float64()-1))
		sc.next = sc.next.Add(time.Duration(gap * float64(time.Second)))
	}
	return sc.next
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
	if d := time.Until(t); d > 0 {
		wt.timer.Reset(d)
		select {
		case <-wt.timer.C:
			return nil
		case <-wt.gone:
			wt.timer.Stop()
			return errClientGone
		case <-wt.done:
			wt.timer.Stop()
			return errShutdown
		}
	}
	select {
	case <-wt.gone:
		return errClientGone
	case <-wt.done:
		return errShutdown
	default:
		return nil
	}
}

// forever blocks until the client goes away or the server closes.
func (wt *waiter) forever() error {
	select {
	case <-wt.gone:
		return errClientGone
	case <-wt.done:
		return errShutdown
	}
}

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

// chatCompletions serves POST /<profile>/v1/chat/completions.
func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request, ep *endpoint) {
	arrival := time.Now()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeError(w, http.StatusBadRequest, "cannot read request body: "+err.Error(), "invalid_request_error", nil)
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error(), "invalid_request_error", nil)
		return
	}
	out, err := ep.shape(&req)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "invalid_request_error", nil)
		return
	}
	d := ep.draw()
	id := "chatcmpl-sim-" + strconv.FormatUint(s.nextID.Add(1), 10)
	w.Header().Set("X-Request-Id", id)
	wt := newWaiter(r, s.done)
	p := ep.profile

	switch d.fault {
	case fault429, fault500:
		if err := wt.until(arrival.Add(p.HeadersDelay)); err != nil {
			stopped(err)
			return
		}
		if d.fault == fault429 {
			if p.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(p.RetryAfter)))
			}
			writeError(w, http.StatusTooManyRequests, "Rate limit reached (simulated)", "requests", "rate_limit_exceeded")
		} else {
			writeError(w, http.StatusInternalServerError, "The server had an error while processing your request (simulated)", "server_error", nil)
		}
		return
	}

	if req.Stream {
		s.stream(w, &req, ep, out, d, id, arrival, wt)
	} else {
		s.complete(w, ep, out, d, id, arrival, wt)
	}
}

// complete answers a non-streaming request once the whole simulated generation has elapsed.
func (s *Server) complete(w http.ResponseWriter, ep *endpoint, out output, d draw, id string, arrival time.Time, wt *waiter) {
	chunks := out.chunks()
	sched := newSchedule(ep.profile, out, d, arrival)
	end := chunks - 1
	if d.fault != noFault {
		end = d.faultChunk(chunks)
	}
	if err := wt.until(sched.target(end)); err != nil {
		stopped(err)
		return
	}
	switch d.fault {
	case faultMidStream:
		writeError(w, http.StatusInternalServerError, midStreamMessage, "server_error", 500)
		return
	case faultCut:
		abort()
	case faultStall:
		stopped(wt.forever())
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
		ID: id, Object: "chat.completion", Created: arrival.Unix(), Model: ep.profile.Model,
		Choices: []choice{{Message: message{
			Role:             "assistant",
			Content:          string(appendWords(nil, out.reasoningTokens, out.answerTokens)),
			ReasoningContent: string(appendWords(nil, 0, out.reasoningTokens)),
		}, FinishReason: out.finish}},
		Usage: appendUsage(nil, out.promptTokens, out.completionTokens(), out.reasoningTokens),
	}
	body, err := json.Marshal(resp)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error(), "server_error", nil)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(body, '\n'))
}

const midStreamMessage = "simulated upstream failure"

// stream answers a streaming request: headers after HeadersDelay, the optional role chunk, the
// token chunks on schedule, then finish, usage and [DONE] — or a fault.
func (s *Server) stream(w http.ResponseWriter, req *chatRequest, ep *endpoint, out output, d draw, id string, arrival time.Time, wt *waiter) {
	p := ep.profile
	if err := wt.until(arrival.Add(p.HeadersDelay)); err != nil {
		stopped(err)
		return
	}
	chunks := out.chunks()
	sw := &streamWriter{
		w:          w,
		rc:         http.NewResponseController(w),
		head:       fmt.Appendf(nil, `data: {"id":%q,"object":"chat.completion.chunk","created":%d,"model":%s,"choices":`, id, arrival.Unix(), ep.modelJSON),
		prompt:     out.promptTokens,
		continuous: req.StreamOptions != nil && req.StreamOptions.ContinuousUsageStats,
	}
	if s.sends != nil {
		sw.record = s.sends.start(id, chunks+4)
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if err := sw.rc.Flush(); err != nil {
		return
	}
	ka := keepAlive{period: p.KeepAlive, next: time.Now().Add(p.KeepAlive)}

	if p.RoleChunk {
		if sw.role() != nil {
			return
		}
	}
	sched := newSchedule(p, out, d, arrival)
	faultAt := -1
	if d.fault != noFault {
		faultAt = d.faultChunk(chunks)
	}
	for i := range chunks {
		if i == faultAt {
			break
		}
		if err := ka.waitUntil(wt, sw, sched.target(i)); err != nil {
			stopped(err)
			return
		}
		kind, first, n := out.chunk(i)
		if sw.tokens(kind, first, n) != nil {
			return
		}
	}

	switch d.fault {
	case faultMidStream:
		// Real upstreams fail after the usual gap, not instantly.
		if err := ka.waitUntil(wt, sw, sched.target(faultAt)); err != nil {
			stopped(err)
			return
		}
		_ = sw.fail()
		return
	case faultCut:
		if err := ka.waitUntil(wt, sw, sched.target(faultAt)); err != nil {
			stopped(err)
			return
		}
		abort()
	case faultStall:
		stopped(ka.waitForever(wt, sw))
		return
	}

	if sw.finish(out.finish) != nil {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		if sw.usage() != nil {
			return
		}
	}
	_ = sw.done()
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

func (ka *keepAlive) waitForever(wt *waiter, sw *streamWriter) error {
	for ka.period > 0 {
		if err := ka.tick(wt, sw); err != nil {
			return err
		}
	}
	return wt.forever()
}

func (ka *keepAlive) tick(wt *waiter, sw *streamWriter) error {
	if err := wt.until(ka.next); err != nil {
		return err
	}
	if err := sw.comment(); err != nil {
		return errClientGone
	}
	ka.next = ka.next.Add(ka.period)
	if now := time.Now(); ka.next.Before(now) { // fell behind (slow client): skip the missed beats
		ka.next = now.Add(ka.period)
	}
	return nil
}
