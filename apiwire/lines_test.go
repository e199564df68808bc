package apiwire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// events reads every event of body as a LineStream does, and the error that ended it.
func events(body string, ndjson bool) ([]string, error) {
	l := NewLineStream(io.NopCloser(strings.NewReader(body)), ndjson)
	defer l.Close()
	var out []string
	for {
		raw, err := l.Recv()
		if err != nil {
			return out, err
		}
		out = append(out, string(raw))
	}
}

// The SSE framing the APIs use: each data: line one event (the space after the colon
// optional), CRLF endings, comments, id: and retry: skipped; an event named ping is no event,
// and the name holds only until the blank line that ends its event; [DONE] ends the stream.
// NDJSON: each object line an event, anything else (an HTML page answering) none, a last line
// without its newline still one.
func TestLineStreamFraming(t *testing.T) {
	t.Parallel()
	sse := ": keep-alive\r\nid: 1\r\nretry: 10\r\nevent: message_start\r\ndata: {\"a\":1}\r\n\r\n" +
		"event: ping\ndata: {\"type\":\"ping\"}\n\n" +
		"data:{\"b\":2}\n\n" +
		"data: [DONE]\n\ndata: {\"after\":true}\n\n"
	got, err := events(sse, false)
	if want := []string{`{"a":1}`, `{"b":2}`}; !errors.Is(err, io.EOF) || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("SSE: %q, %v; want %q and io.EOF", got, err, want)
	}

	nd := "{\"message\":{\"content\":\"a\"}}\n<html>oops</html>\n\n  {\"done\":true}"
	got, err = events(nd, true)
	if want := []string{`{"message":{"content":"a"}}`, `{"done":true}`}; !errors.Is(err, io.EOF) || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("NDJSON: %q, %v; want %q and io.EOF", got, err, want)
	}
}

// A line longer than the reader's buffer is assembled whole; one past MaxLine stops the stream
// with a BoundError, which stays: the next Recv says the same.
func TestLineStreamBound(t *testing.T) {
	t.Parallel()
	long := `{"t":"` + strings.Repeat("x", 100<<10) + `"}`
	got, _ := events("data: "+long+"\n\n", false)
	if len(got) != 1 || got[0] != long {
		t.Fatalf("a 100 KiB line read as %d events", len(got))
	}

	l := NewLineStream(io.NopCloser(io.MultiReader(strings.NewReader("data: "), bytes.NewReader(bytes.Repeat([]byte("y"), MaxLine+1)))), false)
	for range 2 {
		var bound *BoundError
		if _, err := l.Recv(); !errors.As(err, &bound) || !strings.Contains(err.Error(), "longer than 4 MiB") {
			t.Fatalf("a line past MaxLine: %v, want the line bound", err)
		}
	}
}
