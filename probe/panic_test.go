package probe

import (
	"context"
	"strings"
	"testing"
)

// A panic while handling one response (here from the delta callback, the same call path as
// chunk decoding) fails that request as an "internal" error instead of crashing tokscope.
func TestDoRecoversPanic(t *testing.T) {
	g := newGT(t, fixed(quickStream(3, ms(2))))
	c := NewClient(testEndpoint(g.Server))
	defer c.CloseIdleConnections()
	s := ask(context.Background(), c, "hi", Live{Delta: func(Delta) { panic("decoder bug") }})
	if s.Outcome != OutcomeError || s.ErrorKind != ErrInternal || !strings.Contains(s.ErrorMessage, "decoder bug") {
		t.Fatalf("outcome %s kind %q message %q", s.Outcome, s.ErrorKind, s.ErrorMessage)
	}
	// The client stays usable.
	if s := ask(context.Background(), c, "hi", Live{}); s.Outcome != OutcomeOK {
		t.Fatalf("after the panic: %s %s", s.Outcome, s.ErrorMessage)
	}
}
