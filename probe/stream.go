package probe

import (
	"errors"

	openai "github.com/sashabaranov/go-openai"
)

// eventStream yields a response's events one at a time: SSE data payloads, or NDJSON lines
// (apiwire.LineStream, or chat's go-openai stream). io.EOF ends it (the body's end, or chat's
// [DONE]); errUnparsed is go-openai's data: {"error":…} it could not parse (chat only).
type eventStream interface {
	Recv() ([]byte, error)
	Close()
}

var errUnparsed = errors.New("unparsed error event")

// chatStream is go-openai's chat stream (RecvRaw: docs/architecture.md, pitfalls).
type chatStream struct{ s *openai.ChatCompletionStream }

func (c chatStream) Recv() ([]byte, error) {
	raw, err := c.s.RecvRaw()
	if err == nil && raw == nil {
		return nil, errUnparsed
	}
	return raw, err
}

func (c chatStream) Close() { _ = c.s.Close() }
