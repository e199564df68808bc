package probe

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	openai "github.com/sashabaranov/go-openai"
)

// eventStream yields a response's events one at a time: SSE data payloads, or NDJSON lines.
// io.EOF ends it (the body's end, or chat's [DONE]); errUnparsed is go-openai's data:
// {"error":…} it could not parse (chat only).
type eventStream interface {
	recv() ([]byte, error)
	close()
}

var errUnparsed = errors.New("unparsed error event")

// chatStream is go-openai's chat stream (RecvRaw: docs/architecture.md, pitfalls).
type chatStream struct{ s *openai.ChatCompletionStream }

func (c chatStream) recv() ([]byte, error) {
	raw, err := c.s.RecvRaw()
	if err == nil && raw == nil {
		return nil, errUnparsed
	}
	return raw, err
}

func (c chatStream) close() { _ = c.s.Close() }

// lineStream reads the other APIs' streams. The body is the doer's tailBody, which fails a line
// longer than maxSSELine and an answer past responseLimit (bounds.go), as for chat; the line
// buffer here is bounded the same way in case it is used over another body.
//
// SSE: each data: line is one event, stamped when it is read, as go-openai does for chat (the
// LLM APIs send one data line per event); event: names only the next data line; comments, id:
// and retry: lines are skipped; data: [DONE] ends the stream. An event named ping (Anthropic's
// keep-alive) is skipped like a comment. NDJSON: each line that is an object is one event.
type lineStream struct {
	body   io.ReadCloser
	br     *bufio.Reader
	long   []byte // a line longer than br's buffer, assembled
	event  []byte // the current SSE event name
	ndjson bool
	err    error // sticky
}

func newLineStream(body io.ReadCloser, ndjson bool) *lineStream {
	return &lineStream{body: body, br: bufio.NewReaderSize(body, 16<<10), ndjson: ndjson}
}

func (l *lineStream) close() { _ = l.body.Close() }

var (
	dataPrefix  = []byte("data:")
	eventPrefix = []byte("event:")
	doneData    = []byte("[DONE]")
	pingEvent   = []byte("ping")
)

func (l *lineStream) recv() ([]byte, error) {
	for {
		line, err := l.line()
		if err != nil {
			return nil, err
		}
		if l.ndjson {
			// Each event is an object; other lines (an HTML page answering instead) are not events.
			if line = bytes.TrimSpace(line); len(line) > 0 && line[0] == '{' {
				return line, nil
			}
			continue
		}
		switch {
		case len(line) == 0:
			l.event = l.event[:0] // the end of an event
		case bytes.HasPrefix(line, eventPrefix):
			l.event = append(l.event[:0], bytes.TrimSpace(line[len(eventPrefix):])...)
		case bytes.HasPrefix(line, dataPrefix):
			data := line[len(dataPrefix):]
			if len(data) > 0 && data[0] == ' ' {
				data = data[1:]
			}
			if bytes.Equal(data, doneData) {
				l.err = io.EOF
				return nil, io.EOF
			}
			if bytes.Equal(l.event, pingEvent) {
				continue
			}
			return data, nil
		}
	}
}

// line returns the next line without its line ending; a last line without one is a line.
func (l *lineStream) line() ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	l.long = l.long[:0]
	for {
		frag, err := l.br.ReadSlice('\n')
		switch {
		case err == nil:
			if len(l.long) > 0 {
				l.long = append(l.long, frag...)
				frag = l.long
			}
			return trimEOL(frag), nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(l.long)+len(frag) > maxSSELine {
				l.err = &boundError{"an SSE line longer than 4 MiB"}
				return nil, l.err
			}
			l.long = append(l.long, frag...)
			continue
		}
		l.err = err
		if len(l.long)+len(frag) > 0 {
			return trimEOL(append(l.long, frag...)), nil
		}
		return nil, err
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
