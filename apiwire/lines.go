package apiwire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine bounds one line of a stream (one SSE event). The longest real ones are a few KiB (a
// chunk with top_logprobs); a 200 that is not SSE at all reads as one line.
const MaxLine = 4 << 20

// BoundError is a read bound that stopped reading a stream (probe classifies it stream_error).
type BoundError struct{ What string }

func (e *BoundError) Error() string { return e.What + ": stopped reading" }

// LineTooLong is the error of a line past MaxLine, as the line reader and probe's body bound
// report it.
func LineTooLong() *BoundError {
	return &BoundError{fmt.Sprintf("an SSE line longer than %d MiB", MaxLine>>20)}
}

// LineStream reads the streams of the APIs other than chat (chat's is go-openai's, in probe).
// probe hands it a body that already fails a line longer than MaxLine and an answer past its
// byte bound, as for chat; the line buffer here is bounded by MaxLine too, whatever the body.
//
// SSE: each data: line is one event, stamped when it is read, as go-openai does for chat (the
// LLM APIs send one data line per event); event: names only the next data line; comments, id:
// and retry: lines are skipped; data: [DONE] ends the stream. An event named ping (Anthropic's
// keep-alive) is skipped like a comment. NDJSON: each line that is an object is one event.
type LineStream struct {
	body   io.ReadCloser
	br     *bufio.Reader
	long   []byte // a line longer than br's buffer, assembled
	event  []byte // the current SSE event name
	ndjson bool
	err    error // sticky
}

// NewLineStream reads body's events: NDJSON lines when ndjson (API.NDJSON), else SSE.
func NewLineStream(body io.ReadCloser, ndjson bool) *LineStream {
	return &LineStream{body: body, br: bufio.NewReaderSize(body, 16<<10), ndjson: ndjson}
}

// Close closes the body.
func (l *LineStream) Close() { _ = l.body.Close() }

var (
	dataPrefix  = []byte("data:")
	eventPrefix = []byte("event:")
	doneData    = []byte("[DONE]")
	pingEvent   = []byte("ping")
)

// Recv returns the next event's payload, valid until the next call; io.EOF (or the body's own
// error) ends the stream, and so does [DONE] (io.EOF).
func (l *LineStream) Recv() ([]byte, error) {
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
func (l *LineStream) line() ([]byte, error) {
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
			if len(l.long)+len(frag) > MaxLine {
				l.err = LineTooLong()
				return nil, l.err
			}
			l.long = append(l.long, frag...)
			continue
		}
		l.err = err
		switch n := len(l.long) + len(frag); {
		case n > MaxLine: // a last line without its newline is bounded too
			l.err = LineTooLong()
			return nil, l.err
		case n > 0:
			return trimEOL(append(l.long, frag...)), nil
		}
		return nil, err
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
