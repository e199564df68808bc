package metric

import "tokscope/sample"

// Conversations (--turns): the per-request metrics a conversation's turns change are split by
// turn. A Split is a group of requests by their place in their conversation; the summaries
// give, per split, the distribution of each metric of SplitMetrics (the JSON's "turns":
// {"first": {"ttft_ms": …, "prompt_tokens": …}, "later": {…}}), and the report the same
// metrics by turn index. Adding a metric to SplitMetrics adds it to every one of them.

// Split is one group of requests by turn.
type Split struct {
	Key   string // JSON key, CSV column infix and Prometheus label value: "first"
	Label string // "first turn"
	Holds func(s *sample.Sample) bool
}

// Splits are the turn groups, in output order: the first turn of a conversation (and every
// request outside conversations), and its later turns.
var Splits = []Split{
	{Key: "first", Label: "first turn", Holds: func(s *sample.Sample) bool { return s.Turn <= 1 }},
	{Key: "later", Label: "later turns", Holds: func(s *sample.Sample) bool { return s.Turn > 1 }},
}

// SplitMetrics are the metrics split by turn.
var SplitMetrics = []ID{TTFT, PromptTokens}

// MaxTurnIndex bounds the turn indexes kept apart (the report's by-turn figures): turns
// beyond it count with it.
const MaxTurnIndex = 64

// CacheHit is a request's cached and prompt tokens when its server reported both (the
// cache-hit rate is the sum of cached over the sum of prompt tokens of such requests).
func CacheHit(s *sample.Sample) (cached, prompt int, ok bool) {
	if s.CachedTokens < 0 || s.PromptTokens <= 0 {
		return 0, 0, false
	}
	return s.CachedTokens, s.PromptTokens, true
}

// CacheHitProm is the Prometheus gauge of the cache-hit rate.
const CacheHitProm = "tokscope_prefix_cache_hit_ratio"
