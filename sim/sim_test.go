package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ---- client helpers -------------------------------------------------------------------------

type usageJSON struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

type apiErrorJSON struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

type chunkJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role             string `json:"role"`
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usageJSON    `json:"usage"`
	Error *apiErrorJSON `json:"error"`
}

type frame struct {
	at      time.Time
	raw     string
	comment bool
	done    bool
	chunk   *chunkJSON // nil for comments and [DONE]
}

func (f frame) content() string {
	if f.chunk == nil || len(f.chunk.Choices) == 0 {
		return ""
	}
	return f.chunk.Choices[0].Delta.Content
}

func (f frame) reasoning() string {
	if f.chunk == nil || len(f.chunk.Choices) == 0 {
		return ""
	}
	return f.chunk.Choices[0].Delta.ReasoningContent
}

func (f frame) finish() string {
	if f.chunk == nil || len(f.chunk.Choices) == 0 || f.chunk.Choices[0].FinishReason == nil {
		return ""
	}
	return *f.chunk.Choices[0].FinishReason
}

type result struct {
	start   time.Time // just before the request was sent
	headers time.Time // when Do returned
	status  int
	header  http.Header
	body    []byte  // non-event-stream bodies
	frames  []frame // event streams
	readErr error   // what ended the body read; nil for a clean end
}

func (r result) data() []frame {
	var out []frame
	for _, f := range r.frames {
		if !f.comment && !f.done {
			out = append(out, f)
		}
	}
	return out
}

func (r result) tokenFrames() []frame {
	var out []frame
	for _, f := range r.frames {
		if f.content() != "" || f.reasoning() != "" {
			out = append(out, f)
		}
	}
	return out
}

func (r result) text() (reasoning, content string) {
	for _, f := range r.frames {
		reasoning += f.reasoning()
		content += f.content()
	}
	return reasoning, content
}

func (r result) count(pred func(frame) bool) int {
	n := 0
	for _, f := range r.frames {
		if pred(f) {
			n++
		}
	}
	return n
}

func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func start(t *testing.T, opts Options, profiles ...Profile) *Server {
	t.Helper()
	s, err := Start(opts, profiles...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// do sends a request and reads the whole response, stamping each SSE line as it arrives.
func do(t *testing.T, ctx context.Context, c *http.Client, method, url, body string) result {
	t.Helper()
	res, err := fetch(ctx, c, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fetch is do for any goroutine: it returns what went wrong instead of failing the test.
func fetch(ctx context.Context, c *http.Client, method, url, body string) (result, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return result{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	res := result{start: time.Now()}
	resp, err := c.Do(req)
	if err != nil {
		return res, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	res.headers = time.Now()
	res.status, res.header = resp.StatusCode, resp.Header
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		res.body, res.readErr = io.ReadAll(resp.Body)
		return res, nil
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		at := time.Now()
		if err != nil {
			if err != io.EOF || line != "" {
				res.readErr = err
			}
			return res, nil
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
		case strings.HasPrefix(line, ":"):
			res.frames = append(res.frames, frame{at: at, raw: line, comment: true})
		case line == "data: [DONE]":
			res.frames = append(res.frames, frame{at: at, raw: line, done: true})
		case strings.HasPrefix(line, "data: "):
			f := frame{at: at, raw: line, chunk: new(chunkJSON)}
			if err := json.Unmarshal([]byte(line[len("data: "):]), f.chunk); err != nil {
				return res, fmt.Errorf("frame %q is not JSON: %w", line, err)
			}
			res.frames = append(res.frames, f)
		default:
			return res, fmt.Errorf("unexpected SSE line %q", line)
		}
	}
}

func chat(t *testing.T, c *http.Client, s *Server, profile, body string) result {
	t.Helper()
	return do(t, context.Background(), c, http.MethodPost, s.BaseURL(profile)+"/chat/completions", body)
}

func streamBody(maxTokens int, extra string) string {
	b := `{"model":"m","messages":[{"role":"user","content":"hello world"}],"stream":true`
	if maxTokens > 0 {
		b += `,"max_tokens":` + itoa(maxTokens)
	}
	return b + extra + "}"
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// quick is a profile fast enough not to cost test time.
func quick(name string) Profile {
	return Profile{Name: name, Model: name + "-model", TTFT: 5 * time.Millisecond, TokensPerSecond: 2000, Seed: 1}
}

// ---- schedule --------------------------------------------------------------------------------

// ---- the machine's share of a timing test -------------------------------------------------------

// onTime is how late a send the schedule made on time may still be, where a test bounds
// lateness from above. The simulator sleeps until absolute instants: it can never be early, so
// every instant a test observes is checked from below against its exact target, load or not.
// From above, the machine adds its own delay: on the shared 2-core machine (load 6–8 from
// other builds, two CPU hogs, -race), a goroutine sleeping until an instant woke up to 85 ms
// late now and then (TestScheduleAccuracy's sends, TestStepClock's frames, the first token of
// TestPrefillTTFT), so no single instant is bounded. A wrong schedule (a TTFT, a prefill, a
// rate off) moves every instant after it; the machine delays some. So the upper bound is
// checked on what a wrong schedule shifts and a stall does not: the median of many sends, or
// the best of a few tries (bestOf). 20 ms is a quarter of the worst stall seen, and ten times
// the lateness of an idle machine (1–4 ms).
const onTime = 20 * time.Millisecond

// bestOf runs try up to 5 times, until one reports a lateness within onTime: a schedule off by
// more than onTime is late on every try, a busy machine on some. Each try checks its own
// lower bounds (never early) with t.Errorf.
func bestOf(t *testing.T, what string, try func() time.Duration) {
	t.Helper()
	retry(t, what, func() error {
		if d := try(); d > onTime {
			return fmt.Errorf("late by %v, want ≤ %v", d, onTime)
		}
		return nil
	})
}

// retry runs try up to 5 times, until it returns nil, for an upper bound a stall of the
// machine can break on one try and a wrong schedule breaks on every one; it fails the test
// with every try's error.
func retry(t *testing.T, what string, try func() error) {
	t.Helper()
	var errs []error
	for range 5 {
		err := try()
		if err == nil {
			return
		}
		t.Logf("%s: %v; again", what, err)
		errs = append(errs, err)
	}
	t.Errorf("%s, on each of %d tries: %v", what, len(errs), errors.Join(errs...))
}

// median is the middle of ds (the upper middle for an even count); 0 for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// contentSends returns the instants the content frames of a streamed response id were sent.
func contentSends(s *Server, id string) []time.Time {
	var at []time.Time
	for _, f := range s.Sends(id) {
		if f.Kind == FrameContent {
			at = append(at, f.At)
		}
	}
	return at
}

// TestScheduleAccuracy: 50 tokens at 100 tok/s after a 100 ms TTFT, on an absolute schedule
// from the request's arrival: token k is due at Arrival + 100 ms + k·10 ms exactly (no
// jitter, a free slot). No send and no client read may come before its target; the median
// lateness is onTime at most (a stall of the machine delays some sends, a TTFT or rate off
// delays every later one); and a send that came late is caught up rather than carried: some
// gap between sends is shorter than 10 ms, which a schedule counted from the previous send
// (gaps of 10 ms plus each send's own delay) never has.
func TestScheduleAccuracy(t *testing.T) {
	p := Profile{Name: "p", TTFT: 100 * time.Millisecond, TokensPerSecond: 100, Seed: 1}
	s := start(t, Options{TrackSends: true}, p)
	r := chat(t, newClient(t), s, "p", streamBody(50, ""))

	toks := r.tokenFrames()
	if len(toks) != 50 {
		t.Fatalf("%d token frames, want 50", len(toks))
	}
	id := toks[0].chunk.ID
	arrival, ok := s.Arrival(id)
	sends := contentSends(s, id)
	if !ok || len(sends) != 50 {
		t.Fatalf("arrival recorded %v, %d content sends recorded, want 50", ok, len(sends))
	}
	target := func(k int) time.Time { return arrival.Add(p.TTFT + time.Duration(k)*10*time.Millisecond) }
	var serverLate, clientLate []time.Duration
	shortGap := false
	for k := range 50 {
		serverLate = append(serverLate, sends[k].Sub(target(k)))
		clientLate = append(clientLate, toks[k].at.Sub(target(k)))
		if sends[k].Before(target(k)) || toks[k].at.Before(target(k)) {
			t.Errorf("token %d sent %v, read %v after its target: early", k, serverLate[k], clientLate[k])
		}
		if k > 0 && sends[k].Sub(sends[k-1]) < 10*time.Millisecond {
			shortGap = true
		}
	}
	t.Logf("lateness: server median %v worst %v; client median %v worst %v; client ttft %v",
		median(serverLate), slices.Max(serverLate), median(clientLate), slices.Max(clientLate), toks[0].at.Sub(r.start))
	if m := median(serverLate); m > onTime {
		t.Errorf("median send %v late, want ≤ %v", m, onTime)
	}
	if m := median(clientLate); m > onTime {
		t.Errorf("median token read %v late, want ≤ %v", m, onTime)
	}
	if !shortGap {
		t.Errorf("no gap between sends under 10 ms: late sends were carried, not caught up (lateness %v)", serverLate)
	}
}

// TestHeadersDelay: headers HeadersDelay (80 ms) after the request, the first token at the
// TTFT (120 ms) however early the headers: the headers' lateness is bounded on the best of a
// few requests (bestOf), within onTime, so they surely come before the TTFT they must not wait for.
func TestHeadersDelay(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.HeadersDelay, p.TTFT = 80*time.Millisecond, 120*time.Millisecond
	s := start(t, Options{}, p)
	c := newClient(t)
	bestOf(t, "headers", func() time.Duration {
		r := chat(t, c, s, "p", streamBody(3, ""))
		d := r.headers.Sub(r.start)
		if d < p.HeadersDelay {
			t.Errorf("headers after %v, want ≥ %v", d, p.HeadersDelay)
		}
		if first := r.tokenFrames()[0].at.Sub(r.start); first < p.TTFT {
			t.Errorf("first token after %v, want ≥ %v", first, p.TTFT)
		}
		return d - p.HeadersDelay
	})
}

func TestDrawJitterBounds(t *testing.T) {
	t.Parallel()
	p, _ := Profile{Name: "p", TTFT: 100 * time.Millisecond, TTFTJitter: 50 * time.Millisecond,
		TokensPerSecond: 100, Jitter: 0.5, Seed: 3}.normalized()
	ep := &endpoint{profile: p}
	ep.rng = newRand(p.Seed)
	lo, hi := time.Hour, time.Duration(0)
	for range 2000 {
		d := ep.draw()
		lo, hi = min(lo, d.ttft), max(hi, d.ttft)
	}
	if lo < 50*time.Millisecond || hi > 150*time.Millisecond || lo > 55*time.Millisecond || hi < 145*time.Millisecond {
		t.Errorf("ttft range %v..%v, want to fill 50ms..150ms", lo, hi)
	}

	out := output{answerTokens: 2001, perChunk: 1}
	sc := newSchedule(p, out, ep.draw(), time.Time{}, nil)
	prev := sc.target(0)
	var sum time.Duration
	for i := 1; i <= 2000; i++ {
		next := sc.target(i)
		gap := next.Sub(prev)
		if gap < 5*time.Millisecond || gap > 15*time.Millisecond {
			t.Fatalf("gap %d = %v, want 10ms ± 50%%", i, gap)
		}
		sum += gap
		prev = next
	}
	if mean := sum / 2000; mean < 9700*time.Microsecond || mean > 10300*time.Microsecond {
		t.Errorf("mean gap %v, want 10ms", mean)
	}
}

// With Step, the chunks of every stream leave on the backend's step boundaries, as a batching
// server sends them: three streams started 65 and 135 ms apart (on their own clocks their
// chunks would be spread over the 200 ms step, 65-70 ms from each other) send every frame of
// content at its stream's own time rounded up to a multiple of 200 ms since the backend
// started: never before that boundary (a frame on the stream's own clock would be), and with a
// median lateness within onTime (a stall of the machine delays the frames of one boundary, a
// wrong boundary all of them).
func TestStepClock(t *testing.T) {
	p := Profile{Name: "p", TTFT: 50 * time.Millisecond, TokensPerSecond: 5, TokensPerChunk: 1, Step: 200 * time.Millisecond}
	s := start(t, Options{TrackSends: true}, p)
	c := newClient(t)
	ids := make([]string, 3)
	var wg sync.WaitGroup
	for i, delay := range []time.Duration{0, 65 * time.Millisecond, 135 * time.Millisecond} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(delay)
			ids[i] = chat(t, c, s, "p", streamBody(4, "")).header.Get("X-Request-Id")
		}()
	}
	wg.Wait()
	epoch := s.endpoints["p"].backend.epoch
	boundary := func(at time.Time) time.Time { // the first step boundary at or after at
		return epoch.Add((at.Sub(epoch) + p.Step - 1) / p.Step * p.Step)
	}
	var late []time.Duration
	for i, id := range ids {
		arrival, ok := s.Arrival(id)
		sends := contentSends(s, id)
		if !ok || len(sends) != 4 {
			t.Fatalf("stream %d: arrival recorded %v, %d content frames, want 4", i, ok, len(sends))
		}
		for k, at := range sends {
			due := boundary(arrival.Add(p.TTFT + time.Duration(k)*200*time.Millisecond))
			late = append(late, at.Sub(due))
			if at.Before(due) {
				t.Errorf("stream %d: content frame %d left %v before its step boundary", i, k, due.Sub(at))
			}
		}
	}
	t.Logf("lateness after the step boundary: median %v, worst %v", median(late), slices.Max(late))
	if m := median(late); m > onTime {
		t.Errorf("content frames left a median %v after their step boundary, want ≤ %v", m, onTime)
	}
}

// ---- stream shape ------------------------------------------------------------------------------

func TestStreamShape(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.RoleChunk = true
	s := start(t, Options{}, p)
	r := chat(t, newClient(t), s, "p", streamBody(10, `,"stream_options":{"include_usage":true},"ignore_eos":true,"temperature":0,"whatever":{"x":[1]}`))

	if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", r.status, r.header.Get("Content-Type"))
	}
	if r.readErr != nil {
		t.Fatalf("read: %v", r.readErr)
	}
	data := r.data()
	// role, 10 content, finish, usage
	if len(data) != 13 {
		t.Fatalf("%d data frames, want 13: %v", len(data), r.frames)
	}
	if last := r.frames[len(r.frames)-1]; !last.done {
		t.Errorf("stream does not end with [DONE]")
	}
	id := data[0].chunk.ID
	if !strings.HasPrefix(id, "chatcmpl-sim-") || r.header.Get("X-Request-Id") != id {
		t.Errorf("id %q, X-Request-Id %q", id, r.header.Get("X-Request-Id"))
	}
	for i, f := range data {
		c := f.chunk
		if c.ID != id || c.Object != "chat.completion.chunk" || c.Model != "p-model" || c.Created == 0 {
			t.Errorf("frame %d header: %+v", i, c)
		}
		if c.Usage != nil && i != 12 {
			t.Errorf("frame %d carries usage without continuous_usage_stats", i)
		}
	}
	if d := data[0].chunk.Choices[0].Delta; d.Role != "assistant" || d.Content != "" || data[0].finish() != "" {
		t.Errorf("role chunk: %s", data[0].raw)
	}
	if !strings.Contains(data[0].raw, `"delta":{"role":"assistant"}`) {
		t.Errorf("role chunk delta is not exactly role-only: %s", data[0].raw)
	}
	for i, f := range data[1:11] {
		if f.content() != Word(i) || f.finish() != "" || !strings.Contains(f.raw, `"finish_reason":null`) {
			t.Errorf("content frame %d: %s", i, f.raw)
		}
	}
	if f := data[11]; f.finish() != "length" || !strings.Contains(f.raw, `"delta":{}`) {
		t.Errorf("finish frame: %s", f.raw)
	}
	u := data[12].chunk
	if u.Choices == nil || len(u.Choices) != 0 || u.Usage == nil || !strings.Contains(data[12].raw, `"choices":[]`) {
		t.Fatalf("usage frame: %s", data[12].raw)
	}
	want := usageJSON{PromptTokens: 6, CompletionTokens: 10, TotalTokens: 16}
	if got := *u.Usage; got.PromptTokens != want.PromptTokens || got.CompletionTokens != want.CompletionTokens ||
		got.TotalTokens != want.TotalTokens || got.CompletionTokensDetails == nil || got.CompletionTokensDetails.ReasoningTokens != 0 {
		t.Errorf("usage %+v, want %+v", got, want)
	}
	if _, content := r.text(); content != Text(0, 10) {
		t.Errorf("content %q", content)
	}
	if n := r.count(func(f frame) bool { return f.comment }); n != 0 {
		t.Errorf("%d keep-alives with KeepAlive 0", n)
	}
}

func TestNoUsageWithoutIncludeUsage(t *testing.T) {
	t.Parallel()
	s := start(t, Options{}, quick("p"))
	c := newClient(t)
	for _, extra := range []string{"", `,"stream_options":{"include_usage":false}`} {
		r := chat(t, c, s, "p", streamBody(5, extra))
		if n := r.count(func(f frame) bool { return f.chunk != nil && f.chunk.Usage != nil }); n != 0 {
			t.Errorf("%q: %d frames carry usage", extra, n)
		}
		if n := len(r.data()); n != 6 { // no role chunk: 5 content + finish
			t.Errorf("%q: %d data frames, want 6", extra, n)
		}
		if !r.frames[len(r.frames)-1].done {
			t.Errorf("%q: no [DONE]", extra)
		}
	}
}

func TestContinuousUsage(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.ReasoningTokens, p.TokensPerChunk = 2, 2
	s := start(t, Options{}, p)
	r := chat(t, newClient(t), s, "p", streamBody(7, `,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`))
	completion, reasoning := 0, 0
	for _, f := range r.data() {
		u := f.chunk.Usage
		if u == nil {
			t.Fatalf("frame without usage: %s", f.raw)
		}
		completion += len(strings.Fields(f.content())) + len(strings.Fields(f.reasoning()))
		reasoning += len(strings.Fields(f.reasoning()))
		if u.CompletionTokens != completion || u.CompletionTokensDetails.ReasoningTokens != reasoning || u.TotalTokens != u.PromptTokens+completion {
			t.Errorf("cumulative usage %+v after %d tokens: %s", u, completion, f.raw)
		}
	}
	if completion != 7 {
		t.Errorf("%d tokens, want 7", completion)
	}
}

func TestFinishReason(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.MaxTokens = 7
	s := start(t, Options{}, p)
	c := newClient(t)
	for _, tc := range []struct {
		extra  string
		tokens int
		finish string
	}{
		{`}`, 7, "stop"},
		{`,"max_tokens":3}`, 3, "length"},
		{`,"max_tokens":20}`, 20, "length"},
		{`,"max_tokens":3,"max_completion_tokens":5}`, 5, "length"},
		// min_tokens is a floor under the length without a limit; ignore_eos changes nothing.
		{`,"min_tokens":30,"ignore_eos":true}`, 30, "stop"},
		{`,"min_tokens":5}`, 7, "stop"},
		{`,"min_tokens":5,"max_tokens":6,"ignore_eos":true}`, 6, "length"},
		{`,"min_tokens":6,"max_tokens":6}`, 6, "length"},
	} {
		r := chat(t, c, s, "p", `{"stream":true,"messages":[]`+tc.extra)
		_, content := r.text()
		data := r.data()
		if content != Text(0, tc.tokens) || data[len(data)-1].finish() != tc.finish {
			t.Errorf("%s: %d tokens ending %q, want %d ending %q", tc.extra, len(strings.Fields(content)),
				data[len(data)-1].finish(), tc.tokens, tc.finish)
		}
	}
}

func TestReasoningAndMultiTokenChunks(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.ReasoningTokens, p.TokensPerChunk = 5, 2
	s := start(t, Options{}, p)
	r := chat(t, newClient(t), s, "p", streamBody(12, `,"stream_options":{"include_usage":true}`))

	var sizes []string
	for _, f := range r.tokenFrames() {
		if f.content() != "" && f.reasoning() != "" {
			t.Errorf("a chunk carries both reasoning and content: %s", f.raw)
		}
		kind := "c"
		if f.reasoning() != "" {
			kind = "r"
		}
		sizes = append(sizes, kind+itoa(len(strings.Fields(f.content()+f.reasoning()))))
	}
	if got, want := strings.Join(sizes, " "), "r2 r2 r1 c2 c2 c2 c1"; got != want {
		t.Errorf("chunks %q, want %q", got, want)
	}
	reasoning, content := r.text()
	if reasoning != Text(0, 5) || content != Text(5, 7) {
		t.Errorf("reasoning %q content %q", reasoning, content)
	}
	u := r.data()[len(r.data())-1].chunk.Usage
	if u == nil || u.CompletionTokens != 12 || u.CompletionTokensDetails.ReasoningTokens != 5 {
		t.Errorf("usage %+v", u)
	}
}

// TestMultiTokenChunkTiming: 3 tokens a chunk at 100 tok/s are 30 ms apart, the last chunk (1
// token) 10 ms after the one before: chunk k is due at Arrival + TTFT + 0, 30, 60, 70 ms.
// Arrival is the instant the schedule counts from, recorded for every tracked stream (not
// Received, the kernel's stamp, which a segment that came before the socket's stamping was on
// lacks). No chunk before its target; the worst lateness within onTime on the best of a few
// streams (bestOf).
func TestMultiTokenChunkTiming(t *testing.T) {
	t.Parallel()
	p := Profile{Name: "p", TTFT: 10 * time.Millisecond, TokensPerSecond: 100, TokensPerChunk: 3, Seed: 1}
	s := start(t, Options{TrackSends: true}, p)
	c := newClient(t)
	bestOf(t, "chunks", func() time.Duration {
		r := chat(t, c, s, "p", streamBody(10, ""))
		id := r.data()[0].chunk.ID
		var n []int
		var at []time.Time
		for _, f := range s.Sends(id) {
			if f.Kind == FrameContent {
				n, at = append(n, f.Tokens), append(at, f.At)
			}
		}
		if len(n) != 4 || n[0] != 3 || n[3] != 1 {
			t.Fatalf("chunk sizes %v, want [3 3 3 1]", n)
		}
		arrival, ok := s.Arrival(id)
		if !ok {
			t.Fatal("no arrival recorded")
		}
		var worst time.Duration
		for k, offset := range []time.Duration{0, 30, 60, 70} {
			due := arrival.Add(p.TTFT + offset*time.Millisecond)
			if at[k].Before(due) {
				t.Errorf("chunk %d sent %v before its target", k, due.Sub(at[k]))
			}
			worst = max(worst, at[k].Sub(due))
		}
		return worst
	})
}

// TestKeepAlive: a stream waiting for its first token (150 ms) beats every 20 ms: 7 beats, never
// more than the period allows (a missed beat is skipped, not sent twice); at least 4 on one of
// a few requests (retry), as a stall of the machine loses beats.
func TestKeepAlive(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.KeepAlive, p.TTFT = 20*time.Millisecond, 150*time.Millisecond
	s := start(t, Options{}, p)
	c := newClient(t)
	retry(t, "keep-alives", func() error {
		r := chat(t, c, s, "p", streamBody(3, ""))
		before := 0
		for _, f := range r.frames {
			if f.content() != "" {
				break
			}
			if f.comment {
				if f.raw != ": keep-alive" {
					t.Errorf("comment %q", f.raw)
				}
				before++
			}
		}
		if !r.frames[len(r.frames)-1].done {
			t.Error("no [DONE]")
		}
		if before > 8 {
			t.Errorf("%d keep-alives before the first token, want ≈7 and at most 8", before)
		}
		if before < 4 {
			return fmt.Errorf("%d keep-alives before the first token, want ≈7", before)
		}
		return nil
	})
}

// ---- faults ------------------------------------------------------------------------------------

func TestFault429(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.Rate429, p.RetryAfter = 1, 1500*time.Millisecond
	q := quick("q")
	q.Rate429 = 1
	s := start(t, Options{TrackSends: true}, p, q)
	c := newClient(t)
	for _, body := range []string{streamBody(5, ""), `{"messages":[]}`} {
		r := chat(t, c, s, "p", body)
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "2" {
			t.Errorf("status %d Retry-After %q, want 429 and 2", r.status, r.header.Get("Retry-After"))
		}
		var e struct{ Error apiErrorJSON }
		if err := json.Unmarshal(r.body, &e); err != nil || e.Error.Code != "rate_limit_exceeded" || e.Error.Message == "" {
			t.Errorf("body %s (%v)", r.body, err)
		}
		if s.SendTimes(r.header.Get("X-Request-Id")) != nil {
			t.Error("send times recorded for a 429")
		}
	}
	if r := chat(t, c, s, "q", streamBody(5, "")); r.status != 429 || r.header.Values("Retry-After") != nil {
		t.Errorf("RetryAfter 0: status %d Retry-After %q", r.status, r.header.Values("Retry-After"))
	}
}

func TestFault500(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.Rate500 = 1
	s := start(t, Options{}, p)
	r := chat(t, newClient(t), s, "p", streamBody(5, ""))
	var e struct{ Error apiErrorJSON }
	if r.status != 500 || json.Unmarshal(r.body, &e) != nil || e.Error.Type != "server_error" {
		t.Errorf("status %d body %s", r.status, r.body)
	}
}

func TestFaultMidStreamError(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.RateMidStreamError, p.RoleChunk = 1, true
	s := start(t, Options{}, p)
	c := newClient(t)
	for range 5 {
		r := chat(t, c, s, "p", streamBody(20, `,"stream_options":{"include_usage":true}`))
		if r.status != 200 || r.readErr != nil {
			t.Fatalf("status %d read %v", r.status, r.readErr)
		}
		data := r.data()
		last := data[len(data)-1]
		if last.raw != `data: {"error":{"message":"simulated upstream failure","type":"server_error","code":500}}` {
			t.Errorf("last frame %s", last.raw)
		}
		if n := len(r.tokenFrames()); n < 1 || n > 19 {
			t.Errorf("%d tokens before the error, want 1..19", n)
		}
		if r.count(func(f frame) bool { return f.done || f.finish() != "" || (f.chunk != nil && f.chunk.Usage != nil) }) != 0 {
			t.Error("finish, usage or [DONE] after a mid-stream error")
		}
	}
	// Non-streaming: a 500 after part of the generation time.
	r := chat(t, c, s, "p", `{"max_tokens":20}`)
	if r.status != 500 {
		t.Errorf("non-streaming mid-stream error: status %d", r.status)
	}
}

func TestFaultCut(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.RateCut = 1
	s := start(t, Options{}, p)
	c := newClient(t)
	r := chat(t, c, s, "p", streamBody(20, `,"stream_options":{"include_usage":true}`))
	if !errors.Is(r.readErr, io.ErrUnexpectedEOF) {
		t.Errorf("read ended with %v, want unexpected EOF", r.readErr)
	}
	if n := len(r.tokenFrames()); n < 1 || n > 19 {
		t.Errorf("%d tokens before the cut, want 1..19", n)
	}
	if r.count(func(f frame) bool { return f.done || f.finish() != "" }) != 0 {
		t.Error("finish or [DONE] in a cut stream")
	}
	// Non-streaming: the connection drops before any response.
	req, _ := http.NewRequest(http.MethodPost, s.BaseURL("p")+"/chat/completions", strings.NewReader(`{}`))
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("non-streaming cut: got status %d, want a transport error", resp.StatusCode)
	}
}

// TestFaultStall: a stalled stream sends some tokens and then nothing, until the client leaves
// (its deadline); the handler then returns. With keep-alives, the stall beats at their period.
// Both are bounded by counts and events: the frames the server sent are the tokens the client
// read, and the beats are read until four have come after the last token, however long a busy
// machine takes, and are never more than the period allows.
func TestFaultStall(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.RateStall = 1
	k := quick("k")
	k.RateStall, k.KeepAlive = 1, 30*time.Millisecond
	s := start(t, Options{TrackSends: true}, p, k)
	c := newClient(t)

	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	r := do(t, ctx, c, http.MethodPost, s.BaseURL("p")+"/chat/completions", streamBody(20, ""))
	if !errors.Is(r.readErr, context.DeadlineExceeded) {
		t.Errorf("read ended with %v, want the client's deadline", r.readErr)
	}
	toks := r.tokenFrames()
	if len(toks) < 1 || len(toks) > 19 || len(r.frames) != len(toks) {
		t.Fatalf("frames %v", r.frames)
	}
	// The handler noticed the client leaving and returned, so its connection closed.
	deadline := time.Now().Add(2 * time.Second)
	for openConns(s) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := openConns(s); n > 0 {
		t.Errorf("%d connections still open after the client left a stalled stream", n)
	}
	// Silence after the last token: the server sent those tokens and nothing else, and sends
	// nothing more now that the client is gone.
	id := toks[0].chunk.ID
	sent := s.Sends(id)
	if len(sent) != len(toks) || slices.ContainsFunc(sent, func(f Send) bool { return f.Kind != FrameContent }) {
		t.Errorf("server sent %v, the client read %d tokens: want those tokens alone", sent, len(toks))
	}
	time.Sleep(50 * time.Millisecond)
	if len(s.Sends(id)) != len(sent) {
		t.Error("server still sending after the client left")
	}

	// With keep-alives the stall keeps beating.
	req, err := http.NewRequest(http.MethodPost, s.BaseURL("k")+"/chat/completions", strings.NewReader(streamBody(20, "")))
	if err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	resp, err := c.Do(req.WithContext(ctx2))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var last time.Time // the last token's read
	var beats []time.Time
	br := bufio.NewReader(resp.Body)
	for len(beats) < 4 {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d keep-alives past the last token: %v", len(beats), err)
		}
		switch {
		case strings.HasPrefix(line, "data: "):
			if len(beats) > 0 {
				t.Fatalf("data after the stall began: %q", line)
			}
			last = time.Now()
		case line == ": keep-alive\n" && !last.IsZero():
			beats = append(beats, time.Now())
		}
	}
	// A beat every 30 ms at most: the beats are due a period apart, and one due before the last
	// token may be sent after it (a late beat is followed by the next one on its own schedule,
	// or a period after it when it was more than a period late), so 4 beats span ≥ 60 ms.
	if most := int(beats[3].Sub(last)/k.KeepAlive) + 2; len(beats) > most {
		t.Errorf("4 keep-alives within %v of the last token, want at most %d at a 30 ms period", beats[3].Sub(last), most)
	}
}

func openConns(s *Server) int {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	return len(s.conns)
}

func TestCloseEndsInFlightStreams(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.RateStall = 1
	s, err := Start(Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	results := make(chan result, 3)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { results <- chat(t, c, s, "p", streamBody(20, "")) })
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.Requests("p") < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // let them reach the stall
	t0 := time.Now()
	s.Close()
	s.Close() // idempotent
	if d := time.Since(t0); d > time.Second {
		t.Errorf("Close took %v", d)
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r.readErr == nil || r.count(func(f frame) bool { return f.done }) != 0 {
			t.Errorf("stream ended cleanly (%v) after Close", r.readErr)
		}
	}
	if _, err := c.Get(s.URL() + "/p/v1/models"); err == nil {
		t.Error("server still answers after Close")
	}
}

func TestClientCancelStopsStream(t *testing.T) {
	t.Parallel()
	p := Profile{Name: "p", TTFT: 5 * time.Millisecond, TokensPerSecond: 200, Seed: 1}
	s := start(t, Options{TrackSends: true}, p)
	c := newClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.BaseURL("p")+"/chat/completions", strings.NewReader(streamBody(200, "")))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	cancel()
	resp.Body.Close()
	if !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first line %q", line)
	}
	id := resp.Header.Get("X-Request-Id")
	time.Sleep(50 * time.Millisecond)
	n := len(s.SendTimes(id))
	time.Sleep(100 * time.Millisecond) // 20 more tokens' worth
	if m := len(s.SendTimes(id)); m != n || n > 30 {
		t.Errorf("sends grew from %d to %d after the client left (of 200)", n, m)
	}
}

func TestSeededFaultsReproduce(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.Rate429, p.Seed, p.TTFT = 0.3, 7, 0
	c := newClient(t)
	var runs [2]string
	for i := range runs {
		s := start(t, Options{}, p)
		var b strings.Builder
		for range 200 {
			r := chat(t, c, s, "p", `{"max_tokens":1}`)
			b.WriteString(map[int]string{200: ".", 429: "x"}[r.status])
		}
		runs[i] = b.String()
	}
	if runs[0] != runs[1] {
		t.Errorf("same seed, different faults:\n%s\n%s", runs[0], runs[1])
	}
	// Binomial(200, 0.3): mean 60, sd 6.5; the seed makes this deterministic, not flaky.
	if n := strings.Count(runs[0], "x"); n < 34 || n > 86 {
		t.Errorf("%d of 200 were 429, want ≈60", n)
	}
}

// ---- send times, non-streaming, routes -----------------------------------------------------------

func TestSendTimes(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.RoleChunk, p.ReasoningTokens = true, 2
	s := start(t, Options{TrackSends: true}, p)
	c := newClient(t)
	// One process, one monotonic clock. The send stamp is taken after Flush returns, so the
	// reader may stamp a frame slightly earlier (seen: 0.5 ms under -race), and a reader the
	// machine holds up stamps it later; a stall of either side (up to 85 ms under load) moves
	// one stream's frames, so the bounds hold on one of a few streams (retry).
	retry(t, "reads against send stamps", func() error {
		r := chat(t, c, s, "p", streamBody(6, `,"stream_options":{"include_usage":true}`))
		data := r.data()
		id := data[0].chunk.ID
		sends := s.Sends(id)
		times := s.SendTimes(id)
		if len(sends) != len(data) || len(times) != len(data) {
			t.Fatalf("%d sends, %d times for %d data frames", len(sends), len(times), len(data))
		}
		kinds := ""
		var off []string
		for i, f := range sends {
			kinds += string(f.Kind) + " "
			if !times[i].Equal(f.At) {
				t.Errorf("SendTimes[%d] != Sends[%d].At", i, i)
			}
			if i > 0 && f.At.Before(sends[i-1].At) {
				t.Errorf("send %d before send %d", i, i-1)
			}
			if d := data[i].at.Sub(f.At); d < -onTime || d > onTime {
				off = append(off, fmt.Sprintf("frame %d read %v after it was sent", i, d))
			}
		}
		if want := "role reasoning reasoning content content content content finish usage "; kinds != want {
			t.Errorf("kinds %q, want %q", kinds, want)
		}
		if off != nil {
			return errors.New(strings.Join(off, "; "))
		}
		return nil
	})
	if s.SendTimes("chatcmpl-sim-999") != nil || s.SendTimes("") != nil {
		t.Error("send times for an unknown id")
	}

	// Tracking off: nothing recorded.
	off := start(t, Options{}, p)
	r := chat(t, c, off, "p", streamBody(3, ""))
	if off.SendTimes(r.data()[0].chunk.ID) != nil {
		t.Error("send times recorded with TrackSends off")
	}

	// Bounded: the oldest response is forgotten.
	small := start(t, Options{TrackSends: true, tracked: 3}, p)
	var ids []string
	for range 4 {
		ids = append(ids, chat(t, c, small, "p", streamBody(1, "")).data()[0].chunk.ID)
	}
	if small.SendTimes(ids[0]) != nil || small.SendTimes(ids[1]) == nil || small.SendTimes(ids[3]) == nil {
		t.Error("send log does not keep exactly the last 3 responses")
	}
}

// TestNonStreaming: a non-streamed answer walks the stream's schedule and comes at its end,
// 50 ms TTFT + 9 gaps of 5 ms = 95 ms after the request: never before, and within onTime of it
// on the best of a few requests (bestOf).
func TestNonStreaming(t *testing.T) {
	t.Parallel()
	p := Profile{Name: "p", Model: "m1", TTFT: 50 * time.Millisecond, TokensPerSecond: 200, ReasoningTokens: 3, Seed: 1}
	s := start(t, Options{}, p)
	c := newClient(t)
	var r result
	bestOf(t, "answer", func() time.Duration {
		r = chat(t, c, s, "p", `{"model":"m1","messages":[{"role":"user","content":[{"type":"text","text":"a b c"}]}],"max_tokens":10,"stream":false}`)
		d := r.headers.Sub(r.start)
		if d < 95*time.Millisecond {
			t.Errorf("answered after %v, want ≥ 95ms", d)
		}
		return d - 95*time.Millisecond
	})
	var resp struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Role             string `json:"role"`
				Content          string `json:"content"`
				ReasoningContent string `json:"reasoning_content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage usageJSON `json:"usage"`
	}
	if err := json.Unmarshal(r.body, &resp); err != nil || r.status != 200 {
		t.Fatalf("status %d body %s: %v", r.status, r.body, err)
	}
	m := resp.Choices[0].Message
	if resp.Object != "chat.completion" || resp.Model != "m1" || resp.ID != r.header.Get("X-Request-Id") ||
		m.Role != "assistant" || m.ReasoningContent != Text(0, 3) || m.Content != Text(3, 7) || resp.Choices[0].FinishReason != "length" {
		t.Errorf("response %s", r.body)
	}
	if u := resp.Usage; u.PromptTokens != 7 || u.CompletionTokens != 10 || u.TotalTokens != 17 || u.CompletionTokensDetails.ReasoningTokens != 3 {
		t.Errorf("usage %+v", u)
	}
}

func TestModelsAndRoutes(t *testing.T) {
	t.Parallel()
	s := start(t, Options{}, quick("a"), Profile{Name: "b", TokensPerSecond: 10})
	c := newClient(t)
	get := func(path string) result { return do(t, context.Background(), c, http.MethodGet, s.URL()+path, "") }

	for name, model := range map[string]string{"a": "a-model", "b": "b"} {
		r := get("/" + name + "/v1/models")
		var list struct {
			Object string `json:"object"`
			Data   []struct{ ID, Object string }
		}
		if err := json.Unmarshal(r.body, &list); err != nil || r.status != 200 || list.Object != "list" ||
			len(list.Data) != 1 || list.Data[0].ID != model || list.Data[0].Object != "model" {
			t.Errorf("%s models: %d %s", name, r.status, r.body)
		}
	}

	r := do(t, context.Background(), c, http.MethodPost, s.URL()+"/nope/v1/chat/completions", streamBody(1, ""))
	var e struct{ Error apiErrorJSON }
	if r.status != 404 || json.Unmarshal(r.body, &e) != nil || e.Error.Code != "model_not_found" || e.Error.Type != "invalid_request_error" || e.Error.Message == "" {
		t.Errorf("unknown profile: %d %s", r.status, r.body)
	}
	if r := get("/a/v2/whatever"); r.status != 404 {
		t.Errorf("unknown path: %d", r.status)
	}
	if r := get("/a/v1/chat/completions"); r.status != 405 {
		t.Errorf("GET chat: %d", r.status)
	}
	if s.BaseURL("a") != s.URL()+"/a/v1" || !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %q BaseURL %q", s.URL(), s.BaseURL("a"))
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	s := start(t, Options{}, quick("p"))
	c := newClient(t)
	for _, body := range []string{`{`, `not json`, `{"max_tokens":"ten"}`, `{"max_tokens":0}`, `{"messages":[]} trailing`,
		`{"min_tokens":-1}`, `{"min_tokens":9,"max_tokens":8}`} {
		r := chat(t, c, s, "p", body)
		var e struct{ Error apiErrorJSON }
		if r.status != 400 || json.Unmarshal(r.body, &e) != nil || e.Error.Type != "invalid_request_error" {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
	}
	if r := chat(t, c, s, "p", `{}`); r.status != 200 {
		t.Errorf("empty request: %d %s", r.status, r.body)
	}
	if n := s.Requests("p"); n != 8 {
		t.Errorf("Requests = %d, want 8", n)
	}
	if s.Requests("nope") != 0 {
		t.Error("Requests of an unknown profile")
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	for name, profiles := range map[string][]Profile{
		"none":      nil,
		"no name":   {{TokensPerSecond: 1}},
		"slash":     {{Name: "a/b", TokensPerSecond: 1}},
		"no speed":  {{Name: "a"}},
		"duplicate": {quick("a"), quick("a")},
		"rate":      {{Name: "a", TokensPerSecond: 1, RateCut: 1.5}},
		"jitter":    {{Name: "a", TokensPerSecond: 1, Jitter: -0.1}},
		"metrics":   {{Name: "metrics", TokensPerSecond: 1}},
		"slowdown":  {{Name: "a", TokensPerSecond: 1, BatchSlowdown: -1}},
		"prefill":   {{Name: "a", TokensPerSecond: 1, PrefillTokensPerSecond: math.NaN()}},
		"slots":     {{Name: "a", TokensPerSecond: 1, MaxRunning: -1}},
		"kv":        {{Name: "a", TokensPerSecond: 1, KVCacheTokens: -1}},
	} {
		if s, err := Start(Options{}, profiles...); err == nil {
			s.Close()
			t.Errorf("%s: Start succeeded", name)
		}
	}
}

// TestDemoProfiles: four visibly different endpoints, each answering its MaxTokens (with the
// default prompt's prefill) in at most 1.4 s at concurrency 1 (the longest TTFT, gaps without
// jitter, which averages out), so that a card has figures
// within 3 s of the start even behind a warm-up request and a 1 s interval; between them
// reasoning, faults, multi-token chunks, keep-alives, contention, slots, prefill, a prefix
// cache, /metrics and a profile without metrics.
func TestDemoProfiles(t *testing.T) {
	t.Parallel()
	profiles := DemoProfiles()
	if len(profiles) != 4 {
		t.Fatalf("%d demo profiles", len(profiles))
	}
	s := start(t, Options{}, profiles...) // validates names and values
	var reasoning, faults, multi, keepAlive, slots bool
	speeds, ttfts, models := map[float64]bool{}, map[time.Duration]bool{}, map[string]bool{}
	const defaultPrompt = 14 + 4 + 2 // config.DefaultPrompt's words, the template, a cache-bust tag
	for _, p := range profiles {
		p, _ := p.normalized()
		answer := p.TTFT + p.TTFTJitter +
			time.Duration(float64(defaultPrompt)/p.PrefillTokensPerSecond*float64(time.Second)) +
			time.Duration(float64(p.MaxTokens-p.TokensPerChunk)/p.TokensPerSecond*float64(time.Second))
		t.Logf("%s: %d tokens at %.0f tok/s: ≤ %v", p.Name, p.MaxTokens, p.TokensPerSecond, answer)
		if answer > 1400*time.Millisecond {
			t.Errorf("%s: a %d-token answer takes up to %v", p.Name, p.MaxTokens, answer)
		}
		if p.BatchSlowdown <= 0 || p.PrefillTokensPerSecond <= 0 || !p.PrefixCache {
			t.Errorf("%s: no contention, prefill or prefix cache", p.Name)
		}
		speeds[p.TokensPerSecond], ttfts[p.TTFT] = true, true
		reasoning = reasoning || p.ReasoningTokens > 0
		faults = faults || p.Rate429 > 0 && p.RetryAfter > 0 && p.Rate500 > 0 && p.RateMidStreamError > 0 && p.RateCut > 0
		multi = multi || p.TokensPerChunk > 1
		keepAlive = keepAlive || p.KeepAlive > 0
		slots = slots || p.MaxRunning > 0
		if p.NoMetrics {
			t.Errorf("%s: no series in /metrics: its card would open the demo on a note", p.Name)
		}
		models[p.Model] = true
		if r := do(t, context.Background(), newClient(t), http.MethodGet, s.BaseURL(p.Name)+"/models", ""); r.status != 200 {
			t.Errorf("%s: models %d", p.Name, r.status)
		}
	}
	if !reasoning || !faults || !multi || !keepAlive || !slots {
		t.Errorf("demo lacks reasoning %v, faults %v, multi-token chunks %v, keep-alives %v or slots %v",
			reasoning, faults, multi, keepAlive, slots)
	}
	if len(speeds) != 4 || len(ttfts) != 4 {
		t.Errorf("speeds %v and TTFTs %v are not all different", speeds, ttfts)
	}
	fams := scrape(t, newClient(t), s.MetricsURL())
	for m := range models {
		value(t, fams, "vllm:num_requests_running", m)
	}
	if n := len(fams["vllm:num_requests_running"].GetMetric()); n != len(models) {
		t.Errorf("/metrics has %d models, want %d", n, len(models))
	}
}

// TestDemoFaultSchedule: flaky-cloud's faults come in the same order on every run of the demo
// (its Seed), so a headless demo of N requests sees the same errors and exits with the same
// status; the warm-up and the first counted request succeed, the second is a 429.
func TestDemoFaultSchedule(t *testing.T) {
	t.Parallel()
	const n = 12
	outcomes := func() []string {
		s := start(t, Options{}, DemoProfiles()...)
		c := newClient(t)
		var out []string
		for range n {
			r := do(t, context.Background(), c, http.MethodPost, s.BaseURL("flaky-cloud")+"/chat/completions",
				`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":6}`)
			done := slices.ContainsFunc(r.frames, func(f frame) bool { return f.done })
			out = append(out, fmt.Sprintf("%d done=%v", r.status, done))
		}
		return out
	}
	var first, second []string
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); first = outcomes() }()
	go func() { defer wg.Done(); second = outcomes() }()
	wg.Wait()
	if t.Failed() {
		return
	}
	if !slices.Equal(first, second) {
		t.Errorf("two runs saw different faults:\n%q\n%q", first, second)
	}
	want := []string{"200 done=true", "200 done=true", "429 done=false"}
	if !slices.Equal(first[:3], want) {
		t.Errorf("first requests %q, want %q", first[:3], want)
	}
	faults := 0
	for _, o := range first {
		if o != "200 done=true" {
			faults++
		}
	}
	if faults < 2 {
		t.Errorf("%d faults in %d requests: %q", faults, n, first)
	}
}

func TestFaultChunkBounds(t *testing.T) {
	t.Parallel()
	for _, chunks := range []int{1, 2, 3, 50} {
		for _, frac := range []float64{0, 0.5, 0.999999} {
			at := draw{faultFrac: frac}.faultChunk(chunks)
			if chunks == 1 && at != 0 || chunks > 1 && (at < 1 || at > chunks-1) {
				t.Errorf("chunks %d frac %v: fault before chunk %d", chunks, frac, at)
			}
		}
	}
}

// BenchmarkStream measures the simulator's own cost per streamed token (server write + flush and
// a minimal client read over loopback), with no simulated delay.
func BenchmarkStream(b *testing.B) {
	s, err := Start(Options{}, Profile{Name: "p", TokensPerSecond: 1e12})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	body := streamBody(1000, "")
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Post(s.BaseURL("p")+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n < 1000*100 {
			b.Fatalf("short stream: %d bytes", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/token")
}

// Arrival is when the handler got a streamed request: before every frame of its response, and
// the instant the TTFT schedule is counted from: the first frame is ≥ 30 ms after it, and
// within onTime of that on the best of a few requests (bestOf); a TTFT counted from an instant
// later than the arrival would be late on each.
func TestArrival(t *testing.T) {
	s := start(t, Options{TrackSends: true}, Profile{Name: "p", TTFT: 30 * time.Millisecond, TokensPerSecond: 1000, TokensPerChunk: 1})
	c := newClient(t)
	bestOf(t, "first frame after the arrival", func() time.Duration {
		before := time.Now()
		r := chat(t, c, s, "p", streamBody(3, ""))
		id := r.header.Get("X-Request-Id")
		at, ok := s.Arrival(id)
		sends := s.Sends(id)
		if !ok || at.Before(before) || len(sends) == 0 || !sends[0].At.After(at) {
			t.Fatalf("arrival %v (ok %v), sent before %v, first frame %v", at, ok, before, sends)
		}
		ttft := sends[0].At.Sub(at)
		if ttft < 30*time.Millisecond {
			t.Errorf("first frame %v after the arrival, want the 30 ms TTFT", ttft)
		}
		return ttft - 30*time.Millisecond
	})
	if _, ok := s.Arrival("chatcmpl-sim-unknown"); ok {
		t.Error("an unknown id has an arrival")
	}
}

// Received is when the request's last byte reached the server's socket, by the kernel's
// clock: a body sent 40 ms after its headers is received inside the write of the body, after
// the handler started (Arrival); without TrackSends nothing is stamped.
func TestReceived(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kernel receive timestamps are Linux's")
	}
	s := start(t, Options{TrackSends: true}, Profile{Name: "p", TTFT: 5 * time.Millisecond, TokensPerSecond: 1000, TokensPerChunk: 1})
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := streamBody(2, "")
	head := "POST /p/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(40 * time.Millisecond)
	before := time.Now()
	if _, err := conn.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("X-Request-Id")
	got, ok := s.Received(id)
	if !ok {
		t.Fatal("no receive time")
	}
	if got.Before(before.Add(-time.Millisecond)) || got.After(after.Add(time.Millisecond)) {
		t.Errorf("received %v after the body's write began (it took %v)", got.Sub(before), after.Sub(before))
	}
	if at, _ := s.Arrival(id); !at.Before(got) {
		t.Errorf("handler started %v after the body arrived, want before it (it waited for the body)", at.Sub(got))
	}
	plain := start(t, Options{}, Profile{Name: "p", TokensPerSecond: 1000, TokensPerChunk: 1})
	r := chat(t, newClient(t), plain, "p", streamBody(2, ""))
	if _, ok := plain.Received(r.header.Get("X-Request-Id")); ok {
		t.Error("received time without TrackSends")
	}
}
