package probe

import (
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"
)

// Kernel receive timestamps. A chunk is stamped at the end of the raw read that delivered
// its last byte (the SSE line's newline: before that the event cannot be decoded). The user
// clock takes that instant when the reading goroutine gets to run after the read, so under
// load (a thousand streams whose chunks arrive together) it adds the wait for a CPU. On
// Linux the connection reads with recvmsg and SO_TIMESTAMPNS (kstamp_linux.go), and the
// kernel says when the bytes of that read arrived: the instant no longer depends on when the
// goroutine ran.
//
// The kernel's stamp is CLOCK_REALTIME and a Sample's instants are offsets on Go's monotonic
// clock (CLOCK_MONOTONIC). The connection keeps the offset between the two, sampled from one
// time.Now() when it is dialled: its wall and monotonic readings are tens of nanoseconds
// apart, and both clocks run at the same (NTP-slewed) rate, so the mapping costs well under
// a microsecond, and one arrival maps to one instant however often it is asked (the first
// response byte and the first chunk, read together, keep their order). Only a step of the
// wall clock (settimeofday, a leap second) moves it: an instant before t0 or after the read
// shows one, the connection samples the offset again and the user clock stamps that read; a
// step too small to show moves that connection's instants by the step.
//
// Where the kernel stamps nothing the user clock stamps, and the Sample says which did
// (Sample.Clock): other systems, a socket that refuses the option, an in-memory transport,
// and HTTP/2, whose frames of every stream are read by one goroutine (the last read of the
// connection is not this stream's).

// The clocks that stamp a request's reads (Sample.Clock).
const (
	ClockKernel = "kernel" // every chunk (and the first response byte) by the kernel's receive time
	ClockUser   = "user"   // time.Now() after the read, for at least one of them
)

// kernelClock turns kernel receive timestamps on for connections dialled from then on; the
// user clock alone when off (the ceiling benchmark compares both).
var kernelClock atomic.Bool

func init() { kernelClock.Store(true) }

// stamped finds the kernel-stamped connection under one the transport handed out (TLS and
// the connection watch wrap it); nil when there is none or the connection speaks HTTP/2.
func stamped(c net.Conn) *kconn {
	for c != nil {
		switch v := c.(type) {
		case *kconn:
			return v
		case *watchedConn:
			c = v.Conn
		case *tls.Conn:
			if v.ConnectionState().NegotiatedProtocol == "h2" {
				return nil
			}
			c = v.NetConn()
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// wallOffset is CLOCK_REALTIME minus the monotonic offset from monoEpoch, in nanoseconds,
// as one time.Now() reads them.
func wallOffset() int64 {
	now := time.Now()
	return now.UnixNano() - int64(now.Sub(monoEpoch))
}

// since is the offset from t0 at which the bytes of k's last read arrived, and whether the
// kernel stamped them; the user clock (now) when k is nil or did not.
func (k *kconn) since(t0 time.Time) (time.Duration, bool) {
	now := time.Now()
	at := now.Sub(t0)
	if k == nil {
		return at, false
	}
	ts := k.arrival()
	if ts == 0 {
		return at, false
	}
	kat := time.Duration(ts-k.wall.Load()) - t0.Sub(monoEpoch)
	if kat < 0 || kat > at {
		k.wall.Store(wallOffset()) // the wall clock stepped
		return at, false
	}
	return kat, true
}

// clockTally counts a request's reads stamped by each clock.
type clockTally struct{ kernel, user int }

func (t *clockTally) count(kernel bool) {
	if kernel {
		t.kernel++
	} else {
		t.user++
	}
}

// clock names the clock of the request: kernel when the kernel stamped every read that
// stamped something, user otherwise (none at all included).
func (t clockTally) clock() string {
	if t.kernel > 0 && t.user == 0 {
		return ClockKernel
	}
	return ClockUser
}
