//go:build linux

package kstamp

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Conn is a TCP connection that reads with recvmsg and keeps, for its last read that
// returned bytes, the kernel's receive time of the last segment that read consumed
// (SO_TIMESTAMPNS: Linux stamps each incoming segment with CLOCK_REALTIME when the network
// stack takes it, and tcp_recvmsg hands back the stamp of the last segment it read; segments
// that wait in the receive queue are merged keeping the later stamp). Reads are serialised
// by mu: the buffers of one recvmsg live in the connection so that a read allocates nothing.
type Conn struct {
	net.Conn // the *net.TCPConn: writes, deadlines, addresses, Close
	rc       syscall.RawConn
	recvFn   func(fd uintptr) bool // c.recv, bound once

	mu    sync.Mutex
	msg   unix.Msghdr
	iov   unix.Iovec
	oob   [64]byte // one SCM_TIMESTAMPNS needs 32 (amd64); room for one unexpected message
	n     int
	errno syscall.Errno

	// stamp is the CLOCK_REALTIME nanoseconds of the last read's last segment; 0 when that
	// read carried no stamp (a segment that arrived before stamping was on).
	stamp atomic.Int64
	wall  atomic.Int64 // wallOffset() when wrapped (kstamp.go)
}

// Wrap turns on the kernel's receive timestamps on c, a TCP connection, and returns it as a
// *Conn whose reads carry them; c itself when it is not TCP or the socket refuses the option.
func Wrap(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c
	}
	k := &Conn{Conn: tc, rc: rc}
	k.recvFn = k.recv
	k.wall.Store(wallOffset())
	k.msg.Iov = &k.iov
	k.msg.SetIovlen(1)
	k.msg.Control = &k.oob[0]
	return k
}

func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.iov.Base = &p[0]
	c.iov.SetLen(len(p))
	c.n, c.errno = 0, 0
	err := c.rc.Read(c.recvFn)
	c.iov.Base = nil // do not keep the caller's buffer alive
	switch {
	case err != nil: // the poller's: closed, deadline
		var op *net.OpError
		if errors.As(err, &op) {
			op.Op = "read"
		}
		return 0, err
	case c.errno != 0:
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(),
			Err: os.NewSyscallError("read", c.errno)}
	case c.n == 0:
		return 0, io.EOF
	}
	return c.n, nil
}

// recv is one non-blocking recvmsg; false asks the poller to wait for data.
func (c *Conn) recv(fd uintptr) bool {
	for {
		c.msg.SetControllen(len(c.oob))
		n, _, e := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&c.msg)), 0)
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		c.n, c.errno = int(n), e
		if e == 0 && n > 0 {
			c.stamp.Store(rxStamp(c.oob[:c.msg.Controllen]))
			raceAcquire(fd)
		}
		return true
	}
}

// rxStamp finds SCM_TIMESTAMPNS among the control messages of a recvmsg; 0 without one.
func rxStamp(b []byte) int64 {
	hdr := unix.CmsgLen(0)
	for len(b) >= hdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		l := int(h.Len)
		if l < hdr || l > len(b) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && l-hdr >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := (*unix.Timespec)(unsafe.Pointer(&b[hdr]))
			return ts.Nano()
		}
		b = b[min(unix.CmsgSpace(l-hdr), len(b)):]
	}
	return 0
}

// arrival is the CLOCK_REALTIME nanoseconds at which the bytes of c's last read arrived,
// 0 when the kernel did not stamp them.
func (c *Conn) arrival() int64 { return c.stamp.Load() }
