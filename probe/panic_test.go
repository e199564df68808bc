package probe

import (
	"context"
	"strings"
	"testing"

	"tokscope/sample"
)

// A panic while handling one response (here from the delta callback, the same call path as
// chunk decoding) fails that request as an "internal" error instead of crashing tokscope.
func TestDoRecoversPanic(t *testing.T) {
	g := newGT(t, fixed(quickStream(3, ms(2))))
	c := NewClient(testEndpoint(g.Server))
	defer c.CloseIdleConnections()
	s := ask(context.Background(), c, "hi", Live{Delta: func(sample.Delta) { panic("decoder bug") }})
	if s.Outcome != sample.OutcomeError || s.ErrorKind != sample.ErrInternal || !strings.Contains(s.ErrorMessage, "decoder bug") {
		t.Fatalf("outcome %s kind %q message %q", s.Outcome, s.ErrorKind, s.ErrorMessage)
	}
	// The client stays usable.
	if s := ask(context.Background(), c, "hi", Live{}); s.Outcome != sample.OutcomeOK {
		t.Fatalf("after the panic: %s %s", s.Outcome, s.ErrorMessage)
	}
}
