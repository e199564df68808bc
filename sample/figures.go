package sample

import (
	"iter"
	"slices"
	"time"
)

// The metrics of docs/metrics.md, derived from a Sample's instants. Each returns ok=false when the
// metric is undefined for this request (never NaN, never 0 as a stand-in).

func present(d time.Duration) bool { return d >= 0 }

// TTFB is headers − t0.
func (s *Sample) TTFB() (time.Duration, bool) { return s.Headers, present(s.Headers) }

// TTFT is first_token − t0; reasoning counts as a token.
func (s *Sample) TTFT() (time.Duration, bool) { return s.FirstToken, present(s.FirstToken) }

// TTFA is first_answer − t0.
func (s *Sample) TTFA() (time.Duration, bool) { return s.FirstAnswer, present(s.FirstAnswer) }

// TTFEvent is first_event − t0 (the first SSE chunk of any kind, often role-only).
func (s *Sample) TTFEvent() (time.Duration, bool) { return s.FirstEvent, present(s.FirstEvent) }

// DecodeSpan is last_token − first_token.
func (s *Sample) DecodeSpan() (time.Duration, bool) {
	if !present(s.FirstToken) || !present(s.LastToken) {
		return 0, false
	}
	return s.LastToken - s.FirstToken, true
}

// DecodeRate is (N − 1) / (last_token − first_token) in tokens per second; undefined when
// N < 2 or the span is 0.
func (s *Sample) DecodeRate() (float64, bool) {
	span, ok := s.DecodeSpan()
	if !ok || s.Tokens < 2 || span <= 0 {
		return 0, false
	}
	return float64(s.Tokens-1) / span.Seconds(), true
}

// TPOT is (last_token − first_token) / (N − 1).
func (s *Sample) TPOT() (time.Duration, bool) {
	span, ok := s.DecodeSpan()
	if !ok || s.Tokens < 2 || span <= 0 {
		return 0, false
	}
	return span / time.Duration(s.Tokens-1), true
}

// E2ERate is N / (last_token − t0) in tokens per second.
func (s *Sample) E2ERate() (float64, bool) {
	if !present(s.LastToken) || s.LastToken <= 0 || s.Tokens < 1 {
		return 0, false
	}
	return float64(s.Tokens) / s.LastToken.Seconds(), true
}

// E2E is t0 → the last chunk of any kind (docs/outputs.md e2e_ms); ok=false without a chunk.
func (s *Sample) E2E() (time.Duration, bool) {
	if len(s.Chunks) == 0 {
		return 0, false
	}
	return s.Chunks[len(s.Chunks)-1].At, true
}

// PrefillRate is (prompt tokens − cached tokens) / TTFT in tokens per second, from the
// server's usage: a lower bound of its prefill speed, since TTFT also holds the network, the
// queue and the first decode step. A cached_tokens the server did not report counts as 0.
// Undefined without usage prompt tokens, without a first token, or when the whole prompt
// was cached.
func (s *Sample) PrefillRate() (float64, bool) {
	ttft, ok := s.TTFT()
	uncached := s.PromptTokens - max(s.CachedTokens, 0)
	if !ok || ttft <= 0 || s.PromptTokens <= 0 || uncached <= 0 {
		return 0, false
	}
	return float64(uncached) / ttft.Seconds(), true
}

// ReachedTarget reports whether a request with an output target (--output-tokens) got that
// many tokens; ok=false when it had no target.
func (s *Sample) ReachedTarget() (reached, ok bool) {
	if s.OutputTarget <= 0 {
		return false, false
	}
	return s.Tokens >= s.OutputTarget, true
}

// TokenChunks counts the chunks that carried content or reasoning.
func (s *Sample) TokenChunks() int {
	n := 0
	for _, c := range s.Chunks {
		if c.TokenBearing() {
			n++
		}
	}
	return n
}

// TokensPerChunk is N / token-bearing chunks; > 1.2 means multi-token chunks.
func (s *Sample) TokensPerChunk() (float64, bool) {
	n := s.TokenChunks()
	if n == 0 || s.Tokens == 0 {
		return 0, false
	}
	return float64(s.Tokens) / float64(n), true
}

// Gaps yields the gaps between consecutive token-bearing chunks, in arrival order (the
// chunk ITL of docs/metrics.md), without allocating: the one walk every ITL figure uses.
func (s *Sample) Gaps() iter.Seq[time.Duration] {
	return func(yield func(time.Duration) bool) {
		prev := Absent
		for _, c := range s.Chunks {
			if !c.TokenBearing() {
				continue
			}
			if prev >= 0 && !yield(c.At-prev) {
				return
			}
			prev = c.At
		}
	}
}

// ITLs returns the gaps between consecutive token-bearing chunks, in arrival order.
func (s *Sample) ITLs() []time.Duration { return slices.Collect(s.Gaps()) }

// MaxGap is the request's longest gap between token-bearing chunks (its max stall);
// ok=false with fewer than two.
func (s *Sample) MaxGap() (time.Duration, bool) {
	longest := Absent
	for gap := range s.Gaps() {
		longest = max(longest, gap)
	}
	return longest, longest >= 0
}

// ITLSummary is the per-request inter-chunk latency: p50, p99 and the longest gap (stall).
type ITLSummary struct {
	P50, P99, Max time.Duration
	Count         int
}

// ITL summarises ITLs(); ok=false with fewer than one gap. Quantiles are nearest-rank.
func (s *Sample) ITL() (ITLSummary, bool) {
	gaps := s.ITLs()
	if len(gaps) == 0 {
		return ITLSummary{}, false
	}
	slices.Sort(gaps)
	rank := func(q float64) time.Duration {
		i := int(q*float64(len(gaps))+0.999999) - 1
		return gaps[max(0, min(i, len(gaps)-1))]
	}
	return ITLSummary{P50: rank(0.50), P99: rank(0.99), Max: gaps[len(gaps)-1], Count: len(gaps)}, true
}

// Phases splits the decode into its reasoning and answer phases for reasoning models.
type Phases struct {
	ReasoningTokens, AnswerTokens int
	ReasoningRate, AnswerRate     float64 // tokens/s of each phase; 0 with ok flags false
	ReasoningOK, AnswerOK         bool
}

// PhaseSplit reports the reasoning and answer phases; ok=false when the model did not reason.
// Reasoning runs from first_token to the last reasoning chunk; the answer from first_answer to
// last_token. Each phase rate is (tokens − 1) / span like DecodeRate.
func (s *Sample) PhaseSplit() (Phases, bool) {
	if s.ReasoningTokens <= 0 {
		return Phases{}, false
	}
	var p Phases
	p.ReasoningTokens = min(s.ReasoningTokens, s.Tokens)
	p.AnswerTokens = s.Tokens - p.ReasoningTokens
	lastReasoning := Absent
	for _, c := range s.Chunks {
		if c.Reasoning > 0 {
			lastReasoning = c.At
		}
	}
	if present(s.FirstToken) && lastReasoning > s.FirstToken && p.ReasoningTokens >= 2 {
		p.ReasoningRate = float64(p.ReasoningTokens-1) / (lastReasoning - s.FirstToken).Seconds()
		p.ReasoningOK = true
	}
	if present(s.FirstAnswer) && present(s.LastToken) && s.LastToken > s.FirstAnswer && p.AnswerTokens >= 2 {
		p.AnswerRate = float64(p.AnswerTokens-1) / (s.LastToken - s.FirstAnswer).Seconds()
		p.AnswerOK = true
	}
	return p, true
}

// Counted reports whether the sample enters latency and speed statistics: finished ok, not a
// warm-up and not an interactive Stream/Race request. Errors and truncations count only in
// error rates.
func (s *Sample) Counted() bool { return !s.Warmup && s.Stream == 0 && s.Outcome == OutcomeOK }

// Failed reports whether the sample is a probe request (not a warm-up, not an interactive
// Stream/Race request) that did not finish ok: one of them makes a headless run exit 1. A
// request cut by the end of the run did not fail.
func (s *Sample) Failed() bool {
	return !s.Warmup && s.Stream == 0 && !s.Cut && s.Outcome != OutcomeOK
}
