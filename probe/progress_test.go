package probe

import (
	"context"
	"strings"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
)

// paced is a stream of n content chunks of text each, every gap apart after a role chunk, then
// a finish and the final usage (completion: usageTokens) only at the end; perChunkUsage adds
// the cumulative usage to every content chunk instead (vLLM's continuous usage stats).
func paced(n int, gap time.Duration, text string, usageTokens int, perChunkUsage bool) script {
	evs := []event{{0, roleChunk()}}
	per := usageTokens / max(n, 1)
	for i := range n {
		c := contentChunk(text)
		if perChunkUsage {
			c = chunk(map[string]any{"content": text}, nil, map[string]any{"usage": usage(1, per*(i+1), 0)})
		}
		evs = append(evs, event{gap * time.Duration(i+1), c})
	}
	last := gap * time.Duration(n)
	return script{events: append(evs, event{last, finishChunk("length")}, event{last, usageChunk(1, usageTokens, 0)}, event{last, doneEvent})}
}

// watch runs one request through c and returns its Sample and copies of its Progress events.
func watch(t *testing.T, c *Client) (sample.Sample, []sample.Progress) {
	t.Helper()
	var ps []sample.Progress
	s := ask(t.Context(), c, "hi", Live{Progress: func(p *sample.Progress) { ps = append(ps, *p) }})
	if s.Outcome != sample.OutcomeOK {
		t.Fatalf("%s %s %s", s.Outcome, s.ErrorKind, s.ErrorMessage)
	}
	return s, ps
}

// tokenChunkOffsets are the arrival offsets of s's token-bearing chunks.
func tokenChunkOffsets(s *sample.Sample) []time.Duration {
	var at []time.Duration
	for _, c := range s.Chunks {
		if c.TokenBearing() {
			at = append(at, c.At)
		}
	}
	return at
}

// A Progress goes out with the first token, then with the first chunk at least ProgressEvery
// after the previous one, and never otherwise; each counts the tokens of every chunk that has
// arrived (here by the tokenizer: each word is one cl100k token), marked as an estimate, with
// the instants so far.
func TestProgressAtFirstTokenThenEveryInterval(t *testing.T) {
	WarmTokenizer()
	const n = 40
	g := newGT(t, fixed(paced(n, ms(15), " word", n, false)))
	c := NewClient(testEndpoint(g.Server))
	t.Cleanup(c.CloseIdleConnections)
	s, ps := watch(t, c)

	at := tokenChunkOffsets(&s)
	if len(at) != n || len(ps) < 3 {
		t.Fatalf("%d token chunks, %d Progress", len(at), len(ps))
	}
	if ps[0].At != s.FirstToken || ps[0].FirstToken != s.FirstToken || ps[0].FirstEvent != s.FirstEvent {
		t.Errorf("first Progress at %v (first token %v, first event %v vs %v): not sent with the first token",
			ps[0].At, s.FirstToken, ps[0].FirstEvent, s.FirstEvent)
	}
	next := 0 // index into at of the chunk the next Progress must come with
	for i, p := range ps {
		if i > 0 {
			for next < len(at) && at[next]-ps[i-1].At < sample.ProgressEvery {
				next++
			}
		}
		if next >= len(at) || p.At != at[next] {
			t.Fatalf("Progress %d at %v: want the first chunk ≥ %v after the previous (%v)", i, p.At, sample.ProgressEvery, at)
		}
		arrived := next + 1
		if p.Tokens != float64(arrived) || p.Chunks != arrived || !p.Estimated {
			t.Errorf("Progress %d at %v: %.1f tokens over %d chunks (estimated %v), want %d of each, estimated",
				i, p.At, p.Tokens, p.Chunks, p.Estimated, arrived)
		}
		if p.MaxTokens != 64 {
			t.Errorf("Progress %d: max tokens %d, want the endpoint's 64", i, p.MaxTokens)
		}
		if r, ok := p.DecodeRate(); arrived >= 2 && (!ok || r <= 0) {
			t.Errorf("Progress %d: no decode rate with %d tokens", i, arrived)
		}
	}
	// The last Progress's decode rate is docs/metrics.md's formula on what had arrived.
	last := ps[len(ps)-1]
	want := (last.Tokens - 1) / (last.At - s.FirstToken).Seconds()
	if r, _ := last.DecodeRate(); r != want {
		t.Errorf("decode rate so far %.2f, want %.2f", r, want)
	}
}

// With the server's cumulative usage on every chunk, the count so far is the server's, exact:
// 3 tokens per chunk whatever the text looks like to the tokenizer.
func TestProgressUsesContinuousUsage(t *testing.T) {
	const n = 12
	g := newGT(t, fixed(paced(n, ms(20), " word", 3*n, true)))
	c := NewClient(testEndpoint(g.Server))
	t.Cleanup(c.CloseIdleConnections)
	_, ps := watch(t, c)
	if len(ps) == 0 {
		t.Fatal("no Progress")
	}
	for _, p := range ps {
		if p.Estimated || p.Tokens != float64(3*p.Chunks) {
			t.Errorf("at %v: %.1f tokens over %d chunks, estimated %v; want 3 per chunk from usage", p.At, p.Tokens, p.Chunks, p.Estimated)
		}
	}
}

// The endpoint learns its tokens per chunk from finished requests: the server says 3 tokens
// per chunk where the tokenizer sees 1, so the first request's live count is the tokenizer's
// (1 per chunk, reconciled by the Sample's usage), and the next ones count 3 per chunk.
func TestProgressLearnsTokensPerChunk(t *testing.T) {
	WarmTokenizer()
	const n = 12
	g := newGT(t, fixed(paced(n, ms(20), " word", 3*n, false)))
	c := NewClient(testEndpoint(g.Server))
	t.Cleanup(c.CloseIdleConnections)

	s, ps := watch(t, c)
	if s.Tokens != 3*n || s.Source != sample.SourceUsage {
		t.Fatalf("N %d from %s", s.Tokens, s.Source)
	}
	if p := ps[len(ps)-1]; p.Tokens != float64(p.Chunks) {
		t.Errorf("first request: %.1f tokens over %d chunks, want the tokenizer's 1 per chunk", p.Tokens, p.Chunks)
	}
	_, ps = watch(t, c)
	for _, p := range ps {
		if !p.Estimated || p.Tokens != float64(3*p.Chunks) {
			t.Errorf("second request at %v: %.2f tokens over %d chunks, want the learned 3 per chunk, estimated", p.At, p.Tokens, p.Chunks)
		}
	}
}

// Until the tokenizer is loaded (or without one), a chunk counts one token.
func TestProgressWithoutTokenizerCountsChunks(t *testing.T) {
	t.Parallel()
	g := newGT(t, fixed(paced(6, ms(30), " two words", 12, false)))
	c := newClientWith(testEndpoint(g.Server), clientSetup{count: tokenCounting{ready: func() bool { return false }}})
	t.Cleanup(c.CloseIdleConnections)
	_, ps := watch(t, c)
	for _, p := range ps {
		if p.Tokens != float64(p.Chunks) || !p.Estimated {
			t.Errorf("at %v: %.1f tokens over %d chunks, want one per chunk, estimated", p.At, p.Tokens, p.Chunks)
		}
	}
}

// The Runner reports every request's Progress on the channel, tagged with the endpoint, the
// request and whether it is a warm-up; a consumer that does not read costs the request
// nothing: Progress that finds the channel full is dropped (fewer arrive than the Runner
// emitted, which each Done's chunks tell), the stream keeps its schedule, and the Done still
// comes with the exact count.
func TestRunnerProgressNeverBlocks(t *testing.T) {
	const n = 30
	g := newGT(t, fixed(paced(n, ms(20), " word", n, false)))
	ep := testEndpoint(g.Server, func(ep *config.Endpoint) { ep.Name = "p" })
	r := NewRunner([]config.Endpoint{ep}, Options{Warmup: 1, Requests: 1, EventBuffer: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { _ = r.Run(ctx) }()

	var progress []*sample.Progress
	var dones []*sample.Done
	for ev := range r.Events() {
		switch ev := ev.(type) {
		case *sample.Started:
			time.Sleep(300 * time.Millisecond) // a consumer busy while the stream runs
		case *sample.Progress:
			progress = append(progress, ev)
		case *sample.Done:
			dones = append(dones, ev)
		}
	}
	if len(dones) != 2 {
		t.Fatalf("%d Done events, want the warm-up and the request", len(dones))
	}
	emitted := 0
	for _, d := range dones {
		s := d.Sample
		if s.Tokens != n {
			t.Errorf("request %d: N %d, want %d", s.Seq, s.Tokens, n)
		}
		// The schedule held: the last chunk came about (n−1)·20 ms after the first token.
		at := tokenChunkOffsets(&s)
		if span := at[len(at)-1] - at[0]; span < ms(20*(n-1))-30*time.Millisecond || span > ms(20*(n-1))+250*time.Millisecond {
			t.Errorf("request %d: tokens spanned %v, want about %v: the stream waited for the consumer", s.Seq, span, ms(20*(n-1)))
		}
		emitted += progressEmitted(at)
	}
	if len(progress) >= emitted {
		t.Errorf("%d Progress on the channel of the at least %d the Runner emitted: none dropped behind a busy consumer with a buffer of 2",
			len(progress), emitted)
	}
	seen := map[uint64]bool{}
	for _, p := range progress {
		if p.Endpoint != 0 || p.Stream != 0 || p.Warmup != (p.Seq == 1) {
			t.Errorf("Progress of request %d: endpoint %d, stream %d, warm-up %v", p.Seq, p.Endpoint, p.Stream, p.Warmup)
		}
		if p.Tokens > n {
			t.Errorf("Progress of %.0f tokens, more than the %d that came", p.Tokens, n)
		}
		seen[p.Seq] = true
	}
	if !seen[1] || !seen[2] {
		t.Errorf("Progress of requests %v on the channel, want 1 (warm-up) and 2", seen)
	}
}

// progressEmitted is how many Progress a request whose token-bearing chunks arrived at these
// offsets was sent with (progress.go: the first token, then the first chunk at least
// ProgressEvery after the last one), at least: a Done keeps whole microseconds, so a chunk
// within 2 µs of an interval's end is not counted.
func progressEmitted(at []time.Duration) int {
	n, last := 0, time.Duration(-1)
	for _, a := range at {
		if last < 0 || a-last >= sample.ProgressEvery+2*time.Microsecond {
			n, last = n+1, a
		}
	}
	return n
}

// Interactive requests report Progress too, under their stream id: the stream view counts
// their tokens with the same estimate.
func TestStreamReportsProgress(t *testing.T) {
	g := newGT(t, fixed(paced(8, ms(30), strings.Repeat(" word", 3), 24, false)))
	r := NewRunner([]config.Endpoint{testEndpoint(g.Server)}, Options{})
	id := r.Stream(0, "hello")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	var got []*sample.Progress
	for ev := range r.Events() {
		switch ev := ev.(type) {
		case *sample.Progress:
			if ev.Stream == id {
				got = append(got, ev)
			}
		case *sample.Done:
			if ev.Stream == id {
				cancel()
			}
		}
	}
	if len(got) == 0 {
		t.Fatal("no Progress for the interactive stream")
	}
	if p := got[len(got)-1]; p.Tokens != float64(3*p.Chunks) {
		t.Errorf("%.1f tokens over %d chunks of three words, want 3 per chunk", p.Tokens, p.Chunks)
	}
}
