//go:build !linux

package kstamp

import (
	"net"
	"sync/atomic"
)

// Conn is Linux's kernel-stamped connection; elsewhere none is made and callers stamp every
// read with their own clock.
type Conn struct {
	net.Conn
	wall atomic.Int64
}

func (*Conn) arrival() int64 { return 0 }

// Wrap returns c as it is: only Linux stamps.
func Wrap(c net.Conn) net.Conn { return c }
