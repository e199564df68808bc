package promexport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// ListenAddr resolves the user's --metrics address. A bare port ("9464") or a port with an
// empty host (":9464") binds loopback only: an exporter reachable from the network is
// something the user asks for by naming a host ("0.0.0.0:9464", "[::]:9464", "myhost:9464").
func ListenAddr(addr string) (string, error) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return "", errors.New("metrics address is empty (want a port like 9464 or host:port)")
	}
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("metrics address %q: %w", addr, err)
	}
	if port == "" {
		return "", fmt.Errorf("metrics address %q has no port", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Listen serves h on addr (see ListenAddr) until ctx is done, then shuts the server down. It
// returns once the socket is bound, with the address actually bound (port 0 picks a free
// port), or with the bind error. Serving runs on its own goroutine.
func Listen(ctx context.Context, addr string, h http.Handler) (string, error) {
	addr, err := ListenAddr(addr)
	if err != nil {
		return "", err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("metrics: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(shutdown) != nil {
			srv.Close()
		}
	}()
	// Serve returns ErrServerClosed after Shutdown; any other error ends the exporter quietly,
	// since tokscope must not write to a terminal the TUI owns.
	go srv.Serve(ln) //nolint:errcheck
	return ln.Addr().String(), nil
}
