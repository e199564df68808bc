// Package sampletest builds probe.Samples by hand for the tests of the packages that consume
// them (stats, sweep, promexport, ui, export, report, …): one builder, so that a new Sample
// field or a changed default is written once. It is test support: only _test.go files import
// it (TestImportLayers checks that no product package does).
package sampletest

import (
	"time"

	"tokscope/sample"
)

// Builder is a Sample under construction; its methods set a part and return the Builder.
type Builder struct{ s sample.Sample }

// OK starts a finished ok request (finish_reason stop) of endpoint and model, number seq,
// started at start, as the probe reports one on a reused connection: no DNS, connect or TLS
// phase, no rate-limit headers (-1), its token count from usage. Every instant is Absent until
// set; Chunk and Chunks set the token instants, EndAfter or EndAt the end.
func OK(endpoint, model string, seq uint64, start time.Time) *Builder {
	return &Builder{s: sample.Sample{
		Endpoint: endpoint, Model: model, Seq: seq, Start: start,
		DNS: sample.Absent, Connect: sample.Absent, TLS: sample.Absent, Reused: true,
		FirstEvent: sample.Absent, FirstToken: sample.Absent, FirstAnswer: sample.Absent,
		LastToken: sample.Absent, End: sample.Absent,
		Source: sample.SourceUsage, Outcome: sample.OutcomeOK, FinishReason: "stop",
		RateLimitRemainingRequests: -1, RateLimitRemainingTokens: -1,
	}}
}

// Err starts a failed request: kind (ErrorKind), the HTTP status (0 for none) and message, no
// event and no token. Set its Times and its End.
func Err(endpoint, model string, seq uint64, start time.Time, kind string, status int, msg string) *Builder {
	b := OK(endpoint, model, seq, start)
	b.s.Reused = false
	b.s.Outcome, b.s.FinishReason, b.s.Source = sample.OutcomeError, "", ""
	b.s.ErrorKind, b.s.HTTPStatus, b.s.ErrorMessage = kind, status, msg
	return b
}

// Times sets when the request was written and its response headers arrived, after t0.
func (b *Builder) Times(wrote, headers time.Duration) *Builder {
	b.s.Wrote, b.s.Headers = wrote, headers
	return b
}

// Role adds a role-only chunk (no token) at at: the first event, before the first token.
func (b *Builder) Role(at time.Duration) *Builder {
	b.s.Chunks = append(b.s.Chunks, sample.Chunk{At: at})
	b.event(at)
	return b
}

// Chunk adds a token-bearing chunk at at with content and reasoning bytes of text: the first
// one sets the first token (and the first event, if none came before), the first with content
// the first answer; each is the last token so far.
func (b *Builder) Chunk(at time.Duration, content, reasoning int) *Builder {
	b.s.Chunks = append(b.s.Chunks, sample.Chunk{At: at, Content: content, Reasoning: reasoning})
	b.event(at)
	if b.s.FirstToken == sample.Absent {
		b.s.FirstToken = at
	}
	if content > 0 && b.s.FirstAnswer == sample.Absent {
		b.s.FirstAnswer = at
	}
	b.s.LastToken = at
	return b
}

// Chunks adds n chunks of content bytes of text each, the first at first, then every gap.
func (b *Builder) Chunks(n int, first, gap time.Duration, content int) *Builder {
	for i := range n {
		b.Chunk(first+time.Duration(i)*gap, content, 0)
	}
	return b
}

// ChunksAt adds a chunk of content bytes of text at each of the instants at.
func (b *Builder) ChunksAt(content int, at ...time.Duration) *Builder {
	for _, d := range at {
		b.Chunk(d, content, 0)
	}
	return b
}

// Stream is the usual streamed answer, its first token at ttft: the request written at
// ttft/4, its headers at ttft/2, a role-only chunk 1 ms before the first token, then n chunks
// of 4 bytes of content every gap from ttft; tokens output tokens counted by usage; the end
// 1 ms after the last chunk. A test that needs another shape spells it with the parts.
func (b *Builder) Stream(ttft time.Duration, n int, gap time.Duration, tokens int) *Builder {
	return b.Times(ttft/4, ttft/2).Role(ttft-time.Millisecond).Chunks(n, ttft, gap, 4).
		Tokens(tokens, sample.SourceUsage).EndAfter(time.Millisecond)
}

func (b *Builder) event(at time.Duration) {
	if b.s.FirstEvent == sample.Absent {
		b.s.FirstEvent = at
	}
}

// Tokens sets N, the output tokens, and where the count came from.
func (b *Builder) Tokens(n int, src sample.TokenSource) *Builder {
	b.s.Tokens, b.s.Source = n, src
	return b
}

// Prompt sets the prompt's tokens and how many of them the server's cache held (-1: not
// reported).
func (b *Builder) Prompt(tokens, cached int) *Builder {
	b.s.PromptTokens, b.s.CachedTokens = tokens, cached
	return b
}

// NewConn makes the request the one that opened its connection: its DNS, connect and TLS
// phases (sample.Absent for a phase that did not happen, as TLS over http).
func (b *Builder) NewConn(dns, connect, tls time.Duration) *Builder {
	b.s.DNS, b.s.Connect, b.s.TLS, b.s.Reused = dns, connect, tls, false
	return b
}

// EndAfter ends the request d after its last token (after its headers when it had none).
func (b *Builder) EndAfter(d time.Duration) *Builder {
	last := b.s.LastToken
	if last == sample.Absent {
		last = b.s.Headers
	}
	b.s.End = last + d
	return b
}

// EndAt ends the request at d after t0.
func (b *Builder) EndAt(d time.Duration) *Builder {
	b.s.End = d
	return b
}

// With changes anything else of the Sample (the prompt side, the cache mode, a connection
// that was not reused, rate-limit headers…).
func (b *Builder) With(f func(*sample.Sample)) *Builder {
	f(&b.s)
	return b
}

// Sample is the Sample built so far (a copy: the Builder may go on).
func (b *Builder) Sample() sample.Sample {
	s := b.s
	s.Chunks = append([]sample.Chunk(nil), b.s.Chunks...)
	return s
}

// Ptr is Sample's address, for the consumers that take a *sample.Sample.
func (b *Builder) Ptr() *sample.Sample {
	s := b.Sample()
	return &s
}
