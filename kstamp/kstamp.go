// Package kstamp gives TCP connections the kernel's receive time of what they read. A
// reader that takes time.Now() after a read adds the wait for a CPU to the instant: under
// load (a thousand streams whose bytes arrive together) that is milliseconds. On Linux a
// Conn reads with recvmsg and SO_TIMESTAMPNS, and the kernel says when the bytes of that
// read arrived, so the instant no longer depends on when the goroutine ran. probe stamps the
// chunks of a response with it; the simulator stamps a request's arrival with it.
//
// The kernel's stamp is CLOCK_REALTIME and Go's instants are monotonic (CLOCK_MONOTONIC).
// A Conn keeps the offset between the two, sampled from one time.Now() when it is wrapped:
// its wall and monotonic readings are tens of nanoseconds apart, and both clocks run at the
// same (NTP-slewed) rate, so the mapping costs well under a microsecond, and one arrival
// maps to one instant however often it is asked. Only a step of the wall clock
// (settimeofday, a leap second) moves it: an instant before t0 or after now shows one, the
// Conn samples the offset again and the caller's clock stamps that read; a step too small
// to show moves that connection's instants by the step.
//
// Elsewhere than Linux, and on a socket that refuses the option, Wrap returns the
// connection as it is, and callers stamp with their own clock.
//
// It uses only the standard library and golang.org/x/sys, and imports no tokscope package.
package kstamp

import (
	"net"
	"time"
)

// epoch anchors the monotonic offsets a Conn keeps as plain integers.
var epoch = time.Now()

// wallOffset is CLOCK_REALTIME minus the monotonic offset from epoch, in nanoseconds, as one
// time.Now() reads them.
func wallOffset() int64 {
	now := time.Now()
	return now.UnixNano() - int64(now.Sub(epoch))
}

// Since is the offset from t0 at which the bytes of c's last read arrived, and whether the
// kernel stamped them; the caller's clock (time.Now() − t0) when c is nil, the kernel
// stamped nothing, or the wall clock stepped.
func (c *Conn) Since(t0 time.Time) (time.Duration, bool) {
	now := time.Now()
	at := now.Sub(t0)
	d, ok := c.ago(now)
	if ok && d <= at {
		return at - d, true
	}
	if ok { // an arrival before t0: the wall clock stepped
		c.wall.Store(wallOffset())
	}
	return at, false
}

// At is when the bytes of c's last read arrived, as an instant of Go's monotonic clock (it
// subtracts like time.Now()'s), and whether the kernel stamped them; false as Since says.
func (c *Conn) At() (time.Time, bool) {
	now := time.Now()
	d, ok := c.ago(now)
	if !ok {
		return time.Time{}, false
	}
	return now.Add(-d), true
}

// ago is how long before now the bytes of c's last read arrived by the kernel's clock; false
// when c is nil, the kernel stamped nothing, or the arrival lies after now (the wall clock
// stepped: the offset is sampled again).
func (c *Conn) ago(now time.Time) (time.Duration, bool) {
	if c == nil {
		return 0, false
	}
	ts := c.arrival()
	if ts == 0 {
		return 0, false
	}
	d := time.Duration(c.wall.Load() + int64(now.Sub(epoch)) - ts)
	if d < 0 {
		c.wall.Store(wallOffset())
		return 0, false
	}
	return d, true
}

// Listen wraps every connection ln accepts (Wrap).
func Listen(ln net.Listener) net.Listener { return listener{ln} }

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return Wrap(c), nil
}
