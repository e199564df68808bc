package probe

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tokscope/sample"

	"go.uber.org/goleak"

	"tokscope/config"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The ground-truth server streams a scripted schedule: every instant is an offset from the
// moment the handler saw the request, so whatever the client measures from its own t0 (which
// is earlier) must be ≥ the scheduled instant, and only slightly more.

// event is one write at a scheduled instant.
type event struct {
	at   time.Duration
	data string
}

// script is what the server answers to one request.
type script struct {
	status      int // 0 = 200
	header      map[string]string
	contentType string        // default text/event-stream
	headerDelay time.Duration // before the status line is flushed
	body        string        // written at once after the headers (error bodies, JSON answers)
	events      []event
	hold        time.Duration // after the events, keep the connection open this long
	abort       bool          // then drop the connection without the terminating chunk
}

type received struct {
	path    string
	arrival time.Time
	header  http.Header
	body    map[string]any
}

type gtServer struct {
	*httptest.Server
	scripts  func(n int) script // n counts requests from 1
	count    atomic.Int64
	inFlight atomic.Int64
	maxIn    atomic.Int64
	conns    atomic.Int64 // connections opened
	warms    atomic.Int64 // GET requests (connection warm-ups), answered with a model list

	mu   sync.Mutex
	reqs []received
}

func newGT(t testing.TB, scripts func(n int) script) *gtServer {
	g := &gtServer{scripts: scripts}
	g.Server = httptest.NewUnstartedServer(g)
	g.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			g.conns.Add(1)
		}
	}
	g.Start()
	t.Cleanup(g.Close)
	return g
}

func fixed(sc script) func(int) script { return func(int) script { return sc } }

func (g *gtServer) requests() []received {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]received(nil), g.reqs...)
}

func (g *gtServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	if r.Method == http.MethodGet { // the Runner's connection warm-up (GET /models): not a scripted request
		g.warms.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
		return
	}
	n := int(g.count.Add(1))
	in := g.inFlight.Add(1)
	defer g.inFlight.Add(-1)
	for m := g.maxIn.Load(); in > m && !g.maxIn.CompareAndSwap(m, in); m = g.maxIn.Load() {
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	g.mu.Lock()
	g.reqs = append(g.reqs, received{path: r.URL.Path, arrival: arrival, header: r.Header.Clone(), body: body})
	g.mu.Unlock()

	sc := g.scripts(n)
	wait := func(at time.Duration) bool {
		d := time.Until(arrival.Add(at))
		if d <= 0 {
			return r.Context().Err() == nil
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
			return false
		}
	}
	if !wait(sc.headerDelay) {
		return
	}
	for k, v := range sc.header {
		w.Header().Set(k, v)
	}
	ct := sc.contentType
	if ct == "" {
		ct = "text/event-stream"
	}
	w.Header().Set("Content-Type", ct)
	status := sc.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	if sc.body != "" {
		_, _ = io.WriteString(w, sc.body)
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	for _, e := range sc.events {
		if !wait(e.at) {
			return
		}
		if _, err := io.WriteString(w, e.data); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
	if sc.hold > 0 {
		last := time.Duration(0)
		if len(sc.events) > 0 {
			last = sc.events[len(sc.events)-1].at
		}
		if !wait(last + sc.hold) {
			return
		}
	}
	if sc.abort {
		panic(http.ErrAbortHandler) // closes the connection: the body ends without its last chunk
	}
}

// SSE builders.

func data(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return "data: " + string(b) + "\n\n"
}

const gtID = "chatcmpl-gt"

func chunk(delta map[string]any, finish any, extra map[string]any) string {
	m := map[string]any{
		"id": gtID, "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	}
	for k, v := range extra {
		m[k] = v
	}
	return data(m)
}

func roleChunk() string            { return chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil) }
func contentChunk(s string) string { return chunk(map[string]any{"content": s}, nil, nil) }
func reasoningChunk(s string) string {
	return chunk(map[string]any{"reasoning_content": s}, nil, nil)
}
func finishChunk(reason string) string { return chunk(map[string]any{}, reason, nil) }

func usage(prompt, completion, reasoning int) map[string]any {
	u := map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
	if reasoning > 0 {
		u["completion_tokens_details"] = map[string]any{"reasoning_tokens": reasoning}
	}
	return u
}

func usageChunk(prompt, completion, reasoning int) string {
	return data(map[string]any{
		"id": gtID, "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{}, "usage": usage(prompt, completion, reasoning),
	})
}

const doneEvent = "data: [DONE]\n\n"
const keepAlive = ": keep-alive\n\n"

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

// testEndpoint is an endpoint on srv with generous limits; mods adjust it.
func testEndpoint(srv *httptest.Server, mods ...func(*config.Endpoint)) config.Endpoint {
	ep := config.Endpoint{
		Name: "gt", BaseURL: srv.URL + "/v1", Model: "m", Prompt: "hi", MaxTokens: 64,
		Concurrency: 1, Timeout: 20 * time.Second, Stall: 10 * time.Second,
	}
	for _, m := range mods {
		m(&ep)
	}
	return ep
}

// measure runs one request against a server following sc.
func measure(t *testing.T, sc script, mods ...func(*config.Endpoint)) (sample.Sample, *gtServer, []sample.Delta) {
	t.Helper()
	g := newGT(t, fixed(sc))
	c := NewClient(testEndpoint(g.Server, mods...))
	t.Cleanup(c.CloseIdleConnections)
	var deltas []sample.Delta
	s := ask(t.Context(), c, "hi", Live{Delta: func(d sample.Delta) { deltas = append(deltas, d) }})
	return s, g, deltas
}
