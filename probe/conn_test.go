package probe

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
)

// closer is a scripted HTTP/1.1 server on loopback that behaves as llama.cpp's llama-server
// b10470 does: every streamed answer advertises "Keep-Alive: timeout=5, max=100", is sent
// whole (chunked terminator included), and then the server closes the connection — after
// closeAfter, so that a client starting its next request at once surely writes it into the
// dead connection. GET /models answers and keeps the connection, as a non-streamed answer.
type closer struct {
	l          net.Listener
	closeAfter time.Duration
	conns      atomic.Int64 // connections accepted
	chats      atomic.Int64 // chat requests answered
	wg         sync.WaitGroup
}

func newCloser(t testing.TB, closeAfter time.Duration) *closer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &closer{l: l, closeAfter: closeAfter}
	c.wg.Add(1)
	go c.accept()
	t.Cleanup(func() {
		l.Close()
		c.wg.Wait()
	})
	return c
}

func (c *closer) url() string { return "http://" + c.l.Addr().String() + "/v1" }

func (c *closer) accept() {
	defer c.wg.Done()
	for {
		conn, err := c.l.Accept()
		if err != nil {
			return
		}
		c.conns.Add(1)
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer conn.Close()
			c.serve(conn)
		}()
	}
}

// closerAnswer is a short well-formed stream: two tokens, finish, usage, [DONE].
const closerAnswer = "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" a\"}}]}\n\n" +
	"data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" b\"}}]}\n\n" +
	"data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: {\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3}}\n\n" +
	"data: [DONE]\n\n"

func (c *closer) serve(conn net.Conn) {
	br := bufio.NewReader(conn)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		if req.Method == http.MethodGet {
			body := `{"object":"list","data":[{"id":"m","object":"model"}]}`
			fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			continue
		}
		c.chats.Add(1)
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nKeep-Alive: timeout=5, max=100\r\n"+
			"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(closerAnswer), closerAnswer)
		time.Sleep(c.closeAfter)
		return // closes the connection, whatever the client sent meanwhile
	}
}

// TestDeadKeptAliveConnection: against a server that closes every connection after its
// answer, requests sent back to back (-n 1 -i 0s) all succeed. The first that finds its
// connection dead is sent again on a new one (ConnRetry, with that attempt's connect phase);
// after a few such connections the endpoint is learned to close every connection, its Status
// says so, and each request opens its own connection without a retry.
func TestDeadKeptAliveConnection(t *testing.T) {
	srv := newCloser(t, 20*time.Millisecond)
	ep := config.Endpoint{Name: "llama", BaseURL: srv.url(), Model: "m", Prompt: "hi", MaxTokens: 8,
		Concurrency: 1, Timeout: 10 * time.Second, Stall: 5 * time.Second}
	r := NewRunner([]config.Endpoint{ep}, Options{Warmup: 1, Requests: 20})
	go func() { _ = r.Run(t.Context()) }()
	var samples []sample.Sample
	learned := false
	for ev := range r.Events() {
		switch ev := ev.(type) {
		case *sample.Done:
			if !ev.Sample.Warmup {
				samples = append(samples, ev.Sample)
			}
		case *sample.Status:
			learned = learned || ev.ConnPerRequest
		}
	}
	if len(samples) != 20 {
		t.Fatalf("%d counted requests, want 20", len(samples))
	}
	retries, lastRetry := 0, 0
	for i, s := range samples {
		if s.Outcome != sample.OutcomeOK {
			t.Errorf("request %d: %s %s %s", s.Seq, s.Outcome, s.ErrorKind, s.ErrorMessage)
		}
		if s.ConnRetry {
			retries++
			lastRetry = i + 1
			if s.Reused || s.Connect < 0 {
				t.Errorf("request %d was sent again: reused %v, connect %v; want a new connection with its connect phase", s.Seq, s.Reused, s.Connect)
			}
			if s.Headers < 0 || s.Wrote < 0 || s.Wrote > s.Headers || s.FirstToken < s.Headers {
				t.Errorf("request %d: instants wrote %v headers %v first token %v are not the answering attempt's", s.Seq, s.Wrote, s.Headers, s.FirstToken)
			}
		}
	}
	if retries == 0 {
		t.Error("no request met a dead connection: the server must close after a delay the client runs into")
	}
	if !learned {
		t.Error("no Status said that the server closes every connection")
	}
	// Each dead connection costs two requests (the one it answered, the one it failed), and
	// the warm-up's is the first: learned within 2 × closesEvidence requests.
	learnedBy := 2 * closesEvidence
	if lastRetry > learnedBy {
		t.Errorf("request %d still retried: the closing server should be learned after %d connections", lastRetry, closesEvidence)
	}
	for _, s := range samples[learnedBy:] {
		if s.Reused {
			t.Errorf("request %d reused a connection after the server was learned to close them", s.Seq)
		}
	}
	t.Logf("%d requests, %d sent again on a new connection (last: #%d), %d connections", len(samples), retries, lastRetry, srv.conns.Load())
}

// TestKeepAliveServerNotLearned: a server that keeps connections is never taken for one that
// closes them, and its requests reuse connections.
func TestKeepAliveServerNotLearned(t *testing.T) {
	g := newGT(t, fixed(script{events: okStream()}))
	c := NewClient(testEndpoint(g.Server))
	t.Cleanup(c.CloseIdleConnections)
	for i := range 8 {
		s := ask(t.Context(), c, "hi", Live{})
		if s.Outcome != sample.OutcomeOK || s.ConnRetry {
			t.Fatalf("request %d: %s %s retry %v", i, s.Outcome, s.ErrorMessage, s.ConnRetry)
		}
		if i > 0 && !s.Reused {
			t.Errorf("request %d opened a new connection", i)
		}
	}
	if c.ClosesConnections() {
		t.Error("a keep-alive server was learned as closing every connection")
	}
	if n := g.conns.Load(); n != 1 {
		t.Errorf("%d connections for 8 sequential requests, want 1", n)
	}
}

// TestIdleTimeoutIsNotClosingEvery: connections the server closes when idle for a while (its
// keep-alive timeout, here shorter than the interval) are not "closed right after the
// answer": the endpoint is not learned as closing every connection.
func TestIdleTimeoutIsNotClosingEvery(t *testing.T) {
	g := &gtServer{scripts: fixed(script{events: okStream()})}
	g.Server = httptest.NewUnstartedServer(g)
	g.Config.IdleTimeout = 300 * time.Millisecond
	g.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			g.conns.Add(1)
		}
	}
	g.Start()
	t.Cleanup(g.Close)
	c := NewClient(testEndpoint(g.Server))
	t.Cleanup(c.CloseIdleConnections)
	for i := range closesEvidence + 1 {
		if s := ask(t.Context(), c, "hi", Live{}); s.Outcome != sample.OutcomeOK {
			t.Fatalf("request %d: %s %s", i, s.Outcome, s.ErrorMessage)
		}
		time.Sleep(600 * time.Millisecond)
	}
	if c.ClosesConnections() {
		t.Error("idle timeouts were taken for a server that closes every connection")
	}
	if n := g.conns.Load(); n != closesEvidence+1 {
		t.Errorf("%d connections, want %d (each closed by the idle timeout)", n, closesEvidence+1)
	}
}

// TestWarmConnsOnePerStream: the Runner's warm-up leaves one connection per stream, so that
// no counted request opens a connection inside its TTFT.
func TestWarmConnsOnePerStream(t *testing.T) {
	const streams = 8
	g := newGT(t, fixed(script{events: []event{{ms(30), contentChunk(" a")}, {ms(31), finishChunk("stop")}, {ms(31), doneEvent}}}))
	ep := testEndpoint(g.Server, func(e *config.Endpoint) { e.Concurrency = streams })
	r := NewRunner([]config.Endpoint{ep}, Options{Warmup: 1, Requests: 3 * streams})
	go func() { _ = r.Run(t.Context()) }()
	n := 0
	for s := range counted(r) {
		n++
		if s.Outcome != sample.OutcomeOK || !s.Reused || s.Connect >= 0 {
			t.Errorf("request %d: %s, reused %v, connect %v: want every counted request on a warmed connection", s.Seq, s.Outcome, s.Reused, s.Connect)
		}
	}
	if n != 3*streams {
		t.Errorf("%d counted requests, want %d", n, 3*streams)
	}
	if c := g.conns.Load(); c != streams {
		t.Errorf("%d connections opened, want %d (one per stream)", c, streams)
	}
}

// TestWarmConnsSkipsClosingServer: WarmConns opens n connections, and nothing once the
// server is known to close every connection.
func TestWarmConnsSkipsClosingServer(t *testing.T) {
	srv := newCloser(t, 0)
	c := NewClient(config.Endpoint{Name: "x", BaseURL: srv.url(), Model: "m", MaxTokens: 8, Timeout: 5 * time.Second})
	t.Cleanup(c.CloseIdleConnections)
	if n := c.WarmConns(t.Context(), 4); n != 4 {
		t.Errorf("WarmConns opened %d connections, want 4", n)
	}
	c.conns.learned.Store(true)
	before := srv.conns.Load()
	if n := c.WarmConns(context.Background(), 4); n != 0 || srv.conns.Load() != before {
		t.Errorf("WarmConns opened %d on a server that closes every connection", n)
	}
}

// TestWarmConnsOnSetConcurrency: streams added while running ('+', a sweep step) start on
// connections opened for them, not inside their first request, and the running streams keep
// theirs (the warm-up must not take a connection from under them). The streams pause 30 ms
// between requests, as real runs do (1 s by default), so that a running stream is between
// requests when the concurrency rises.
func TestWarmConnsOnSetConcurrency(t *testing.T) {
	g := newGT(t, fixed(script{events: []event{{ms(20), contentChunk(" a")}, {ms(21), finishChunk("stop")}, {ms(21), doneEvent}}}))
	ep := testEndpoint(g.Server, func(e *config.Endpoint) { e.Concurrency, e.Interval = 2, 30*time.Millisecond })
	r := NewRunner([]config.Endpoint{ep}, Options{Warmup: 1})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	var raised time.Time
	before, after := 0, 0
	for s := range counted(r) {
		switch {
		case raised.IsZero():
			if before++; before == 4 {
				raised = time.Now()
				r.SetConcurrency(0, 6)
			}
		case s.Start.After(raised):
			if s.Outcome != sample.OutcomeOK || !s.Reused {
				t.Errorf("request %d after the raise: %s, reused %v (connect %v)", s.Seq, s.Outcome, s.Reused, s.Connect)
			}
			if after++; after == 24 {
				cancel()
			}
		}
	}
	if after < 24 {
		t.Fatalf("%d requests after the raise", after)
	}
	// One per stream; a running stream in the middle of a request when the concurrency rose
	// keeps its connection busy, so the warm-up opens one more beside it (at most 2 here).
	if c := g.conns.Load(); c < 6 || c > 8 {
		t.Errorf("%d connections, want 6 (one per stream) to 8", c)
	}
}
