//go:build race && linux

package kstamp

import "syscall"

// raceAcquire tells the race detector what a read from a socket means: the peer's write
// happened before it. syscall.Read says so for every net.Conn (an acquire of the ioSync that
// every syscall.Write releases); the raw recvmsg of a Conn does not, so without this a test
// whose server reads through a Conn would see races that the same test over a plain
// connection does not. A read of no bytes consumes nothing and returns at once. Race builds
// only.
func raceAcquire(fd uintptr) { _, _ = syscall.Read(int(fd), nil) }
