package watch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// requestLog records every request a test server got, so a test can check that watching
// sends nothing but GETs of the read-only paths.
type requestLog struct {
	mu   sync.Mutex
	seen []string
	at   []time.Time
}

func (l *requestLog) add(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, r.Method+" "+r.URL.Path)
	l.at = append(l.at, time.Now())
}

func (l *requestLog) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

func serve(t *testing.T, log *requestLog, h http.HandlerFunc) Target {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	tg, err := NewTarget(srv.URL, "url")
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// collect runs a Scraper over targets until every target has n scrapes, feeding a Fleet.
func collect(t *testing.T, opts Options, targets []Target, n int) (*Fleet, map[string][]Instant) {
	t.Helper()
	f := NewFleet(10 * time.Second)
	f.SetTargets(targets)
	s := NewScraper(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go s.Run(ctx, targets)
	got := map[string][]Instant{}
	for in := range s.Instants() {
		f.Observe(in)
		got[in.Target] = append(got[in.Target], in)
		done := true
		for _, tg := range targets {
			done = done && len(got[tg.Key()]) >= n
		}
		if done {
			cancel()
		}
	}
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatal("scrapes did not arrive within 20 s")
	}
	return f, got
}

// TestGarbageAndHTMLAreStale: beside a vLLM whose counters move, a server answering an HTML
// page and one answering garbage are STALE with the reason, and the vLLM row keeps updating.
// Watching sends no request but GETs of the read-only paths.
func TestGarbageAndHTMLAreStale(t *testing.T) {
	var log requestLog
	var n atomic.Int32
	vllm := serve(t, &log, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			file := "testdata/vllm-hist-1.txt"
			if n.Add(1) > 1 {
				file = "testdata/vllm-hist-2.txt"
			}
			w.Write(mustRead(t, file))
		case "/version":
			fmt.Fprint(w, `{"version":"0.10.1"}`)
		default:
			http.NotFound(w, r)
		}
	})
	html := serve(t, &log, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>login</body></html>")
	})
	garbage := serve(t, &log, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "vllm:num_requests_running{ 3 }}}\x00\n")
	})
	targets := []Target{vllm, html, garbage}
	f, _ := collect(t, Options{Interval: 50 * time.Millisecond}, targets, 3)
	rows := f.Rows(time.Now())
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	if rows[0].Kind != KindVLLM || rows[0].Version == nil || *rows[0].Version != "0.10.1" || len(rows[0].Badges) != 0 {
		t.Errorf("vLLM row: kind %q version %v badges %v", rows[0].Kind, rows[0].Version, rows[0].Badges)
	}
	if rows[0].GenTPS == nil || *rows[0].GenTPS <= 0 {
		t.Errorf("vLLM row gen tok/s %v", rows[0].GenTPS)
	}
	for i, want := range []string{"answered HTML", "unreadable metrics"} {
		r := rows[i+1]
		if !contains(r.Badges, BadgeStale) || r.LastError == nil || !strings.Contains(*r.LastError, want) {
			t.Errorf("row %d: badges %v error %v; want STALE, %q", i+1, r.Badges, r.LastError, want)
		}
		if strings.Contains(*r.LastError, "127.0.0.1") {
			t.Errorf("error names the URL: %q", *r.LastError)
		}
	}
	for _, req := range log.requests() {
		if !strings.HasPrefix(req, "GET ") || !readOnlyPath(strings.TrimPrefix(req, "GET ")) {
			t.Errorf("watch sent %q", req)
		}
	}
}

func readOnlyPath(p string) bool {
	switch p {
	case "/metrics", "/version", "/slots", "/props", "/api/ps", "/api/version", "/get_server_info", "/info":
		return true
	}
	return false
}

// TestScrapesAreBounded: a body over the bound and a server slower than the timeout are
// errors of their own, and a fast server beside the slow one is scraped at its pace.
func TestScrapesAreBounded(t *testing.T) {
	var log requestLog
	big := serve(t, &log, func(w http.ResponseWriter, r *http.Request) {
		chunk := strings.Repeat("# padding comment line\n", 1000)
		for i := 0; i < 60; i++ { // ~1.4 MB
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
		}
	})
	slow := serve(t, &log, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	})
	var fastCount atomic.Int32
	fast := serve(t, &log, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			fastCount.Add(1)
			w.Write(mustRead(t, "testdata/vllm-hist-1.txt"))
			return
		}
		http.NotFound(w, r)
	})
	opts := Options{Interval: 50 * time.Millisecond, Timeout: 300 * time.Millisecond, MaxBody: 1 << 20}
	f, got := collect(t, opts, []Target{big, slow, fast}, 2)
	rows := f.Rows(time.Now())
	if e := rows[0].LastError; e == nil || *e != "body larger than 1 MiB" {
		t.Errorf("big body: %v", e)
	}
	if e := rows[1].LastError; e == nil || *e != "timeout" {
		t.Errorf("slow server: %v", e)
	}
	// Two slow scrapes take ≥ 0.6 s; the fast server is scraped every 50 ms meanwhile.
	if n := len(got[fast.Key()]); n < 4 {
		t.Errorf("the fast server was scraped %d times while the slow one timed out twice; want ≥ 4", n)
	}
}

// TestPhaseSpreadsScrapes: n targets' first scrapes are spread evenly over one interval;
// live, the first requests of four servers arrive apart, never at one instant.
func TestPhaseSpreadsScrapes(t *testing.T) {
	for i, want := range []time.Duration{0, 250, 500, 750} {
		if got := Phase(i, 4, time.Second); got != want*time.Millisecond {
			t.Errorf("Phase(%d, 4) = %v, want %v", i, got, want*time.Millisecond)
		}
	}
	if Phase(0, 1, time.Second) != 0 {
		t.Error("one target waits")
	}
	var log requestLog
	var targets []Target
	firsts := make([]time.Time, 4)
	var mu sync.Mutex
	for i := 0; i < 4; i++ {
		i := i
		targets = append(targets, serve(t, &log, func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if firsts[i].IsZero() {
				firsts[i] = time.Now()
			}
			mu.Unlock()
			w.Write(mustRead(t, "testdata/vllm-hist-1.txt"))
		}))
	}
	collect(t, Options{Interval: 800 * time.Millisecond}, targets, 1)
	mu.Lock()
	defer mu.Unlock()
	sort.Slice(firsts, func(i, j int) bool { return firsts[i].Before(firsts[j]) })
	for i := 1; i < len(firsts); i++ {
		// Ideal gap 200 ms; a loaded 2-core machine may delay a timer, never bring two together.
		if gap := firsts[i].Sub(firsts[i-1]); gap < 100*time.Millisecond {
			t.Errorf("first scrapes %d and %d %v apart; want ≈ 200 ms", i-1, i, gap)
		}
	}
}

// TestOllamaModelsAndLoading: an Ollama (no /metrics) is recognised by /api/version; its
// loaded models come from /api/ps (the real 0.17.4 capture, testdata/ollama-0.17.4). A model
// whose expiry moves with the clock (Ollama has not set it: loading, or its first request,
// as a real Ollama showed) is LOADING; a fixed expiry is not.
func TestOllamaModelsAndLoading(t *testing.T) {
	var log requestLog
	capture := mustRead(t, "testdata/ollama-0.17.4/api-ps.json")
	ollama := func(loading bool) Target {
		return serve(t, &log, func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/api/version":
				w.Write(mustRead(t, "testdata/ollama-0.17.4/api-version.json"))
			case "/api/ps":
				body := capture
				if loading {
					exp := time.Now().Add(5 * time.Minute).UTC().Format(time.RFC3339Nano)
					body = []byte(strings.Replace(string(capture), "2026-11-26T15:59:42.950721847Z", exp, 1))
				}
				w.Write(body)
			default:
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, "404 page not found")
			}
		})
	}
	steady, loading := ollama(false), ollama(true)
	f, _ := collect(t, Options{Interval: 100 * time.Millisecond}, []Target{steady, loading}, 3)
	rows := f.Rows(time.Now())
	for i, r := range rows {
		if r.Kind != KindOllama || r.Version == nil || *r.Version != "0.0.0" || len(r.Ollama) != 1 ||
			r.Ollama[0].Name != "random-tiny:latest" || r.Ollama[0].Size != 2751616 || r.Ollama[0].Context != 4096 {
			t.Errorf("row %d: %+v", i, r)
		}
		if r.GenTPS != nil || r.Running != nil {
			t.Errorf("row %d: Ollama exports no tok/s or running; got %v %v", i, r.GenTPS, r.Running)
		}
	}
	if want := time.Date(2026, 11, 26, 15, 59, 42, 950721847, time.UTC); !rows[0].Ollama[0].ExpiresAt.Equal(want) {
		t.Errorf("expiry %v, want %v", rows[0].Ollama[0].ExpiresAt, want)
	}
	if hasAny(rows[0].Badges, BadgeLoading) || !hasAny(rows[1].Badges, BadgeLoading) {
		t.Errorf("badges %v / %v; want LOADING on the second only", rows[0].Badges, rows[1].Badges)
	}
}

func hasAny(list []string, s string) bool { return contains(list, s) }

// TestLlamaCppOverHTTP: the b10470 capture served with its /slots and /props.
func TestLlamaCppOverHTTP(t *testing.T) {
	dir := filepath.Join("..", "servermetrics", "testdata", "llamacpp-b10470")
	var log requestLog
	tg := serve(t, &log, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			w.Write(mustRead(t, filepath.Join(dir, "metrics-2-streams-running.txt")))
		case "/slots":
			w.Write(mustRead(t, filepath.Join(dir, "slots-2-streams-running.json")))
		case "/props":
			fmt.Fprint(w, `{"build_info":"b10470-34af94cd9","model_path":"x"}`)
		default:
			http.NotFound(w, r)
		}
	})
	f, _ := collect(t, Options{Interval: 50 * time.Millisecond}, []Target{tg}, 2)
	r := f.Rows(time.Now())[0]
	if r.Kind != KindLlamaCpp || r.Version == nil || *r.Version != "b10470-34af94cd9" {
		t.Errorf("kind %q version %v", r.Kind, r.Version)
	}
	near(t, "running", r.Running, 2)
	near(t, "waiting", r.Waiting, 0)
	near(t, "gen tok/s (nothing moved)", r.GenTPS, 0)
	if len(r.Slots) != 2 || r.Slots[1].Decoded != 46 || r.Slots[1].Prompt != 91 || r.Slots[1].Context != 2048 {
		t.Errorf("slots %+v", r.Slots)
	}
}

// TestSetTargetsWhileRunning: a target added while the scraper runs is scraped from then on;
// one removed is not scraped again (a targets file re-read).
func TestSetTargetsWhileRunning(t *testing.T) {
	var log requestLog
	var aCount, bCount atomic.Int32
	a := serve(t, &log, func(w http.ResponseWriter, r *http.Request) {
		aCount.Add(1)
		w.Write(mustRead(t, "testdata/vllm-hist-1.txt"))
	})
	b := serve(t, &log, func(w http.ResponseWriter, r *http.Request) {
		bCount.Add(1)
		w.Write(mustRead(t, "testdata/vllm-hist-1.txt"))
	})
	s := NewScraper(Options{Interval: 30 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, []Target{a})
	seen := map[string]int{}
	swapped := false
	var bAtRemoval int32
	for in := range s.Instants() {
		seen[in.Target]++
		switch {
		case !swapped && seen[a.Key()] >= 3:
			s.SetTargets([]Target{b})
			swapped = true
		case swapped && seen[b.Key()] == 3:
			bAtRemoval = aCount.Load()
		case swapped && seen[b.Key()] >= 8:
			cancel()
		}
	}
	if bCount.Load() < 8 {
		t.Errorf("the added target was scraped %d times", bCount.Load())
	}
	if n := aCount.Load(); n > bAtRemoval {
		t.Errorf("the removed target was scraped again (%d requests, %d when b had 3 scrapes)", n, bAtRemoval)
	}
}
