package probe

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"tokscope/apiwire"
)

// Connections. Two habits of real servers make kept-alive connections fail or cost:
//
//   - A connection the server has just closed can still sit in the pool when the next request
//     starts (llama.cpp's llama-server advertises "Keep-Alive: timeout=5, max=100" but closes
//     every connection after a streamed response). Go's transport does not resend a POST whose
//     bytes were written, so the request would fail as "connect". The doer sends such a
//     request again, once, on a new connection (Sample.ConnRetry); its instants are those of
//     the attempt that got the answer.
//   - A server that closes every connection right after its response makes every request
//     pay connect (+TLS) anyway. connWatch learns it from the connections themselves; the
//     Client then opens a new connection per request there (no dead connection, no retry),
//     and the endpoint's Status says so (connect time is in every TTFT on that server).

// closesEvidence is how many connections in a row the server must close right after their
// only response before the endpoint counts as closing every connection.
const closesEvidence = 3

// closeRightAfter is how soon after the last bytes of a connection its close must come to
// count as "closed after the response" rather than an idle timeout.
const closeRightAfter = 250 * time.Millisecond

// monoEpoch anchors the monotonic instants connections keep as plain integers. Set once when
// the package is initialised and never written after: read-only state, not a switch.
var monoEpoch = time.Now()

func monoNow() int64 { return int64(time.Since(monoEpoch)) }

// connWatch learns whether an endpoint's server closes every kept-alive connection right
// after its response. It is fed by the connections it dialled (watchedConn); safe for
// concurrent use.
type connWatch struct {
	mu      sync.Mutex
	streak  int // connections closed by the server right after their only response, in a row
	learned atomic.Bool
}

// closesEvery reports whether the server was seen to close every connection.
func (w *connWatch) closesEvery() bool { return w != nil && w.learned.Load() }

// serverClosed accounts a connection the server closed after it carried uses requests;
// rightAfter says the close came right after the connection's last bytes.
func (w *connWatch) serverClosed(uses int32, rightAfter bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case uses >= 2:
		w.streak = 0 // the server does keep connections alive
	case uses == 1 && rightAfter:
		w.streak++
		if w.streak >= closesEvidence {
			w.learned.Store(true)
		}
	}
}

// answered counts a chat answer on c; a second one shows that the server keeps connections.
func (c *watchedConn) answered() {
	if c.uses.Add(1) >= 2 {
		c.watch.mu.Lock()
		c.watch.streak = 0
		c.watch.mu.Unlock()
	}
}

// dialer wraps dial so that every connection reports to w how it ended.
func (w *connWatch) dialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		wc := &watchedConn{Conn: c, watch: w}
		wc.lastData.Store(monoNow())
		return wc, nil
	}
}

// watchedConn is a pooled connection that tells its connWatch when the server closed it.
type watchedConn struct {
	net.Conn
	watch    *connWatch
	uses     atomic.Int32 // chat requests answered on this connection (a response byte arrived)
	lastData atomic.Int64 // monoNow of the last read that returned bytes (or of the dial)
	closing  atomic.Bool  // we closed it: whatever Read says next is not the server's doing
	reported atomic.Bool
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.lastData.Store(monoNow())
	}
	if err != nil && !c.closing.Load() && c.reported.CompareAndSwap(false, true) {
		rightAfter := time.Duration(monoNow()-c.lastData.Load()) <= closeRightAfter
		c.watch.serverClosed(c.uses.Load(), rightAfter)
	}
	return n, err
}

func (c *watchedConn) Close() error {
	c.closing.Store(true)
	return c.Conn.Close()
}

// watched finds the watchedConn under a connection the transport handed out (TLS wraps it).
func watched(c net.Conn) *watchedConn {
	for c != nil {
		switch v := c.(type) {
		case *watchedConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// WarmConns opens n connections to the endpoint and leaves them idle in the pool, so that n
// streams starting together each find one: n concurrent GET <base_url>/models, each holding
// its connection until all n have their answer's headers (or ctx ends), then reading at most
// 1 MiB of the body and putting the connection back. Any answer (even a 404) warms a
// connection. It returns how many new connections were opened. On a server that closes every
// connection it does nothing: connections there are not kept.
func (c *Client) WarmConns(ctx context.Context, n int) int {
	if n <= 0 || c.conns.closesEvery() {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, warmConnLimit)
	defer cancel()
	url := c.wire.ModelsURL(c.ep.BaseURL)
	var opened atomic.Int64
	var answered sync.WaitGroup
	answered.Add(n)
	all := make(chan struct{})
	go func() {
		answered.Wait()
		close(all)
	}()
	var done sync.WaitGroup
	for range n {
		done.Add(1)
		go func() {
			defer done.Done()
			c.warmOne(ctx, url, &opened, answered.Done, all)
		}()
	}
	done.Wait()
	return int(opened.Load())
}

// warmConnLimit bounds a connection warm-up: a server that does not answer GET /models in
// time leaves its streams to connect inside their first request, as without the warm-up.
const warmConnLimit = 10 * time.Second

// maxWarmBody bounds what a warm-up reads of a model list (a body not read to its end takes
// its connection down with it; a hosted API's list can be hundreds of KiB).
const maxWarmBody = 1 << 20

// warmOne sends one warm-up GET, signals that it was answered (or failed), holds the
// connection until all are answered, then drains and closes the body.
func (c *Client) warmOne(ctx context.Context, url string, opened *atomic.Int64, answered func(), all <-chan struct{}) {
	once := sync.OnceFunc(answered)
	defer once()
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if !info.Reused {
			opened.Add(1)
		}
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, url, nil)
	if err != nil {
		return
	}
	for k, v := range c.ep.HeaderValues() {
		req.Header.Set(k, v)
	}
	apiwire.SetAuth(req.Header, c.ep, c.wire)
	resp, err := c.transport.RoundTrip(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	once()
	select {
	case <-all:
	case <-ctx.Done():
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxWarmBody))
}
