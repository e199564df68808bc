//go:build !linux

package probe

import (
	"context"
	"net"
	"sync/atomic"
)

// kconn is Linux's kernel-stamped connection; elsewhere none is made and the user clock
// stamps every read.
type kconn struct {
	net.Conn
	wall atomic.Int64
}

func (*kconn) arrival() int64 { return 0 }

func stampConn(c net.Conn) net.Conn { return c }

func stampDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return dial
}
