package servermetrics

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"tokscope/config"
)

// scripted is a server whose /metrics (and /slots) are written by the test from a clock:
// counters grow at a known rate, gauges hold known values.
type scripted struct {
	t       *testing.T
	srv     *httptest.Server
	start   time.Time
	mu      sync.Mutex
	metrics func(elapsed float64) string // seconds since start → exposition
	slots   func(elapsed float64) (int, string)
	auths   []string // Authorization of every request, in order
}

func newScripted(t *testing.T, metrics func(float64) string) *scripted {
	s := &scripted{t: t, start: time.Now(), metrics: metrics}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *scripted) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.auths = append(s.auths, r.Header.Get("Authorization"))
	s.mu.Unlock()
	el := time.Since(s.start).Seconds()
	switch r.URL.Path {
	case "/metrics":
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, s.metrics(el))
	case "/slots":
		if s.slots == nil {
			http.Error(w, "no slots", http.StatusNotImplemented)
			return
		}
		code, body := s.slots(el)
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	default:
		http.NotFound(w, r)
	}
}

func endpoint(base, model string) config.Endpoint {
	ep := config.NewEndpoint(base+"/v1", model)
	ep.Name = model
	return ep
}

// collect runs a Scraper until want returns true for the latest Update of every endpoint, or
// the deadline passes; it returns those latest Updates.
func collect(t *testing.T, eps []config.Endpoint, mode Mode, want func(Update) bool) []Update {
	t.Helper()
	s := New(eps, mode, Options{Interval: 50 * time.Millisecond, Timeout: time.Second})
	if s == nil {
		t.Fatal("nothing to scrape")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	go s.Run(ctx)
	latest := make([]Update, len(eps))
	seen := make([]bool, len(eps))
	for u := range s.Updates() {
		latest[u.Endpoint], seen[u.Endpoint] = u, true
		done := true
		for i := range eps {
			done = done && seen[i] && want(latest[i])
		}
		if done {
			cancel()
			for range s.Updates() { // Run closes the channel once its goroutines are gone
			}
			return latest
		}
	}
	t.Fatalf("no satisfying update before the deadline; latest: %+v", latest)
	return nil
}

// after waits until GenTPS spans at least the given time of counter history.
func settled(after time.Duration) func(Update) bool {
	start := time.Now()
	return func(u Update) bool {
		return u.State == StateOK && u.Reading.GenTPS.OK && time.Since(start) > after
	}
}

func near(t *testing.T, what string, got Value, want, tol float64) {
	t.Helper()
	if !got.OK || math.Abs(got.V-want) > tol {
		t.Errorf("%s = %+v, want %v ± %v", what, got, want, tol)
	}
}

// The tolerance of a rate: the server stamps its counter when it answers, the scraper when
// the answer arrives; over ≥ 1 s of history a few ms of skew on a loaded machine is < 2 %.
const rateTol = 0.03

func TestScriptedVLLM(t *testing.T) {
	srv := newScripted(t, func(el float64) string {
		return fmt.Sprintf(`# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="llama"} 3.0
vllm:num_requests_running{engine="1",model_name="llama"} 2.0
vllm:num_requests_running{engine="0",model_name="qwen"} 1.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="llama"} 4.0
vllm:num_requests_waiting{engine="1",model_name="llama"} 0.0
vllm:num_requests_waiting{engine="0",model_name="qwen"} 0.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="llama"} 0.5
vllm:kv_cache_usage_perc{engine="1",model_name="llama"} 0.3
vllm:kv_cache_usage_perc{engine="0",model_name="qwen"} 0.1
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="llama"} %[1]f
vllm:prefix_cache_queries_total{engine="0",model_name="qwen"} %[1]f
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="llama"} %[2]f
vllm:prefix_cache_hits_total{engine="0",model_name="qwen"} 0
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="llama"} %[3]f
vllm:generation_tokens_total{engine="1",model_name="llama"} %[3]f
vllm:generation_tokens_total{engine="0",model_name="qwen"} %[4]f
`, 1000*el, 250*el, 1000+60*el, 25*el)
	})
	eps := []config.Endpoint{endpoint(srv.srv.URL, "llama"), endpoint(srv.srv.URL, "qwen")}
	ups := collect(t, eps, Auto, settled(1200*time.Millisecond))
	llama, qwen := ups[0].Reading, ups[1].Reading
	if llama.Kind != KindVLLM || !llama.GenLive {
		t.Fatalf("kind %q live %v", llama.Kind, llama.GenLive)
	}
	wantValue(t, "llama running (sum of engines)", llama.Running, 5)
	wantValue(t, "llama waiting", llama.Waiting, 4)
	wantValue(t, "llama kv (mean of engines)", llama.KVCacheUsage, 0.4)
	near(t, "llama prefix hit rate", llama.PrefixCacheHitRate, 0.25, 0.01)
	near(t, "llama gen tok/s (2 engines × 60)", llama.GenTPS, 120, 120*rateTol)
	wantValue(t, "qwen running", qwen.Running, 1)
	wantValue(t, "qwen kv", qwen.KVCacheUsage, 0.1)
	near(t, "qwen prefix hit rate", qwen.PrefixCacheHitRate, 0, 1e-9)
	near(t, "qwen gen tok/s", qwen.GenTPS, 25, 25*rateTol)
	// The two endpoints share one target: one scrape serves both.
	srv.mu.Lock()
	n := len(srv.auths)
	srv.mu.Unlock()
	if elapsed := time.Since(srv.start); float64(n) > elapsed.Seconds()/0.05+3 {
		t.Errorf("%d scrapes in %v at a 50 ms interval: endpoints on one server must share a scrape", n, elapsed)
	}
}

func TestScriptedSGLang(t *testing.T) {
	srv := newScripted(t, func(el float64) string {
		return fmt.Sprintf(`# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m",tp_rank="0"} 6
sglang:num_running_reqs{model_name="m",tp_rank="1"} 6
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{model_name="m",tp_rank="0"} 11
# TYPE sglang:token_usage gauge
sglang:token_usage{model_name="m",tp_rank="0"} 0.72
# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate{model_name="m",tp_rank="0"} 0.35
# TYPE sglang:gen_throughput gauge
sglang:gen_throughput{model_name="m",tp_rank="0"} 999
# TYPE sglang:realtime_tokens_total counter
sglang:realtime_tokens_total{mode="decode",model_name="m",tp_rank="0"} %f
sglang:realtime_tokens_total{mode="prefill_compute",model_name="m",tp_rank="0"} %f
`, 200*el, 5000*el)
	})
	ups := collect(t, []config.Endpoint{endpoint(srv.srv.URL, "m")}, Auto, settled(1200*time.Millisecond))
	r := ups[0].Reading
	if r.Kind != KindSGLang {
		t.Fatalf("kind %q", r.Kind)
	}
	wantValue(t, "running (rank 0 only)", r.Running, 6)
	wantValue(t, "waiting", r.Waiting, 11)
	wantValue(t, "kv (token_usage)", r.KVCacheUsage, 0.72)
	wantValue(t, "hit rate (gauge)", r.PrefixCacheHitRate, 0.35)
	near(t, "gen tok/s from the live decode counter, not the gauge", r.GenTPS, 200, 200*rateTol)
	if !r.GenLive {
		t.Error("realtime_tokens_total is live")
	}
}

func TestScriptedLlamaCpp(t *testing.T) {
	// Two slots decode at 20 tok/s each; the finished-request counter stays at 500 while they
	// run, as llama.cpp's does.
	srv := newScripted(t, func(el float64) string {
		return fmt.Sprintf(`# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed, excluding cached tokens
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total %f
# TYPE llamacpp:prompt_tokens_cached_total counter
llamacpp:prompt_tokens_cached_total %f
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total 500
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 2
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 3
`, 100*el, 300*el)
	})
	srv.slots = func(el float64) (int, string) {
		d := int(20 * el)
		return 200, fmt.Sprintf(`[{"id":0,"is_processing":true,"next_token":[{"n_decoded":%d}]},
			{"id":1,"is_processing":true,"next_token":[{"n_decoded":%d}]},
			{"id":2,"is_processing":false,"next_token":[{"n_decoded":12345}]}]`, d, d)
	}
	ups := collect(t, []config.Endpoint{endpoint(srv.srv.URL, "default")}, Auto, settled(1500*time.Millisecond))
	r := ups[0].Reading
	if r.Kind != KindLlamaCpp || !r.GenLive {
		t.Fatalf("kind %q live %v: with /slots the generation rate is live", r.Kind, r.GenLive)
	}
	wantValue(t, "running", r.Running, 2)
	wantValue(t, "waiting (deferred)", r.Waiting, 3)
	near(t, "gen tok/s from /slots", r.GenTPS, 40, 40*rateTol+1) // n_decoded is whole tokens
	near(t, "prefix hit rate = cached / (cached + processed)", r.PrefixCacheHitRate, 0.75, 0.01)
	wantAbsent(t, "kv", r.KVCacheUsage)

	// Without /slots (--no-slots answers 501) the rate comes from the finished-request
	// counter: 0 while requests run, and not live.
	srv.slots = nil
	ups = collect(t, []config.Endpoint{endpoint(srv.srv.URL, "default")}, Auto, settled(300*time.Millisecond))
	r = ups[0].Reading
	if r.GenLive {
		t.Error("without /slots the generation rate is not live")
	}
	near(t, "gen tok/s without /slots", r.GenTPS, 0, 1e-9)
}

func TestScriptedTGI(t *testing.T) {
	srv := newScripted(t, func(el float64) string {
		return fmt.Sprintf(`# HELP tgi_queue_size Current queue size
# TYPE tgi_queue_size gauge
tgi_queue_size 7

# HELP tgi_batch_current_size Current batch size
# TYPE tgi_batch_current_size gauge
tgi_batch_current_size 12

# HELP tgi_request_generated_tokens Generated tokens per request
# TYPE tgi_request_generated_tokens histogram
tgi_request_generated_tokens_bucket{le="512"} 3
tgi_request_generated_tokens_bucket{le="+Inf"} 3
tgi_request_generated_tokens_sum %f
tgi_request_generated_tokens_count 3
`, 3423+90*el)
	})
	ups := collect(t, []config.Endpoint{endpoint(srv.srv.URL, "tgi")}, Auto, settled(1200*time.Millisecond))
	r := ups[0].Reading
	if r.Kind != KindTGI || r.GenLive {
		t.Fatalf("kind %q live %v", r.Kind, r.GenLive)
	}
	wantValue(t, "running (batch size)", r.Running, 12)
	wantValue(t, "waiting (queue size)", r.Waiting, 7)
	near(t, "gen tok/s", r.GenTPS, 90, 90*rateTol)
	wantAbsent(t, "kv", r.KVCacheUsage)
	wantAbsent(t, "prefix hit rate", r.PrefixCacheHitRate)
}

// Whatever goes wrong is a quiet note, and the note names no URL.
func TestUnavailableNotes(t *testing.T) {
	closed := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr
	}()
	big := strings.Repeat("# padding\n", 1<<20/10+1)
	cases := []struct {
		name, note string
		state      State
		handler    http.HandlerFunc
		base       string
	}{
		{"refused", "connection refused", StateUnavailable, nil, closed},
		{"404", "HTTP 404", StateUnavailable, http.NotFound, ""},
		{"redirect", "HTTP 302", StateUnavailable, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://example.invalid/metrics", http.StatusFound)
		}, ""},
		{"not a server's", "not recognised", StateUnrecognised, func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, "# TYPE go_goroutines gauge\ngo_goroutines 9\n")
		}, ""},
		{"garbage", "unreadable exposition", StateUnrecognised, func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, "<html>hello</html>\n")
		}, ""},
		{"too large", "body larger than 1 MiB", StateUnavailable, func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, big)
		}, ""},
		{"slow", "timeout", StateUnavailable, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.base
			if tc.handler != nil {
				srv := httptest.NewServer(tc.handler)
				defer srv.Close()
				base = srv.URL
			}
			s := New([]config.Endpoint{endpoint(base, "m")}, Auto,
				Options{Interval: 50 * time.Millisecond, Timeout: 300 * time.Millisecond, MaxBody: 1 << 20})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go s.Run(ctx)
			u := <-s.Updates()
			cancel()
			if u.State != tc.state || !strings.Contains(u.Note, tc.note) {
				t.Fatalf("update %+v, want state %v with note %q", u, tc.state, tc.note)
			}
			if strings.Contains(u.Note, "127.0.0.1") || strings.Contains(u.Note, "http") {
				t.Fatalf("note %q names the URL", u.Note)
			}
		})
	}
}

// The endpoint's key goes only to its own origin, only after a 401 without it, and the
// scraper remembers that the server wants it.
func TestCredentialsOnlyWhenAsked(t *testing.T) {
	t.Setenv("SM_TEST_KEY", "sk-secret-123")
	var mu sync.Mutex
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer sk-secret-123" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 1\n")
	}))
	defer srv.Close()
	ep := endpoint(srv.URL, "m")
	ep.APIKeyEnv = "SM_TEST_KEY"
	ups := collect(t, []config.Endpoint{ep}, Auto, func(u Update) bool { return u.State == StateOK })
	wantValue(t, "running", ups[0].Reading.Running, 1)
	mu.Lock()
	if len(auths) < 2 || auths[0] != "" || auths[1] != "Bearer sk-secret-123" {
		t.Fatalf("Authorization of the first requests: %q; want none, then the key after the 401", auths)
	}
	mu.Unlock()

	// --server-metrics URL on another origin: the key never goes there.
	mu.Lock()
	auths = nil
	mu.Unlock()
	other := endpoint("http://127.0.0.1:1", "m") // the endpoint's own origin is elsewhere
	other.APIKeyEnv = "SM_TEST_KEY"
	s := New([]config.Endpoint{other}, Mode{URL: srv.URL + "/metrics"}, Options{Interval: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	go s.Run(ctx)
	u := <-s.Updates()
	cancel()
	for range s.Updates() {
	}
	if u.State != StateUnavailable || u.Note != "HTTP 401" {
		t.Fatalf("update %+v, want the 401 as a note", u)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range auths {
		if a != "" {
			t.Fatalf("the key was sent to a metrics URL on another origin: %q", a)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Mode
		err  bool
	}{
		{"auto", Auto, false},
		{"off", Mode{Off: true}, false},
		{"http://10.0.0.5:8000/metrics", Mode{URL: "http://10.0.0.5:8000/metrics"}, false},
		{"ftp://x/metrics", Mode{}, true},
		{"sometimes", Mode{}, true},
		{"http://user:pw@h/metrics", Mode{}, true},
	} {
		got, err := ParseMode(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseMode(%q) = %+v, %v", tc.in, got, err)
		}
	}
	if New([]config.Endpoint{endpoint("http://h", "m")}, Mode{Off: true}, Options{}) != nil {
		t.Error("off: no scraper")
	}
}
