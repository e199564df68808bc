package probe

import (
	"math"
	"sync/atomic"
	"time"

	"tokscope/sample"

	"tokscope/workload"
)

// Live progress of a request in flight: the decoder counts a chunk's tokens when it arrives
// and reports them (Progress) at the first token, then at most every ProgressEvery, so that
// every live figure moves while tokens stream and the probe pays for it once per interval,
// not once per chunk.
//
// Tokens so far, best first:
//  1. the server's own count: usage on token-bearing chunks (vLLM/SGLang continuous usage
//     stats), exact;
//  2. the endpoint's learned tokens per chunk (from its finished requests: their N over their
//     token-bearing chunks) times the chunks so far: free, and right for the server's own
//     tokenizer and chunking (3 tokens per chunk on a speculative decoder);
//  3. before any request of the endpoint has finished: the offline tokenizer on the text
//     that arrived since the last Progress (about 1 µs per token, once per interval), or one
//     token per chunk while the tokenizer is still loading.
//
// 2 and 3 are estimates (Progress.Estimated, shown ≈); the Sample at the end has the exact N
// and consumers replace what they counted live with it.

// progress reports the tokens so far if this token-bearing chunk, arrived at offset at, is
// the first one or comes ProgressEvery after the last report.
func (d *decoder) progress(at time.Duration) {
	if d.onProgress == nil || (d.lastSent >= 0 && at-d.lastSent < d.count.every) {
		return
	}
	d.lastSent = at
	s, p := d.s, &d.prog
	p.Start, p.At = d.t0, at
	p.FirstEvent, p.FirstToken, p.FirstAnswer = s.FirstEvent, s.FirstToken, s.FirstAnswer
	p.Tokens, p.Estimated = d.tokensSoFar()
	p.Chunks, p.MaxTokens = d.tokenChunks, d.maxTokens
	d.onProgress(p)
}

// tokensSoFar is the output tokens received so far and whether that is an estimate.
func (d *decoder) tokensSoFar() (float64, bool) {
	if d.usageOnTokenChunks > 0 && d.cumulative > 0 {
		return float64(d.cumulative), false
	}
	if d.perChunk > 0 {
		return d.perChunk * float64(d.tokenChunks), true
	}
	if d.count.ready() {
		content, reasoning := d.content.String(), d.reasoning.String()
		nc, okC := d.count.estimate(content[d.estC:])
		nr, okR := d.count.estimate(reasoning[d.estR:])
		if okC && okR {
			d.estTokens += nc + nr
			d.estC, d.estR, d.estChunks = len(content), len(reasoning), d.tokenChunks
		}
	}
	// Chunks not (yet) tokenized count one token each.
	return float64(d.estTokens + d.tokenChunks - d.estChunks), true
}

// tokenCounting is how a client's decoders count tokens the server did not: a field of the
// Client (clientSetup.count), so that a test can take the tokenizer away from its own clients.
type tokenCounting struct {
	// estimate counts a text's tokens offline (workload.CountTokens); ok=false when no
	// tokenizer is available: N then falls back to the chunk count.
	estimate func(text string) (n int, ok bool)
	// ready says whether the live count may use the tokenizer now (workload.TokenizerReady): it
	// never waits for its tables (tens of milliseconds inside a stream would delay the reading
	// of its chunks).
	ready func() bool
	// every is the interval between Progress events (sample.ProgressEvery); benchmarks set a
	// negative one to price a Progress on every chunk.
	every time.Duration
}

// withDefaults fills the fields left zero with the product's.
func (c tokenCounting) withDefaults() tokenCounting {
	if c.estimate == nil {
		c.estimate = countTokens
	}
	if c.ready == nil {
		c.ready = workload.TokenizerReady
	}
	if c.every == 0 {
		c.every = sample.ProgressEvery
	}
	return c
}

// WarmTokenizer builds the offline tokenizer's tables now (tens of milliseconds, once per
// process: workload.Tokenizer), so that the first requests' live token counts need not fall
// back to chunk counts. The Runner calls it before it starts.
func WarmTokenizer() { _, _ = workload.Tokenizer() }

// perChunkLearner keeps an endpoint's tokens per chunk from its finished requests.
type perChunkLearner struct{ bits atomic.Uint64 }

// get is the learned tokens per chunk, 0 before any.
func (l *perChunkLearner) get() float64 { return math.Float64frombits(l.bits.Load()) }

// learn takes a finished request's N over its token-bearing chunks into the estimate (a
// moving average, so that a change of chunking shows within a few requests). Only requests
// whose N is the server's usage or the tokenizer's count teach anything.
func (l *perChunkLearner) learn(s *sample.Sample) {
	if s.Outcome != sample.OutcomeOK || s.Tokens <= 0 || (s.Source != sample.SourceUsage && s.Source != sample.SourceEstimate) {
		return
	}
	n := s.TokenChunks()
	if n == 0 {
		return
	}
	r := float64(s.Tokens) / float64(n)
	for {
		old := l.bits.Load()
		v := r
		if old != 0 {
			v = 0.75*math.Float64frombits(old) + 0.25*r
		}
		if l.bits.CompareAndSwap(old, math.Float64bits(v)) {
			return
		}
	}
}
