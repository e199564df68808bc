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

// TestScheduleAccuracy: 50 tokens at 100 tok/s after a 100 ms TTFT. Tolerances are for a loaded
// 2-core machine under -race; the lower bounds are hard (the server must never be early).
func TestScheduleAccuracy(t *testing.T) {
	p := Profile{Name: "p", TTFT: 100 * time.Millisecond, TokensPerSecond: 100, Seed: 1}
	s := start(t, Options{TrackSends: true}, p)
	r := chat(t, newClient(t), s, "p", streamBody(50, ""))

	toks := r.tokenFrames()
	if len(toks) != 50 {
		t.Fatalf("%d token frames, want 50", len(toks))
	}
	ttft := toks[0].at.Sub(r.start)
	span := toks[49].at.Sub(toks[0].at)
	total := toks[49].at.Sub(r.start)
	t.Logf("client: ttft %v, first→last %v (want 490ms), total %v (want 590ms)", ttft, span, total)
	if ttft < 100*time.Millisecond || ttft > 160*time.Millisecond {
		t.Errorf("ttft %v, want 100ms..160ms", ttft)
	}
	if span < 460*time.Millisecond || span > 560*time.Millisecond {
		t.Errorf("first→last token %v, want 490ms (460..560)", span)
	}
	if total < 590*time.Millisecond || total > 680*time.Millisecond {
		t.Errorf("total %v, want 590ms..680ms", total)
	}

	// Server side: each send within a few ms of its absolute target, no accumulated drift.
	sends := s.Sends(toks[0].chunk.ID)
	var tokenSends []time.Time
	for _, f := range sends {
		if f.Kind == FrameContent {
			tokenSends = append(tokenSends, f.At)
		}
	}
	if len(tokenSends) != 50 {
		t.Fatalf("%d content sends recorded, want 50", len(tokenSends))
	}
	// The schedule is anchored at arrival+TTFT, which only the server knows: take the earliest
	// anchor the sends imply, and measure how late each send is against it.
	anchor := tokenSends[0]
	for k, at := range tokenSends {
		if a := at.Add(-time.Duration(k) * 10 * time.Millisecond); a.Before(anchor) {
			anchor = a
		}
	}
	var worst time.Duration
	for k, at := range tokenSends {
		worst = max(worst, at.Sub(anchor.Add(time.Duration(k)*10*time.Millisecond)))
	}
	t.Logf("server: worst lateness vs the absolute schedule %v; last send %v after first",
		worst, tokenSends[49].Sub(tokenSends[0]))
	if worst > 60*time.Millisecond {
		t.Errorf("a send was %v late", worst)
	}
	if last := tokenSends[49].Sub(tokenSends[0]); last > 490*time.Millisecond+40*time.Millisecond {
		t.Errorf("server drifted: last send %v after first, want 490ms", last)
	}
}

func TestHeadersDelay(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.HeadersDelay, p.TTFT = 80*time.Millisecond, 120*time.Millisecond
	s := start(t, Options{}, p)
	r := chat(t, newClient(t), s, "p", streamBody(3, ""))
	if d := r.headers.Sub(r.start); d < 80*time.Millisecond || d > 200*time.Millisecond {
		t.Errorf("headers after %v, want ≈80ms", d)
	}
	if d := r.tokenFrames()[0].at.Sub(r.start); d < 120*time.Millisecond {
		t.Errorf("first token after %v, want ≥120ms", d)
	}
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
// chunks would be spread over the 200 ms step, 65-70 ms from each other, and never all fall
// within 40 ms of one boundary) send every frame of content at most 40 ms after a multiple of
// 200 ms since the backend started. The step is long so that the 40 ms can be a loaded
// machine's lateness: with a 40 ms step and an 8 ms bound, frames left 10-28 ms late under
// -race on a busy 2-core machine.
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
	for i, id := range ids {
		frames := 0
		for _, f := range s.Sends(id) {
			if f.Kind != FrameContent {
				continue
			}
			frames++
			if phase := f.At.Sub(epoch) % p.Step; phase > 40*time.Millisecond {
				t.Errorf("stream %d: a content frame left %v after a step boundary", i, phase)
			}
		}
		if frames != 4 {
			t.Errorf("stream %d: %d content frames, want 4", i, frames)
		}
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

func TestMultiTokenChunkTiming(t *testing.T) {
	t.Parallel()
	p := Profile{Name: "p", TTFT: 10 * time.Millisecond, TokensPerSecond: 100, TokensPerChunk: 3, Seed: 1}
	s := start(t, Options{TrackSends: true}, p)
	r := chat(t, newClient(t), s, "p", streamBody(10, ""))
	sends := s.Sends(r.data()[0].chunk.ID)
	var n []int
	var at []time.Time
	for _, f := range sends {
		if f.Kind == FrameContent {
			n, at = append(n, f.Tokens), append(at, f.At)
		}
	}
	if len(n) != 4 || n[0] != 3 || n[3] != 1 {
		t.Fatalf("chunk sizes %v, want [3 3 3 1]", n)
	}
	// 3 tokens at 100 tok/s = 30 ms between chunks; the last (1 token) 10 ms later. Never
	// before the schedule: the last chunk ≥ TTFT + 70 ms after the request reached the
	// server (a lower bound from the first chunk broke when that one left late on a loaded
	// machine); at most 40 ms late from first chunk to last.
	id := r.data()[0].chunk.ID
	if rcv, ok := s.Received(id); !ok || at[3].Sub(rcv) < p.TTFT+70*time.Millisecond {
		t.Errorf("last chunk %v after the request arrived (%v), want ≥ %v", at[3].Sub(rcv), ok, p.TTFT+70*time.Millisecond)
	}
	if span := at[3].Sub(at[0]); span > 110*time.Millisecond {
		t.Errorf("first→last chunk %v, want 70ms", span)
	}
}

func TestKeepAlive(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.KeepAlive, p.TTFT = 20*time.Millisecond, 150*time.Millisecond
	s := start(t, Options{}, p)
	r := chat(t, newClient(t), s, "p", streamBody(3, ""))
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
	// 150 ms / 20 ms = 7 beats; allow a loaded machine to lose a few.
	if before < 4 || before > 8 {
		t.Errorf("%d keep-alives before the first token, want ≈7", before)
	}
	if !r.frames[len(r.frames)-1].done {
		t.Error("no [DONE]")
	}
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
	// 20 tokens at 2000 tok/s end ~15 ms after the request: the rest is silence.
	if quiet := time.Since(toks[len(toks)-1].at); quiet < 300*time.Millisecond {
		t.Errorf("only %v of silence before the deadline", quiet)
	}
	// The handler noticed the client leaving and returned, so its connection closed.
	deadline := time.Now().Add(2 * time.Second)
	for openConns(s) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := openConns(s); n > 0 {
		t.Errorf("%d connections still open after the client left a stalled stream", n)
	}
	id := toks[0].chunk.ID
	sent := len(s.Sends(id))
	time.Sleep(50 * time.Millisecond)
	if len(s.Sends(id)) != sent {
		t.Error("server still sending after the client left")
	}

	// With keep-alives the proxy keeps beating through the stall.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	r = do(t, ctx2, c, http.MethodPost, s.BaseURL("k")+"/chat/completions", streamBody(20, ""))
	last := r.tokenFrames()[len(r.tokenFrames())-1].at
	beats := r.count(func(f frame) bool { return f.comment && f.at.After(last) })
	if beats < 4 {
		t.Errorf("%d keep-alives during a 280ms stall, want ≈9", beats)
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
	r := chat(t, c, s, "p", streamBody(6, `,"stream_options":{"include_usage":true}`))
	data := r.data()
	id := data[0].chunk.ID
	sends := s.Sends(id)
	times := s.SendTimes(id)
	if len(sends) != len(data) || len(times) != len(data) {
		t.Fatalf("%d sends, %d times for %d data frames", len(sends), len(times), len(data))
	}
	kinds := ""
	for i, f := range sends {
		kinds += string(f.Kind) + " "
		if !times[i].Equal(f.At) {
			t.Errorf("SendTimes[%d] != Sends[%d].At", i, i)
		}
		if i > 0 && f.At.Before(sends[i-1].At) {
			t.Errorf("send %d before send %d", i, i-1)
		}
		// One process, one monotonic clock. The send stamp is taken after Flush returns, so the
		// reader may stamp a frame slightly earlier (seen: 0.5 ms under -race); never by much.
		if d := data[i].at.Sub(f.At); d < -20*time.Millisecond || d > 50*time.Millisecond {
			t.Errorf("frame %d received %v after it was sent", i, d)
		}
	}
	if want := "role reasoning reasoning content content content content finish usage "; kinds != want {
		t.Errorf("kinds %q, want %q", kinds, want)
	}
	if s.SendTimes("chatcmpl-sim-999") != nil || s.SendTimes("") != nil {
		t.Error("send times for an unknown id")
	}

	// Tracking off: nothing recorded.
	off := start(t, Options{}, p)
	r = chat(t, c, off, "p", streamBody(3, ""))
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

func TestNonStreaming(t *testing.T) {
	t.Parallel()
	p := Profile{Name: "p", Model: "m1", TTFT: 50 * time.Millisecond, TokensPerSecond: 200, ReasoningTokens: 3, Seed: 1}
	s := start(t, Options{}, p)
	r := chat(t, newClient(t), s, "p", `{"model":"m1","messages":[{"role":"user","content":[{"type":"text","text":"a b c"}]}],"max_tokens":10,"stream":false}`)
	// 50 ms TTFT + 9 gaps of 5 ms.
	if d := r.headers.Sub(r.start); d < 95*time.Millisecond || d > 250*time.Millisecond {
		t.Errorf("answered after %v, want ≈95ms", d)
	}
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
// the instant the TTFT schedule is counted from.
func TestArrival(t *testing.T) {
	s := start(t, Options{TrackSends: true}, Profile{Name: "p", TTFT: 30 * time.Millisecond, TokensPerSecond: 1000, TokensPerChunk: 1})
	before := time.Now()
	r := chat(t, newClient(t), s, "p", streamBody(3, ""))
	id := r.header.Get("X-Request-Id")
	at, ok := s.Arrival(id)
	sends := s.Sends(id)
	if !ok || at.Before(before) || len(sends) == 0 || !sends[0].At.After(at) {
		t.Fatalf("arrival %v (ok %v), sent before %v, first frame %v", at, ok, before, sends)
	}
	if ttft := sends[0].At.Sub(at); ttft < 30*time.Millisecond || ttft > 80*time.Millisecond {
		t.Errorf("first frame %v after the arrival, want the 30 ms TTFT", ttft)
	}
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
