package probe

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
	"tokscope/kstamp"
)

// lateReader serves one chat stream whose second token is written 5 ms after the first;
// the client, in its Delta callback for the first token, waits until the second is written
// and then sleeps readerDelay, so the second waits in the socket while the reading goroutine
// is away, however late a loaded machine runs the server (a server that wrote it after the
// client's sleep, as a fixed sleep allowed, made the read prompt: 152 µs at a load of 7). The rest of the answer is
// written only once the client has the second token, so that no later byte shares its read.
type lateReader struct {
	mu            sync.Mutex
	before, after time.Time     // around the write (and flush) of the second token
	gotSecond     chan struct{} // closed by the client's Delta for the second token
	wroteSecond   chan struct{} // closed by the server once the second token is flushed
}

const readerDelay = 60 * time.Millisecond

func (l *lateReader) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write([]byte(roleChunk() + contentChunk("a")))
	f.Flush()
	time.Sleep(5 * time.Millisecond)
	before := time.Now()
	_, _ = w.Write([]byte(contentChunk("b")))
	f.Flush()
	after := time.Now()
	l.mu.Lock()
	l.before, l.after = before, after
	l.mu.Unlock()
	close(l.wroteSecond)
	select {
	case <-l.gotSecond:
	case <-time.After(5 * time.Second):
	case <-r.Context().Done():
	}
	_, _ = w.Write([]byte(finishChunk("stop") + usageChunk(1, 2, 0) + doneEvent))
}

// secondTokenLag sends one request through a real client to srv (whose handler is l) and
// returns how long after the server's write of the second token the sample says it arrived,
// the write's own duration (the stamp must fall inside it), and the sample; kernel false turns
// the client's kernel clock off.
func secondTokenLag(t *testing.T, l *lateReader, url string, tlsConn, kernel bool) (lag, write time.Duration, s sample.Sample) {
	t.Helper()
	ep := config.Endpoint{Name: "late", BaseURL: url + "/v1", Model: "m", Prompt: "hi", MaxTokens: 2,
		Timeout: 10 * time.Second, Stall: 10 * time.Second, InsecureSkipVerify: tlsConn}
	c := newClientWith(ep, clientSetup{userClock: !kernel})
	defer c.CloseIdleConnections()
	s = ask(context.Background(), c, "hi", Live{Delta: func(d sample.Delta) {
		switch d.Text {
		case "a":
			select {
			case <-l.wroteSecond:
			case <-time.After(5 * time.Second):
			}
			time.Sleep(readerDelay)
		case "b":
			close(l.gotSecond)
		}
	}})
	if s.Outcome != sample.OutcomeOK {
		t.Fatalf("%s %s %s", s.Outcome, s.ErrorKind, s.ErrorMessage)
	}
	var at time.Duration = -1
	n := 0
	for _, ch := range s.Chunks {
		if ch.Content > 0 {
			if n++; n == 2 {
				at = ch.At
			}
		}
	}
	if at < 0 {
		t.Fatalf("no second token among %d chunks", len(s.Chunks))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return s.Start.Add(at).Sub(l.before), l.after.Sub(l.before), s
}

// holdNetstamp keeps one kernel-stamped socket open for the test: Linux turns receive
// timestamping on for the machine lazily (a static key switched by a work queue) when the
// first socket asks for it, and the segments of the first milliseconds may go unstamped.
func holdNetstamp(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c = stampConn(c)
	t.Cleanup(func() {
		c.Close()
		l.Close()
	})
	time.Sleep(20 * time.Millisecond)
}

// TestKernelClockStampsArrival is the proof that the kernel clock works: a chunk that waited
// 55 ms in the socket while the reading goroutine slept is stamped when it arrived (within
// the server's write of it, on loopback the kernel stamps it inside that write), where the
// user clock stamps it when the goroutine came back. Over plain TCP and under TLS (the
// kernel stamps the TCP bytes, TLS reads them through the stamped connection).
func TestKernelClockStampsArrival(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kernel receive timestamps are Linux's") // the fallback test covers the others
	}
	holdNetstamp(t)
	for _, tlsConn := range []bool{false, true} {
		name := map[bool]string{false: "tcp", true: "tls"}[tlsConn]
		t.Run(name, func(t *testing.T) {
			l := &lateReader{gotSecond: make(chan struct{}), wroteSecond: make(chan struct{})}
			srv := httptest.NewUnstartedServer(l)
			if tlsConn {
				srv.StartTLS() // HTTP/1.1: httptest does not offer h2 unless asked
			} else {
				srv.Start()
			}
			defer srv.Close()
			lag, write, s := secondTokenLag(t, l, srv.URL, tlsConn, true)
			t.Logf("second token stamped %v after its write began (the write took %v); clock %s", lag, write, s.Clock)
			if s.Clock != sample.ClockKernel {
				t.Errorf("clock %q, want %q", s.Clock, sample.ClockKernel)
			}
			// The stamp falls inside the write; a millisecond of slack for the mapping.
			if lag < -100*time.Microsecond || lag > write+time.Millisecond {
				t.Errorf("second token stamped %v after its write began (write %v): not its arrival", lag, write)
			}
			if s.Headers < 0 || s.FirstEvent < s.Headers {
				t.Errorf("headers %v, first event %v: out of order", s.Headers, s.FirstEvent)
			}
		})
	}
}

// TestUserClockFallback: with the kernel clock off, and over HTTP/2 (one goroutine reads the
// frames of every stream), the user clock stamps, the sample says so, and it stamps the
// late read late: the scenario of the proof above does delay the reader.
func TestUserClockFallback(t *testing.T) {
	for _, tc := range []struct {
		name       string
		kernel, h2 bool
	}{{"off", false, false}, {"h2", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			l := &lateReader{gotSecond: make(chan struct{}), wroteSecond: make(chan struct{})}
			srv := httptest.NewUnstartedServer(l)
			if tc.h2 {
				srv.EnableHTTP2 = true
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			lag, _, s := secondTokenLag(t, l, srv.URL, tc.h2, tc.kernel)
			if s.Clock != sample.ClockUser {
				t.Errorf("clock %q, want %q", s.Clock, sample.ClockUser)
			}
			if want := readerDelay - 15*time.Millisecond; lag < want {
				t.Errorf("user clock stamped the second token %v after its write, want ≥ %v (the reader slept %v)", lag, want, readerDelay)
			}
		})
	}
}

// A connection that is not TCP (or a transport without connections) is left as it is and
// stamps nothing.
func TestStampConnNotTCP(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if c := stampConn(a); c != a || stamped(c) != nil {
		t.Errorf("stampConn(pipe) = %T, stamped %v", c, stamped(c))
	}
	var k *kstamp.Conn
	if _, ok := k.Since(time.Now()); ok {
		t.Error("no connection, yet a kernel stamp")
	}
	s := ask(context.Background(), memClient(config.Endpoint{Name: "mem", BaseURL: "http://mem/v1", Model: "m", Timeout: time.Minute, Stall: time.Minute},
		memStream{vllmStream(3)}), "hi", Live{})
	if s.Outcome != sample.OutcomeOK || s.Clock != sample.ClockUser {
		t.Errorf("in-memory transport: %s clock %q, want ok and %q", s.Outcome, s.Clock, sample.ClockUser)
	}
}

// BenchmarkStampedRead prices the kernel clock per chunk: one read of a 128-byte chunk from
// a loopback socket that always has data, and its instant. "user" is a plain TCP read and
// time.Since; "kernel" is recvmsg with the receive timestamp, and the mapping of that stamp
// to the monotonic clock (kstamp.go). The difference is the kernel clock's cost per read.
func BenchmarkStampedRead(b *testing.B) {
	for _, clock := range []string{sample.ClockUser, sample.ClockKernel} {
		b.Run(clock, func(b *testing.B) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			go func() {
				w, err := l.Accept()
				if err != nil {
					return
				}
				defer w.Close()
				chunk := make([]byte, 128<<7) // 128 chunks a write
				for {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			}()
			raw, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			c := raw
			if clock == sample.ClockKernel {
				c = stampConn(raw)
			}
			defer c.Close()
			kc, _ := c.(*kstamp.Conn)
			if clock == sample.ClockKernel && kc == nil {
				b.Skip("no kernel receive timestamps here")
			}
			buf := make([]byte, 128)
			t0 := time.Now()
			kernel := 0
			b.ReportAllocs()
			for b.Loop() {
				if _, err := io.ReadFull(c, buf); err != nil {
					b.Fatal(err)
				}
				if _, ok := kc.Since(t0); ok {
					kernel++
				}
			}
			if clock == sample.ClockKernel && kernel == 0 {
				b.Fatal("no read was stamped by the kernel")
			}
		})
	}
}
