package probe

import (
	"bytes"
	"fmt"

	"tokscope/apiwire"
)

// Bounds on what is read of one response, so that a hostile or broken endpoint (an endless
// error body, an endless SSE line, a stream that never ends) cannot grow memory until the
// request's timeout, while the endpoints beside it keep measuring.
const (
	// maxErrorBody: what is read of a non-2xx body; its message is classified from that.
	maxErrorBody = 64 << 10
	// maxSSELine: one line of a stream (one SSE event): apiwire.MaxLine, the line reader's.
	maxSSELine = apiwire.MaxLine
	// responseBase and responsePerToken bound a whole streamed answer: responseBase +
	// max_tokens × responsePerToken. A token costs 150–400 bytes of SSE JSON (2–4 KiB with
	// top_logprobs); the base leaves room for a long reasoning phase that some providers keep
	// out of max_tokens, and for a role, usage and error chunk.
	responseBase     = 4 << 20
	responsePerToken = 16 << 10
)

// responseLimit is the byte bound of a streamed answer with this max_tokens (0: the default
// of the config, 256).
func responseLimit(maxTokens int) int64 {
	if maxTokens <= 0 {
		maxTokens = 256
	}
	return responseBase + int64(maxTokens)*responsePerToken
}

// bound counts what is read of a body and stops it at its limits.
type bound struct {
	limit     int64 // bytes of the whole body; 0 = none
	eofAt     bool  // at limit, end the body (io.EOF) instead of failing (error bodies)
	maxTokens int   // for the message
	read      int64
	line      int // bytes since the last '\n'
}

// errBodyLimit is returned in place of io.EOF when an error body was cut at maxErrorBody.
var errBodyLimit = fmt.Errorf("error body longer than %d KiB: read the first %d KiB", maxErrorBody>>10, maxErrorBody>>10)

// take accounts p, just read; it returns how much of p to keep and the error that stops
// the body (nil to go on).
func (b *bound) take(p []byte) (int, error) {
	n := len(p)
	if b.eofAt {
		if b.read+int64(n) >= b.limit {
			n = int(b.limit - b.read)
			b.read = b.limit
			return n, errBodyLimit
		}
		b.read += int64(n)
		return n, nil
	}
	b.read += int64(n)
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		b.line = n - 1 - i
	} else {
		b.line += n
	}
	switch {
	case b.line > maxSSELine:
		return n, apiwire.LineTooLong()
	case b.limit > 0 && b.read > b.limit:
		return n, &apiwire.BoundError{What: fmt.Sprintf("the answer passed %d MiB (the bound for max_tokens %d) without ending",
			b.limit>>20, b.maxTokens)}
	}
	return n, nil
}
