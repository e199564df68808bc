package stats

import (
	"tokscope/config"
	"tokscope/metric"
	"tokscope/sample"
)

// turnState holds an endpoint's figures by turn (--turns) and its cache-hit sums: whole run
// only.
type turnState struct {
	splits         [][]series // by Splits, then SplitMetrics
	byTurn         [][]series // by turn index − 1, then SplitMetrics
	conversations  bool       // a request of a conversation's later turn was seen
	cached, prompt int64
	hits           int // requests that reported both
}

// TurnStats are an endpoint's figures by turn; nil in EndpointStats outside conversations.
type TurnStats struct {
	Splits [][]Dist // by Splits, then SplitMetrics
	ByTurn [][]Dist // by turn index − 1 (at most MaxTurnIndex), then SplitMetrics
}

// Of is the distribution of split i's metric id; Count 0 when id is not split.
func (t *TurnStats) Of(split int, id metric.ID) Dist {
	for j, m := range SplitMetrics {
		if m == id {
			return t.Splits[split][j]
		}
	}
	return Dist{}
}

func newSeriesList(n int) []series {
	l := make([]series, n)
	for i := range l {
		l[i] = newSeries()
	}
	return l
}

func (t *turnState) configure(*config.Endpoint) {}
func (t *turnState) reset()                     { *t = turnState{} }

// take adds a counted request.
func (t *turnState) take(f *figures) {
	if !f.counted {
		return
	}
	s, c := f.s, f.ctx
	if cached, prompt, ok := CacheHit(s); ok {
		t.cached += int64(cached)
		t.prompt += int64(prompt)
		t.hits++
	}
	if s.Turn > 1 {
		t.conversations = true
	}
	if t.splits == nil {
		t.splits = make([][]series, len(Splits))
		for i := range t.splits {
			t.splits[i] = newSeriesList(len(SplitMetrics))
		}
	}
	for i, sp := range Splits {
		if sp.Holds(s) {
			t.read(t.splits[i], s, c)
		}
	}
	k := min(max(s.Turn, 1), MaxTurnIndex)
	for len(t.byTurn) < k {
		t.byTurn = append(t.byTurn, newSeriesList(len(SplitMetrics)))
	}
	t.read(t.byTurn[k-1], s, c)
}

func (t *turnState) read(into []series, s *sample.Sample, c metric.Context) {
	for j, id := range SplitMetrics {
		metric.Get(id).Read(s, c, &into[j])
	}
}

// fill sets st.Turns (conversations only) and st.CacheHitRate (requests that reported both).
func (t *turnState) fill(st *EndpointStats, _ readout) {
	if t.hits > 0 {
		r := float64(t.cached) / float64(t.prompt)
		st.CacheHitRate = &r
	}
	if !t.conversations {
		return
	}
	ts := &TurnStats{Splits: dists(t.splits), ByTurn: dists(t.byTurn)}
	st.Turns = ts
}

func dists(l [][]series) [][]Dist {
	out := make([][]Dist, len(l))
	for i := range l {
		out[i] = make([]Dist, len(l[i]))
		for j := range l[i] {
			d := l[i][j].dist()
			if metric.Get(SplitMetrics[j]).Kind == metric.Count {
				d = d.whole()
			}
			out[i][j] = d
		}
	}
	return out
}

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
var SplitMetrics = []metric.ID{metric.TTFT, metric.PromptTokens}

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
