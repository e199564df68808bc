package kstamp

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// pair is a loopback TCP connection: the dialled end and the accepted one, through ln's
// wrapping when wrap is set.
func pair(t *testing.T, wrapAccepted bool) (dialled, accepted net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ln := l
	if wrapAccepted {
		ln = Listen(l)
	}
	dialled, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if accepted, err = ln.Accept(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		dialled.Close()
		accepted.Close()
	})
	return dialled, accepted
}

// holdNetstamp keeps one stamped socket open for the test: Linux turns receive timestamping
// on for the machine lazily (a static key switched by a work queue) when the first socket
// asks for it, and the segments of the first milliseconds may go unstamped.
func holdNetstamp(t *testing.T) {
	_, a := pair(t, true)
	if _, ok := a.(*Conn); !ok {
		t.Fatalf("Listen accepted a %T, want *Conn", a)
	}
	time.Sleep(20 * time.Millisecond)
}

// A stamped connection reads like a TCP one: deadlines time out as net.Errors, the peer's
// close is io.EOF, and the bytes come back whole.
func TestReadsLikeTCP(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kernel receive timestamps are Linux's")
	}
	raw, w := pair(t, false)
	c := Wrap(raw)
	if _, ok := c.(*Conn); !ok {
		t.Fatalf("Wrap(tcp) = %T, want *Conn", c)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	var ne net.Error
	if _, err := c.Read(make([]byte, 8)); !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read past the deadline: %v, want a timeout", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	_, _ = w.Write([]byte("hello"))
	w.Close()
	got, err := io.ReadAll(c)
	if string(got) != "hello" || err != nil {
		t.Errorf("read %q, %v; want hello, nil (EOF)", got, err)
	}
}

// The accepted end of Listen stamps what it reads with its arrival: bytes that waited 50 ms
// in the socket before the read are stamped when they were written (on loopback the kernel
// takes them inside the write), by At and by Since alike, where the reader's clock would say
// 50 ms later.
func TestAtIsArrival(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kernel receive timestamps are Linux's")
	}
	holdNetstamp(t)
	w, r := pair(t, true)
	k, ok := r.(*Conn)
	if !ok {
		t.Fatalf("Listen accepted a %T, want *Conn", r)
	}
	t0 := time.Now()
	before := time.Now()
	if _, err := w.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	time.Sleep(50 * time.Millisecond)
	if _, err := k.Read(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	at, ok := k.At()
	if !ok {
		t.Fatal("the kernel stamped nothing")
	}
	const slack = time.Millisecond // the mapping of the wall clock to the monotonic one
	if at.Before(before.Add(-slack)) || at.After(after.Add(slack)) {
		t.Errorf("stamped %v after the write began (the write took %v): not its arrival", at.Sub(before), after.Sub(before))
	}
	since, ok := k.Since(t0)
	if !ok || (since-at.Sub(t0)).Abs() > 10*time.Microsecond {
		t.Errorf("Since = %v, %v; At says %v after t0", since, ok, at.Sub(t0))
	}
}

// Without a connection, or on one that is not TCP, nothing is stamped and Since is the
// caller's clock.
func TestNoStamp(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if c := Wrap(a); c != a {
		t.Errorf("Wrap(pipe) = %T, want the pipe itself", c)
	}
	var k *Conn
	t0 := time.Now().Add(-time.Second)
	if d, ok := k.Since(t0); ok || d < time.Second {
		t.Errorf("nil Conn: Since = %v, %v; want the caller's clock (≥ 1s), false", d, ok)
	}
	if _, ok := k.At(); ok {
		t.Error("nil Conn: At stamped")
	}
}
