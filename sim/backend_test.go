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
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ---- helpers --------------------------------------------------------------------------------

// wordList returns n distinct words starting with prefix: "p0 p1 ...".
func wordList(prefix string, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return strings.Join(ws, " ")
}

// promptBody is a chat request with one user message.
func promptBody(text string, maxTokens int, stream bool) string {
	req := map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": text}},
		"max_tokens": maxTokens}
	if stream {
		req["stream"], req["stream_options"] = true, map[string]bool{"include_usage": true}
	}
	b, _ := json.Marshal(req)
	return string(b)
}

// finalUsage returns the usage of a streamed or plain response.
func finalUsage(t *testing.T, r result) usageJSON {
	t.Helper()
	if r.body != nil {
		var resp struct {
			Usage *usageJSON `json:"usage"`
		}
		if err := json.Unmarshal(r.body, &resp); err != nil || resp.Usage == nil {
			t.Fatalf("status %d body %s: %v", r.status, r.body, err)
		}
		return *resp.Usage
	}
	for _, f := range slices.Backward(r.data()) {
		if f.chunk.Usage != nil {
			return *f.chunk.Usage
		}
	}
	t.Fatalf("no usage in %d frames", len(r.frames))
	return usageJSON{}
}

func ttft(r result) time.Duration {
	toks := r.tokenFrames()
	if len(toks) == 0 {
		return -1
	}
	return toks[0].at.Sub(r.start)
}

// concurrently runs n requests at once and returns their results in order.
func concurrently(t *testing.T, n int, req func(i int) (result, error)) []result {
	t.Helper()
	results := make([]result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i], errs[i] = req(i) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return results
}

// scrape reads an exposition with the Prometheus text parser.
func scrape(t *testing.T, c *http.Client, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return families
}

// value returns the value of family name's series for model_name, engine "0".
func value(t *testing.T, families map[string]*dto.MetricFamily, name, modelName string) float64 {
	t.Helper()
	mf, ok := families[name]
	if !ok {
		t.Fatalf("no family %s", name)
	}
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["model_name"] == modelName && labels["engine"] == "0" {
			switch mf.GetType() {
			case dto.MetricType_GAUGE:
				return m.GetGauge().GetValue()
			case dto.MetricType_COUNTER:
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("%s has no series for model_name %q engine 0", name, modelName)
	return 0
}

// ---- contention -------------------------------------------------------------------------------

// pace is the schedule's gap between consecutive sends, estimated robustly (Theil–Sen): the
// median, over every pair of sends at least half the stream apart, of their distance in time
// over their distance in sends. On an absolute schedule a send the machine delayed moves the
// pairs it belongs to and no other, so the median is the schedule's gap however many sends a
// busy machine delays (up to a quarter of them); the first→last span measured instead shrank by
// the first token's own lateness, and the median of single gaps carries the timer's sub-ms
// rhythm (gaps of 10.4, 10.4, 9.2 ms on an idle machine).
func pace(at []time.Time) time.Duration {
	var per []time.Duration
	for i := range at {
		for j := i + max(len(at)/2, 1); j < len(at); j++ {
			per = append(per, at[j].Sub(at[i])/time.Duration(j-i))
		}
	}
	return median(per)
}

// TestContention: n streams started together decode at TokensPerSecond/(1+BatchSlowdown·(n−1))
// each. The TTFT (150 ms) leaves every stream time to arrive before the first token, so every
// gap is computed with n running; equal lengths keep them running together to the end. Each
// stream's rate is one token over its pace between sends, within 8% of the truth: a stream
// that arrived late or ended early changes a few gaps of the others, not their pace. A stall
// of the machine over a third of a stream (150 ms at 100 tok/s, seen at load 7) moves the pace
// too, so a batch whose rates miss is run again (retry); a wrong rate misses on every batch.
func TestContention(t *testing.T) {
	const tps, slowdown, tokens = 100.0, 0.25, 40
	p := Profile{Name: "p", TTFT: 150 * time.Millisecond, TokensPerSecond: tps, BatchSlowdown: slowdown, Seed: 1}
	s := start(t, Options{TrackSends: true}, p)
	c := newClient(t)
	agg := map[int]float64{}
	for _, n := range []int{1, 4, 8} {
		want := tps / (1 + slowdown*float64(n-1))
		retry(t, fmt.Sprintf("n=%d", n), func() error {
			results := concurrently(t, n, func(int) (result, error) {
				return fetch(context.Background(), c, http.MethodPost, s.BaseURL("p")+"/chat/completions", streamBody(tokens, ""))
			})
			lo, hi := math.Inf(1), 0.0
			agg[n] = 0
			for _, r := range results {
				sends := contentSends(s, r.header.Get("X-Request-Id"))
				if len(r.tokenFrames()) != tokens || len(sends) != tokens {
					t.Fatalf("n=%d: %d token frames read, %d sent, want %d", n, len(r.tokenFrames()), len(sends), tokens)
				}
				rate := 1 / pace(sends).Seconds()
				lo, hi = min(lo, rate), max(hi, rate)
				agg[n] += rate
			}
			if st, _ := s.State("p"); st.Running != 0 || st.Waiting != 0 || st.KVCacheUsage != 0 {
				t.Errorf("after the streams: %+v", st)
			}
			t.Logf("n=%d: per-stream %.1f..%.1f tok/s (want %.1f), aggregate %.0f tok/s", n, lo, hi, want, agg[n])
			if lo < 0.92*want || hi > 1.08*want {
				return fmt.Errorf("per-stream rates %.1f..%.1f tok/s, want %.1f ± 8%%", lo, hi, want)
			}
			return nil
		})
	}
	if !(agg[4] > 1.5*agg[1] && agg[8] > agg[4] && agg[8] < 4*agg[1]) {
		t.Errorf("aggregate tok/s 1→4→8: %.0f → %.0f → %.0f, want sub-linear growth", agg[1], agg[4], agg[8])
	}
}

// TestZeroContention: BatchSlowdown 0 keeps every stream at TokensPerSecond however many run:
// each of 6 streams sends token k no earlier than Arrival + TTFT + k·10 ms (its schedule), and
// its pace between sends is 10 ms within 8% (on one of a few batches: retry, as in
// TestContention).
func TestZeroContention(t *testing.T) {
	p := Profile{Name: "p", TTFT: 100 * time.Millisecond, TokensPerSecond: 100, Seed: 1}
	s := start(t, Options{TrackSends: true}, p)
	c := newClient(t)
	retry(t, "6 streams", func() error {
		results := concurrently(t, 6, func(int) (result, error) {
			return fetch(context.Background(), c, http.MethodPost, s.BaseURL("p")+"/chat/completions", streamBody(30, ""))
		})
		var paces []time.Duration
		for i, r := range results {
			id := r.header.Get("X-Request-Id")
			arrival, ok := s.Arrival(id)
			sends := contentSends(s, id)
			if !ok || len(sends) != 30 {
				t.Fatalf("stream %d: arrival recorded %v, %d content sends, want 30", i, ok, len(sends))
			}
			for k, at := range sends {
				if due := arrival.Add(p.TTFT + time.Duration(k)*10*time.Millisecond); at.Before(due) {
					t.Errorf("stream %d: token %d sent %v before its schedule", i, k, due.Sub(at))
				}
			}
			paces = append(paces, pace(sends))
		}
		if lo, hi := slices.Min(paces), slices.Max(paces); lo < 9200*time.Microsecond || hi > 10800*time.Microsecond {
			return fmt.Errorf("paces between sends %v..%v, want 10ms ± 8%%", lo, hi)
		}
		return nil
	})
}

// progress reads a stream and publishes how many token frames it has seen.
type progress struct {
	seen atomic.Int64
	ttft atomic.Int64 // ns, 0 until the first token
	id   string       // the response's X-Request-Id; read once read has returned
}

func (pg *progress) read(ctx context.Context, c *http.Client, url, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	pg.id = resp.Header.Get("X-Request-Id")
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if strings.Contains(line, `"content":"`) {
			if pg.seen.Add(1) == 1 {
				pg.ttft.Store(int64(time.Since(t0)))
			}
		}
	}
}

// TestMaxRunningQueueAndMetrics: with 2 slots, 4 requests at once: 2 run, 2 wait (their
// headers come at once, their TTFT includes the wait), and /metrics says so, with a KV usage
// of the running requests' prompt + generated tokens.
// A request's prompt is in the KV cache from the instant it is admitted, for one arriving at a
// free slot and for one taking a slot another left: a scrape between admission and the
// request's own goroutine starting its job once saw 2 running with one prompt cached.
func TestAdmissionHoldsThePrompt(t *testing.T) {
	e := newEngine(Profile{MaxRunning: 1, KVCacheTokens: 100})
	now := time.Now()
	first := e.enqueue(now, 6)
	second := e.enqueue(now, 10)
	if st := e.state(); st.Running != 1 || st.Waiting != 1 || st.KVCacheUsage != 0.06 {
		t.Errorf("one admitted, one waiting: %+v, want 1 running, 1 waiting, KV 0.06", st)
	}
	e.leave(first)
	if st := e.state(); st.Running != 1 || st.Waiting != 0 || st.KVCacheUsage != 0.10 {
		t.Errorf("the waiting one admitted: %+v, want 1 running, KV 0.10", st)
	}
	e.leave(second)
	if st := e.state(); st.Running != 0 || st.KVCacheUsage != 0 {
		t.Errorf("both gone: %+v", st)
	}
}

func TestMaxRunningQueueAndMetrics(t *testing.T) {
	const ttftBase, tokens, prompt, capacity = 400 * time.Millisecond, 20, 6, 1000
	// Timings: the server's clock of each response is kept (Server.Clock) for the TTFTs below.
	p := Profile{Name: "p", Model: "m", TTFT: ttftBase, TokensPerSecond: 100, MaxRunning: 2, KVCacheTokens: capacity, Seed: 1,
		Timings: true}
	s := start(t, Options{TrackSends: true}, p)
	c := newClient(t)
	metricsClient := newClient(t)
	var progs [4]progress
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range progs {
		wg.Go(func() {
			errs <- progs[i].read(context.Background(), c, s.BaseURL("p")+"/chat/completions", streamBody(tokens, ""))
		})
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(3 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitFor("2 running, 2 waiting", func() bool { st, _ := s.State("p"); return st.Running == 2 && st.Waiting == 2 })

	// Before any token (TTFT 400 ms): the KV cache holds the two running prompts exactly.
	fams := scrape(t, metricsClient, s.MetricsURL())
	running := value(t, fams, "vllm:num_requests_running", "m")
	waiting := value(t, fams, "vllm:num_requests_waiting", "m")
	kv := value(t, fams, "vllm:kv_cache_usage_perc", "m")
	gen := value(t, fams, "vllm:generation_tokens_total", "m")
	if running != 2 || waiting != 2 || gen != 0 || kv != 2*prompt/float64(capacity) {
		t.Errorf("during TTFT: running %v waiting %v kv %v generated %v, want 2, 2, %v, 0", running, waiting, kv, gen, 2*prompt/float64(capacity))
	}

	// Mid-stream: the generated tokens lie between what the clients had read before the scrape
	// and what they have read after it, plus one token in flight per stream.
	seen := func() (n int64) {
		for i := range progs {
			n += progs[i].seen.Load()
		}
		return n
	}
	waitFor("5 tokens on each running stream", func() bool { return seen() >= 10 })
	before := seen()
	fams = scrape(t, metricsClient, s.MetricsURL())
	after := seen()
	running = value(t, fams, "vllm:num_requests_running", "m")
	waiting = value(t, fams, "vllm:num_requests_waiting", "m")
	kv = value(t, fams, "vllm:kv_cache_usage_perc", "m")
	gen = value(t, fams, "vllm:generation_tokens_total", "m")
	if running != 2 || waiting != 2 {
		t.Errorf("mid-stream: running %v waiting %v, want 2 and 2", running, waiting)
	}
	if gen < float64(before) || gen > float64(after+2) {
		t.Errorf("mid-stream: generation_tokens_total %v, clients read %d before the scrape and %d after", gen, before, after)
	}
	if want := (2*prompt + gen) / capacity; math.Abs(kv-want) > 1e-9 {
		t.Errorf("mid-stream: kv_cache_usage_perc %v, want (2·%d + %v)/%d = %v", kv, prompt, gen, capacity, want)
	}
	if pt := value(t, fams, "vllm:prompt_tokens_total", "m"); pt != 2*prompt {
		t.Errorf("mid-stream: prompt_tokens_total %v, want %d (two prefills done)", pt, 2*prompt)
	}
	t.Logf("mid-stream: running %v waiting %v kv %.4f generated %v (clients %d..%d)", running, waiting, kv, gen, before, after)

	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// One request: 400 ms + 19 gaps of 10 ms = 590 ms. The waiting two are admitted when the
	// first two end, so their TTFT is ≈ 590 + 400 ms from the client; the server's clock says
	// what the machine added. By it: the running two were scheduled at their arrival, the
	// waiting two after it, not before the running ones' last tokens (in order: each leave
	// admits the next in the queue) and within onTime of them on one at least; every first
	// token is ≥ 400 ms after its admission, and within onTime of it on one of the four at
	// least (a stall of the machine delays some, a TTFT counted from elsewhere all of them).
	var ttfts []time.Duration
	var clocks []Clock
	for i := range progs {
		ttfts = append(ttfts, time.Duration(progs[i].ttft.Load()))
		ck, ok := s.Clock(progs[i].id)
		if !ok {
			t.Fatalf("no clock for %q", progs[i].id)
		}
		clocks = append(clocks, ck)
	}
	slices.Sort(ttfts)
	t.Logf("client TTFTs %v", ttfts)
	var runningLast, waitingScheduled []time.Time
	ttftLate := time.Hour
	for _, ck := range clocks {
		if ck.Scheduled.Equal(ck.Arrival) {
			runningLast = append(runningLast, ck.Last)
		} else {
			waitingScheduled = append(waitingScheduled, ck.Scheduled)
		}
		if d := ck.First.Sub(ck.Scheduled); d < ttftBase {
			t.Errorf("first token %v after admission, want ≥ %v", d, ttftBase)
		}
		ttftLate = min(ttftLate, ck.First.Sub(ck.Scheduled)-ttftBase)
	}
	if len(runningLast) != 2 || len(waitingScheduled) != 2 {
		t.Fatalf("%d scheduled at their arrival, %d later, want 2 and 2", len(runningLast), len(waitingScheduled))
	}
	slices.SortFunc(runningLast, time.Time.Compare)
	slices.SortFunc(waitingScheduled, time.Time.Compare)
	waitLate := time.Hour
	for j := range 2 {
		d := waitingScheduled[j].Sub(runningLast[j])
		if d < 0 {
			t.Errorf("waiting request %d admitted %v before a running one's last token", j, -d)
		}
		waitLate = min(waitLate, d)
	}
	t.Logf("server: best admission %v after a slot's last token, best first token %v after admission + TTFT", waitLate, ttftLate)
	if waitLate > onTime || ttftLate > onTime {
		t.Errorf("admission %v after a slot's last token, first token %v after admission + TTFT at best, want ≤ %v",
			waitLate, ttftLate, onTime)
	}

	fams = scrape(t, metricsClient, s.MetricsURL())
	for name, want := range map[string]float64{
		"vllm:num_requests_running": 0, "vllm:num_requests_waiting": 0, "vllm:kv_cache_usage_perc": 0,
		"vllm:generation_tokens_total": 4 * tokens, "vllm:prompt_tokens_total": 4 * prompt,
		"vllm:prefix_cache_queries_total": 0, "vllm:prefix_cache_hits_total": 0,
	} {
		if got := value(t, fams, name, "m"); got != want {
			t.Errorf("after: %s = %v, want %v", name, got, want)
		}
	}
}

// TestQueueLeaveOnCancel: a waiting request whose client gives up leaves the queue.
func TestQueueLeaveOnCancel(t *testing.T) {
	t.Parallel()
	p := Profile{Name: "p", TTFT: 2 * time.Second, TokensPerSecond: 100, MaxRunning: 1, Seed: 1}
	s := start(t, Options{}, p)
	c := newClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { _, _ = fetch(ctx, c, http.MethodPost, s.BaseURL("p")+"/chat/completions", streamBody(5, "")) })
	}
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if st, _ := s.State("p"); st.Running == 1 && st.Waiting == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never 1 running and 2 waiting")
		}
	}
	cancel()
	wg.Wait()
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if st, _ := s.State("p"); st.Running == 0 && st.Waiting == 0 {
			break
		}
		if time.Now().After(deadline) {
			st, _ := s.State("p")
			t.Fatalf("after cancelling: %+v", st)
		}
	}
}

// ---- prefill and prefix cache -----------------------------------------------------------------

// TestPrefillTTFT: TTFT = TTFT + prompt tokens / PrefillTokensPerSecond without a cache: the
// first token is sent no earlier than that after the request's arrival, and within onTime of
// it on the best of a few requests (bestOf): a prefill off by 10% is 20–50 ms late on every
// try.
func TestPrefillTTFT(t *testing.T) {
	p := Profile{Name: "p", TTFT: 30 * time.Millisecond, TokensPerSecond: 1000, PrefillTokensPerSecond: 5000, Seed: 1}
	s := start(t, Options{TrackSends: true}, p)
	c := newClient(t)
	for _, tc := range []struct {
		words int
		want  time.Duration // 30 ms + (words + 4) / 5000 tok/s
	}{
		{1, 31 * time.Millisecond},
		{996, 230 * time.Millisecond},
		{2496, 530 * time.Millisecond},
	} {
		bestOf(t, fmt.Sprintf("%d words: first token", tc.words), func() time.Duration {
			r := chat(t, c, s, "p", promptBody(wordList("w", tc.words), 3, true))
			u := finalUsage(t, r)
			if u.PromptTokens != tc.words+4 || u.PromptTokensDetails != nil {
				t.Errorf("%d words: usage %+v, want %d prompt tokens and no prompt_tokens_details", tc.words, u, tc.words+4)
			}
			id := r.header.Get("X-Request-Id")
			arrival, ok := s.Arrival(id)
			sends := contentSends(s, id)
			if !ok || len(sends) == 0 {
				t.Fatalf("%d words: arrival recorded %v, %d content sends", tc.words, ok, len(sends))
			}
			server, client := sends[0].Sub(arrival), ttft(r)
			t.Logf("%d prompt tokens: TTFT %v at the server, %v at the client (want %v)", u.PromptTokens, server, client, tc.want)
			if server < tc.want || client < tc.want {
				t.Errorf("%d prompt tokens: TTFT %v at the server, %v at the client, want ≥ %v", u.PromptTokens, server, client, tc.want)
			}
			return server - tc.want
		})
	}
}

// TestPrefixCache: a repeated prompt is served from the cache in whole 16-token blocks (never
// its last token), a busted one (unique first word) is not, a longer prompt sharing the prefix
// is in part; TTFT shrinks with the cached tokens, and the counters add up.
func TestPrefixCache(t *testing.T) {
	p := Profile{Name: "p", Model: "m", TTFT: 20 * time.Millisecond, TokensPerSecond: 1000,
		PrefillTokensPerSecond: 2000, PrefixCache: true, Seed: 1}
	s := start(t, Options{TrackSends: true}, p)
	c := newClient(t)
	base := wordList("w", 100) // 104 prompt tokens: 6 full blocks
	cases := []struct {
		name         string
		text         string
		stream       bool
		prompt, want int           // prompt tokens, cached tokens
		ttft         time.Duration // 20 ms + uncached tokens / 2000 tok/s (streams)
	}{
		{"first", base, true, 104, 0, 72 * time.Millisecond},
		{"repeat", base, true, 104, 96, 24 * time.Millisecond},
		{"busted", "tag-1 " + base, true, 105, 0, 72500 * time.Microsecond},
		{"longer", base + " " + wordList("x", 50), true, 154, 96, 49 * time.Millisecond},
		{"repeat, not streamed", base, false, 104, 96, 0},
		{"busted again", "tag-2 " + base, false, 105, 0, 0},
	}
	var queries, hits int
	// ask sends a case's request, checks its usage and counts it; for a stream it returns the
	// first token's send after the request's arrival, which the prefill of the uncached tokens
	// is part of.
	ask := func(name, text string, stream bool, prompt, want int) time.Duration {
		r := chat(t, c, s, "p", promptBody(text, 2, stream))
		u := finalUsage(t, r)
		if u.PromptTokens != prompt || u.PromptTokensDetails == nil || u.PromptTokensDetails.CachedTokens != want {
			t.Errorf("%s: usage %+v %+v, want %d prompt tokens, %d cached", name, u, u.PromptTokensDetails, prompt, want)
		}
		queries, hits = queries+prompt, hits+want
		if !stream {
			return 0
		}
		id := r.header.Get("X-Request-Id")
		arrival, ok := s.Arrival(id)
		sends := contentSends(s, id)
		if !ok || len(sends) == 0 {
			t.Fatalf("%s: arrival recorded %v, %d content sends", name, ok, len(sends))
		}
		return sends[0].Sub(arrival)
	}
	// Never before the truth; the repeat, whose 96 cached tokens save 48 ms of prefill, within
	// onTime of its 24 ms on the best of a few (bestOf): so surely under the 72 ms it would take
	// uncached. The other cases are bounded from below only (the counts say what they were
	// served); asking the repeat again repeats its hit, counted like the others.
	for _, tc := range cases {
		if tc.name != "repeat" {
			if got := ask(tc.name, tc.text, tc.stream, tc.prompt, tc.want); got < tc.ttft {
				t.Errorf("%s: TTFT %v at the server, want ≥ %v", tc.name, got, tc.ttft)
			}
			continue
		}
		bestOf(t, "repeat", func() time.Duration {
			got := ask(tc.name, tc.text, tc.stream, tc.prompt, tc.want)
			t.Logf("repeat: TTFT %v at the server (want %v)", got, tc.ttft)
			if got < tc.ttft {
				t.Errorf("repeat: TTFT %v at the server, want ≥ %v", got, tc.ttft)
			}
			return got - tc.ttft
		})
	}
	fams := scrape(t, newClient(t), s.MetricsURL())
	if q := value(t, fams, "vllm:prefix_cache_queries_total", "m"); q != float64(queries) {
		t.Errorf("prefix_cache_queries_total %v, want %d", q, queries)
	}
	if h := value(t, fams, "vllm:prefix_cache_hits_total", "m"); h != float64(hits) {
		t.Errorf("prefix_cache_hits_total %v, want %d", h, hits)
	}
	if pt := value(t, fams, "vllm:prompt_tokens_total", "m"); pt != float64(queries) {
		t.Errorf("prompt_tokens_total %v, want %d", pt, queries)
	}
}

func TestReadPrompt(t *testing.T) {
	t.Parallel()
	msgs := func(pairs ...string) []chatMessage {
		var ms []chatMessage
		for i := 0; i < len(pairs); i += 2 {
			ms = append(ms, chatMessage{Role: pairs[i], Content: json.RawMessage(jsonString(pairs[i+1]))})
		}
		return ms
	}
	a := readPrompt(msgs("system", wordList("s", 28), "user", wordList("u", 60)), 16, tokensOf(""))
	if a.tokens != 32+64 || len(a.blocks) != 6 {
		t.Fatalf("%d tokens, %d blocks, want 96 and 6", a.tokens, len(a.blocks))
	}
	if b := readPrompt(msgs("system", wordList("s", 28), "user", wordList("u", 60)), 16, tokensOf("")); !slices.Equal(a.blocks, b.blocks) {
		t.Error("the same prompt hashes differently")
	}
	// Another user message: the system message's two blocks stay, the rest differ.
	b := readPrompt(msgs("system", wordList("s", 28), "user", wordList("v", 60)), 16, tokensOf(""))
	if !slices.Equal(a.blocks[:2], b.blocks[:2]) || a.blocks[2] == b.blocks[2] || a.blocks[5] == b.blocks[5] {
		t.Error("blocks behind a shared system prompt")
	}
	// The role is part of the template tokens.
	if c := readPrompt(msgs("user", wordList("s", 28), "user", wordList("u", 60)), 16, tokensOf("")); c.blocks[0] == a.blocks[0] {
		t.Error("the role does not change the template tokens")
	}
	// A different first word changes every block, even those with equal tokens.
	if d := readPrompt(msgs("system", "x"+wordList("s", 28)[2:], "user", wordList("u", 60)), 16, tokensOf("")); slices.ContainsFunc(d.blocks, func(h uint64) bool { return slices.Contains(a.blocks, h) }) {
		t.Error("a busted prompt shares a block")
	}
	if n := readPrompt(msgs("user", wordList("s", 28)), 0, tokensOf("")); n.tokens != 32 || n.blocks != nil {
		t.Errorf("without blocks: %+v", n)
	}
	if n := readPrompt(nil, 16, tokensOf("")); n.tokens != 1 {
		t.Errorf("no messages: %d tokens, want 1", n.tokens)
	}
	parts := []chatMessage{{Role: "user", Content: json.RawMessage(`[{"type":"text","text":"a b"},{"type":"image_url"},{"type":"text","text":"c"}]`)}}
	if n := readPrompt(parts, 16, tokensOf("")); n.tokens != 7 {
		t.Errorf("text parts: %d tokens, want 7", n.tokens)
	}
}

func TestPrefixCacheLRU(t *testing.T) {
	t.Parallel()
	blocks := func(first uint64, n int) []uint64 {
		var bs []uint64
		for i := range n {
			bs = append(bs, first+uint64(i))
		}
		return bs
	}
	c := newPrefixCache(4)
	a, b := blocks(100, 6), blocks(200, 3)
	c.insert(a)
	if n := c.match(a); n != 4 {
		t.Errorf("a 6-block prefix in a 4-block cache: %d blocks match, want its first 4 (tails go first)", n)
	}
	c.insert(b) // evicts a's last 3
	if n := c.match(b); n != 3 {
		t.Errorf("b: %d blocks, want 3", n)
	}
	if n := c.match(a); n != 1 {
		t.Errorf("a after b: %d blocks, want 1", n)
	}
	c.insert(blocks(300, 4))
	if n, m := c.match(a), c.match(b); n != 0 || m != 0 {
		t.Errorf("after a third prefix: a %d, b %d blocks, want 0", n, m)
	}
	if n := newPrefixCache(0).match(a); n != 0 {
		t.Errorf("empty cache: %d", n)
	}

	// The backend never serves a prompt's last token from the cache.
	e := newEngine(Profile{PrefixCache: true, PrefixBlockTokens: 16, KVCacheTokens: 1 << 16})
	pr := prompt{tokens: 32, blockTokens: 16, blocks: blocks(1, 2)}
	e.prefilled(pr)
	if got := e.lookup(pr); got != 16 {
		t.Errorf("a fully cached 32-token prompt: %d cached, want 16", got)
	}
	pr.tokens = 33
	if got := e.lookup(pr); got != 32 {
		t.Errorf("33 tokens, 2 cached blocks: %d cached, want 32", got)
	}
}

func TestPrefixCacheEvictsThroughTheServer(t *testing.T) {
	t.Parallel()
	p := quick("p")
	p.PrefixCache, p.KVCacheTokens = true, 64 // 4 blocks
	s := start(t, Options{}, p)
	c := newClient(t)
	cached := func(text string) int {
		t.Helper()
		u := finalUsage(t, chat(t, c, s, "p", promptBody(text, 1, false)))
		return u.PromptTokensDetails.CachedTokens
	}
	a, b := wordList("a", 100), wordList("b", 100)
	cached(a)
	if n := cached(a); n != 64 {
		t.Errorf("a again: %d cached, want 64 (4 blocks)", n)
	}
	cached(b)
	if n := cached(a); n != 0 {
		t.Errorf("a after b: %d cached, want 0", n)
	}
}

// ---- connections ------------------------------------------------------------------------------

// rawStream sends one streaming request on conn and reads the whole response.
func rawStream(t *testing.T, conn net.Conn, br *bufio.Reader, profile string, stream bool) *http.Response {
	t.Helper()
	body := promptBody("hello", 3, stream)
	fmt.Fprintf(conn, "POST /%s/v1/chat/completions HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		profile, len(body), body)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%s: %v", profile, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: status %d, body read %v", profile, resp.StatusCode, err)
	}
	if stream && !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		t.Fatalf("%s: incomplete stream %q", profile, b)
	}
	return resp
}

// TestCloseAfterStream: a CloseAfterStream profile advertises keep-alive, sends a complete
// response, then closes the connection; without the option the same connection serves again.
func TestCloseAfterStream(t *testing.T) {
	t.Parallel()
	llama := quick("llama")
	llama.CloseAfterStream = true
	s := start(t, Options{}, llama, quick("vllm"))
	dial := func() (net.Conn, *bufio.Reader) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn, bufio.NewReader(conn)
	}

	conn, br := dial()
	resp := rawStream(t, conn, br, "llama", true)
	if ka := resp.Header.Get("Keep-Alive"); ka != "timeout=5, max=100" || resp.Close {
		t.Errorf("Keep-Alive %q, Connection: close %v; want keep-alive advertised", ka, resp.Close)
	}
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the streamed response: read %v, want io.EOF (closed by the server)", err)
	}

	// Not streamed: the connection stays (llama-server was seen closing after streams).
	conn, br = dial()
	rawStream(t, conn, br, "llama", false)
	rawStream(t, conn, br, "vllm", true)
	_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := br.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("without CloseAfterStream: read %v, want the connection open (deadline exceeded)", err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	if resp := rawStream(t, conn, br, "vllm", true); resp.Header.Get("Keep-Alive") != "" {
		t.Errorf("Keep-Alive %q without CloseAfterStream", resp.Header.Get("Keep-Alive"))
	}
}

// TestCloseDelay: with a CloseDelay the connection stays open a while after the response, but
// a request written into it gets no answer: the connection drops, as a closed one does.
func TestCloseDelay(t *testing.T) {
	t.Parallel()
	llama := quick("llama")
	llama.CloseAfterStream, llama.CloseDelay = true, 150*time.Millisecond
	s := start(t, Options{}, llama)
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	br := bufio.NewReader(conn)
	rawStream(t, conn, br, "llama", true)
	_ = conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := br.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("right after the response: read %v, want the connection still open", err)
	}
	if _, err := io.WriteString(conn, "GET /llama/v1/models HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatalf("writing into the dying connection: %v", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if b, err := br.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the request written into the dying connection: read %q, %v; want it dropped without an answer", b, err)
	}
}

// ---- metrics ----------------------------------------------------------------------------------

// TestMetricsExposition: the vLLM families, typed and labelled as vLLM does, per profile.
func TestMetricsExposition(t *testing.T) {
	t.Parallel()
	a, b, other, hosted := quick("a"), quick("b"), quick("c"), quick("hosted")
	a.Model, b.Model = "shared", "shared"
	hosted.NoMetrics = true
	s := start(t, Options{}, a, b, other, hosted)
	c := newClient(t)
	chat(t, c, s, "b", streamBody(7, ""))

	types := map[string]dto.MetricType{
		"vllm:num_requests_running":       dto.MetricType_GAUGE,
		"vllm:num_requests_waiting":       dto.MetricType_GAUGE,
		"vllm:kv_cache_usage_perc":        dto.MetricType_GAUGE,
		"vllm:prefix_cache_queries_total": dto.MetricType_COUNTER,
		"vllm:prefix_cache_hits_total":    dto.MetricType_COUNTER,
		"vllm:prompt_tokens_total":        dto.MetricType_COUNTER,
		"vllm:generation_tokens_total":    dto.MetricType_COUNTER,
	}
	series := func(fams map[string]*dto.MetricFamily) map[string]bool {
		got := map[string]bool{}
		for name, mf := range fams {
			if want, ok := types[name]; !ok || mf.GetType() != want {
				t.Errorf("family %s type %v, want %v", name, mf.GetType(), want)
			}
			for _, m := range mf.GetMetric() {
				var labels []string
				for _, l := range m.GetLabel() {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
				got[name+"{"+strings.Join(labels, ",")+"}"] = true
			}
		}
		return got
	}
	all := series(scrape(t, c, s.MetricsURL()))
	for name := range types {
		for _, want := range []string{"engine=0,model_name=shared", "engine=1,model_name=shared", "engine=0,model_name=c-model"} {
			if !all[name+"{"+want+"}"] {
				t.Errorf("no series %s{%s}", name, want)
			}
		}
	}
	if len(all) != 3*len(types) {
		t.Errorf("%d series, want %d (the hosted profile has none): %v", len(all), 3*len(types), all)
	}
	// b (engine 1 of "shared") generated 7 tokens.
	fams := scrape(t, c, s.BaseURL("b")[:len(s.BaseURL("b"))-len("/v1")]+"/metrics")
	if got := series(fams); len(got) != len(types) || !got["vllm:generation_tokens_total{engine=1,model_name=shared}"] {
		t.Errorf("/b/metrics: %v", got)
	}
	if g := fams["vllm:generation_tokens_total"].GetMetric()[0].GetCounter().GetValue(); g != 7 {
		t.Errorf("b generated %v tokens, want 7", g)
	}

	r := do(t, context.Background(), c, http.MethodGet, s.URL()+"/hosted/metrics", "")
	if r.status != http.StatusNotFound {
		t.Errorf("/hosted/metrics: %d, want 404", r.status)
	}
	r = do(t, context.Background(), c, http.MethodPost, s.MetricsURL(), "")
	if r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d, want 405", r.status)
	}
	r = do(t, context.Background(), c, http.MethodGet, s.MetricsURL(), "")
	for _, line := range []string{
		"# TYPE vllm:num_requests_running gauge\n",
		"# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n",
		"# TYPE vllm:generation_tokens_total counter\n",
		`vllm:num_requests_waiting{engine="0",model_name="c-model"} 0` + "\n",
	} {
		if !strings.Contains(string(r.body), line) {
			t.Errorf("exposition lacks %q:\n%s", line, r.body)
		}
	}
}
