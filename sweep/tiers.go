package sweep

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"tokscope/config"
	"tokscope/metric"
	"tokscope/sample"
)

// Tiers (--tier NAME=OBJECTIVES): what an objective means, and how a step's requests are
// judged against it. config reads the syntax; this file resolves the metric's name against
// the registry (metric.All) and the bound's unit against the metric's kind.
//
// An objective METRIC.pQ<=B holds when at least Q % of the step's counted requests have the
// metric at most B; METRIC.pQ>=B when at least (100 − Q) % have it at least B: "P25 of output
// speed ≥ 30" is "three requests in four decode at 30 tok/s or faster". Stated as a share, an
// objective is judged exactly as the SLO target is (the same noise guard applies to it), and
// the percentile the views show is the matching nearest rank: for ≥, the value that
// (100 − Q) % of the requests reach, counted from the top.
//
// Counted requests are as for SLOs: every finished background request of the step except those
// tokscope itself cancelled or cut. A request that failed or was truncated never meets an
// objective (it counts as the worst value); an ok request for which the metric cannot exist
// (the output speed of a one-token answer) is left out of that objective, except TTFT, which an
// ok request without a first token misses, as its SLO objective does. A metric with many values
// per request (itl_ms: every gap) is judged over all of them.

// TierSpec is a tier resolved against the registry.
type TierSpec struct {
	Name       string
	Objectives []ObjectiveSpec
}

// ObjectiveSpec is one resolved objective.
type ObjectiveSpec struct {
	config.TierObjective
	ID    metric.ID
	Limit float64 // the bound in the metric's display unit (ms for durations)
}

// Need is the share of counted requests that must meet the bound.
func (o *ObjectiveSpec) Need() float64 {
	if o.AtLeast {
		return 1 - o.Percentile/100
	}
	return o.Percentile / 100
}

// meets reports whether value v meets the bound.
func (o *ObjectiveSpec) meets(v float64) bool {
	if o.AtLeast {
		return v >= o.Limit
	}
	return v <= o.Limit
}

// metricAliases are names an objective may use beyond a registry key and its key without
// the unit suffix: the output speed per request, as AA-AgentPerf calls it.
var metricAliases = map[string]metric.ID{"otps": metric.DecodeTPS}

// metricNames maps every accepted name to its metric, and lists the names for hints: the alias
// first, then each metric's short name and key, those of the compare view first, so that of
// two names as near to a typo the commoner metric is suggested: "ttf" → ttft, not ttfb.
func metricNames() (map[string]metric.ID, []string) {
	by := map[string]metric.ID{}
	var names []string
	add := func(n string, id metric.ID) {
		if _, ok := by[n]; !ok {
			by[n] = id
			names = append(names, n)
		}
	}
	for _, a := range slices.Sorted(maps.Keys(metricAliases)) {
		add(a, metricAliases[a])
	}
	ids := metric.IDs() // those the compare view shows first: the commoner metrics
	shown := func(id metric.ID) int { return min(len(metric.Get(id).Compare), 1) }
	slices.SortStableFunc(ids, func(a, b metric.ID) int { return cmp.Compare(shown(b), shown(a)) })
	for _, id := range ids {
		k := metric.Get(id).Key
		for _, suf := range []string{"_ms", "_tps"} {
			if s, ok := strings.CutSuffix(k, suf); ok {
				add(s, id)
			}
		}
		add(k, id)
	}
	return by, names
}

// ResolveTiers resolves tiers against the registry. An error is a *config.Error at the
// objective's place when it was written in a config file.
func ResolveTiers(tiers []config.Tier) ([]TierSpec, error) {
	if len(tiers) > config.MaxTiers {
		return nil, fmt.Errorf("at most %d tiers, got %d", config.MaxTiers, len(tiers))
	}
	by, names := metricNames()
	seen := map[string]bool{}
	var out []TierSpec
	for _, t := range tiers {
		if seen[t.Name] {
			return nil, fmt.Errorf("tier %s is given twice", t.Name)
		}
		seen[t.Name] = true
		spec := TierSpec{Name: t.Name}
		for _, o := range t.Objectives {
			id, ok := by[o.Metric]
			if !ok {
				hint := "known metrics: otps, ttft, tpot, e2e, itl, decode_tps, … (every key of the JSON summary)"
				if best := config.Closest(o.Metric, names); best != "" {
					hint = fmt.Sprintf("did you mean %q?", best)
				}
				return nil, o.Err("tier %s: unknown metric %q in %q; %s", t.Name, o.Metric, o.Text, hint)
			}
			limit, err := parseBound(metric.Get(id), o.Bound)
			if err != nil {
				return nil, o.Err("tier %s: %q: %v", t.Name, o.Text, err)
			}
			spec.Objectives = append(spec.Objectives, ObjectiveSpec{TierObjective: o, ID: id, Limit: limit})
		}
		out = append(out, spec)
	}
	return out, nil
}

// parseBound reads a bound in the metric's unit: a duration (15s, 500ms) for a time, a number
// for the others (tok/s, tokens, a ratio).
func parseBound(m *metric.Metric, s string) (float64, error) {
	if m.Kind == metric.Duration {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("%s is a time: give a duration such as 500ms or 15s, got %q", m.Key, s)
		}
		return float64(d) / float64(time.Millisecond), nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "tok/s"), 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		what := map[metric.Kind]string{metric.Rate: "tokens per second, e.g. 30", metric.Count: "tokens, e.g. 512", metric.Ratio: "a number"}[m.Kind]
		return 0, fmt.Errorf("%s is %s, got %q", m.Key, what, s)
	}
	return v, nil
}

// tierValues are a step's values for the metrics its tiers name, gathered request by request.
type tierValues struct {
	ids       []metric.ID
	values    map[metric.ID][]float64 // ok requests' values
	failed    int                     // counted requests that failed or were truncated
	noTTFT    int                     // ok requests without a TTFT
	counted   int
	turns     int // the conversations' length (--turns); 0 or 1: no conversations
	lastTurns int // ok requests that were the last turn of their conversation, or sessions completed
	// sessions: with agent sessions as users, the ok turns seen of each session (by its root
	// context) over the whole search, shared by its steps; nil otherwise.
	sessions map[uint64]int
}

func newTierValues(tiers []TierSpec, turns int) *tierValues {
	v := &tierValues{values: map[metric.ID][]float64{}, turns: turns}
	for _, t := range tiers {
		for _, o := range t.Objectives {
			if !slices.Contains(v.ids, o.ID) {
				v.ids = append(v.ids, o.ID)
			}
		}
	}
	return v
}

// add takes one counted request of the step.
func (v *tierValues) add(s *sample.Sample, c metric.Context) {
	v.counted++
	if s.Outcome != sample.OutcomeOK {
		v.failed++
		return
	}
	if v.turns > 1 && s.Turn == v.turns {
		v.lastTurns++
	}
	if st := s.Session; v.sessions != nil && st != nil {
		if v.sessions[st.Root]++; v.sessions[st.Root] == st.SessionTurns {
			v.lastTurns++ // every turn of the session, sub-agents' included, ended ok
			delete(v.sessions, st.Root)
		}
	}
	for _, id := range v.ids {
		n := len(v.values[id])
		metric.Get(id).Read(s, c, metric.AddFunc(func(x float64) { v.values[id] = append(v.values[id], x) }))
		if id == metric.TTFT && len(v.values[id]) == n {
			v.noTTFT++
		}
	}
}

// ObjectiveCount is one objective over one step (or two pooled): N judged values, Good of
// which met the bound, and the percentile (nearest rank, see above; not OK when N is 0 or the
// rank falls on a failed request).
type ObjectiveCount struct {
	N, Good int
	Value   float64
	ValueOK bool
}

// count judges one objective over the step's values.
func (v *tierValues) count(o *ObjectiveSpec) ObjectiveCount {
	vals := v.values[o.ID]
	bad := v.failed
	if o.ID == metric.TTFT {
		bad += v.noTTFT
	}
	c := ObjectiveCount{N: len(vals) + bad}
	for _, x := range vals {
		if o.meets(x) {
			c.Good++
		}
	}
	if c.N == 0 {
		return c
	}
	sorted := slices.Clone(vals)
	slices.Sort(sorted)
	if o.AtLeast { // counted from the top: failures are the lowest
		r := int(math.Ceil((1 - o.Percentile/100) * float64(c.N)))
		r = max(r, 1)
		if r <= len(sorted) {
			c.Value, c.ValueOK = sorted[len(sorted)-r], true
		}
	} else {
		r := max(int(math.Ceil(o.Percentile/100*float64(c.N))), 1)
		if r <= len(sorted) {
			c.Value, c.ValueOK = sorted[r-1], true
		}
	}
	return c
}

// TierJudgement is one tier over one step.
type TierJudgement struct {
	Counts []ObjectiveCount // per objective, in order
	// Judged: the step's load lay in the tier's bracket (or was its re-measure or confirmation),
	// so the step decided something for it; Verdict is then what.
	Judged     bool
	Verdict    Verdict
	Remeasured bool             // pooled with the measurement before
	Pooled     []ObjectiveCount // the counts the verdict rests on when Remeasured (both steps)
	Confirming bool             // the step held the tier's boundary to confirm it
	Binding    int              // index of the objective that decided a miss (-1: none)
}

// share is an objective's met share; ok false without judged values.
func (c ObjectiveCount) share() (float64, bool) {
	if c.N == 0 {
		return 0, false
	}
	return float64(c.Good) / float64(c.N), true
}

// judgeTier decides a tier on counts (pooled when remeasured), objective by objective as the
// SLO target is judged: a share within noise of its need (withinNoise) decides nothing on a
// first measurement; a re-measure decides on the pooled share. The tier is Missed when an
// objective is missed (or has nothing to judge), else Pending when one is within noise, else
// Met. binding is the missed objective furthest below its need (-1: none missed).
func judgeTier(t *TierSpec, counts []ObjectiveCount, remeasured bool) (v Verdict, binding int) {
	v, binding = Met, -1
	worst := math.Inf(-1)
	for i := range t.Objectives {
		need := t.Objectives[i].Need()
		a, ok := counts[i].share()
		met := ok && a >= need && (need > 0 || counts[i].Good > 0)
		switch {
		case !remeasured && ok && withinNoise(a, need, counts[i].N):
			if v == Met {
				v = Pending
			}
		case !met:
			v = Missed
			short := math.Inf(1)
			if ok {
				short = need - a
			}
			if short > worst {
				worst, binding = short, i
			}
		}
	}
	return v, binding
}
