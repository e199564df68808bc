package probe

import (
	"context"
	"crypto/tls"
	"net"

	"tokscope/sample"

	"tokscope/kstamp"
)

// Kernel receive timestamps (package kstamp). A chunk is stamped at the end of the raw read
// that delivered its last byte (the SSE line's newline: before that the event cannot be
// decoded). The user clock takes that instant when the reading goroutine gets to run after
// the read, so under load (a thousand streams whose chunks arrive together) it adds the wait
// for a CPU; the kernel's receive time does not depend on when the goroutine ran.
//
// Where the kernel stamps nothing the user clock stamps, and the Sample says which did
// (Sample.Clock): other systems, a socket that refuses the option, an in-memory transport,
// and HTTP/2, whose frames of every stream are read by one goroutine (the last read of the
// connection is not this stream's).

// stamped finds the kernel-stamped connection under one the transport handed out (TLS and
// the connection watch wrap it); nil when there is none or the connection speaks HTTP/2.
func stamped(c net.Conn) *kstamp.Conn {
	for c != nil {
		switch v := c.(type) {
		case *kstamp.Conn:
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

// stampConn turns on kernel receive timestamps on c (kstamp.Wrap).
func stampConn(c net.Conn) net.Conn { return kstamp.Wrap(c) }

// stampDial dials through dial and, with kernel (the product's clients; the user clock alone
// when false, as the ceiling benchmark compares), turns on kernel receive timestamps on what
// it returns.
func stampDial(dial func(ctx context.Context, network, addr string) (net.Conn, error), kernel bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if !kernel {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return stampConn(c), nil
	}
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
		return sample.ClockKernel
	}
	return sample.ClockUser
}
