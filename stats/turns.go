package stats

import (
	"tokscope/config"
	"tokscope/metric"
	"tokscope/sample"
)

// turnState holds an endpoint's figures by turn (--turns) and its cache-hit sums: whole run
// only.
type turnState struct {
	splits         [][]series // by metric.Splits, then metric.SplitMetrics
	byTurn         [][]series // by turn index − 1, then metric.SplitMetrics
	conversations  bool       // a request of a conversation's later turn was seen
	cached, prompt int64
	hits           int // requests that reported both
}

// TurnStats are an endpoint's figures by turn; nil in EndpointStats outside conversations.
type TurnStats struct {
	Splits [][]Dist // by metric.Splits, then metric.SplitMetrics
	ByTurn [][]Dist // by turn index − 1 (at most metric.MaxTurnIndex), then metric.SplitMetrics
}

// Of is the distribution of split i's metric id; Count 0 when id is not split.
func (t *TurnStats) Of(split int, id metric.ID) Dist {
	for j, m := range metric.SplitMetrics {
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
	if cached, prompt, ok := metric.CacheHit(s); ok {
		t.cached += int64(cached)
		t.prompt += int64(prompt)
		t.hits++
	}
	if s.Turn > 1 {
		t.conversations = true
	}
	if t.splits == nil {
		t.splits = make([][]series, len(metric.Splits))
		for i := range t.splits {
			t.splits[i] = newSeriesList(len(metric.SplitMetrics))
		}
	}
	for i, sp := range metric.Splits {
		if sp.Holds(s) {
			t.read(t.splits[i], s, c)
		}
	}
	k := min(max(s.Turn, 1), metric.MaxTurnIndex)
	for len(t.byTurn) < k {
		t.byTurn = append(t.byTurn, newSeriesList(len(metric.SplitMetrics)))
	}
	t.read(t.byTurn[k-1], s, c)
}

func (t *turnState) read(into []series, s *sample.Sample, c metric.Context) {
	for j, id := range metric.SplitMetrics {
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
			if metric.Get(metric.SplitMetrics[j]).Kind == metric.Count {
				d = d.whole()
			}
			out[i][j] = d
		}
	}
	return out
}
