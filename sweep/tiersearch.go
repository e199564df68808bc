package sweep

import (
	"math"
)

// A tier search (--find-max with --tier) finds, per endpoint, every tier's boundary in one
// sequence of steps: every step is judged against every tier whose bracket holds its load.
//
//   - Ramp: loads 1, 2, 4, … (never past the limit) while any tier not yet bracketed passes.
//   - Bisection: a tier that missed has a bracket (its last pass, its first miss), bisected to
//     the integer (users, concurrency) or within RateResolution (rate). Bisection (and
//     confirmation) steps alternate with ramp steps, so that the ramp goes on for the tiers
//     that still pass while the others are pinned down; of several such loads the lowest
//     goes first.
//   - Confirmation: a closed bracket's boundary is measured once more before it is reported;
//     should it miss then, it becomes the tier's first miss and the bracket reopens below, at
//     the highest load that met the tier before.
//   - Noise guard, per tier: a step within noise of an objective's need decides nothing for
//     that tier: the load is measured again next and the tier's verdict pools both.
//
// Like the single-target search, a tier is only ever judged at loads inside its bracket, so
// every load below its boundary that was tried met it.

// TierOutcome is where one tier's search stands on one endpoint.
type TierOutcome struct {
	Name string
	// Boundary is the highest load that met the tier (and was confirmed, once Done); 0: none.
	// FirstMiss is the lowest load above it that missed (0: none up to the limit); Binding the
	// objective that decided that miss ("" without one).
	Boundary, FirstMiss float64
	Binding             string
	// AtBoundary is the step that confirmed the boundary (its throughput is the boundary's);
	// nil before.
	AtBoundary *Measurement
	Confirmed  bool
	Done       bool
}

// Answer is the tier's boundary once known: the confirmed boundary, or 0 when even load 1
// missed; false while it is not known (searching, or a search stopped before confirming).
func (t *TierOutcome) Answer() (float64, bool) {
	switch {
	case t.Confirmed:
		return t.Boundary, true
	case t.Boundary == 0 && t.FirstMiss == 1 && t.Done:
		return 0, true
	}
	return 0, false
}

// tierState is one tier's decisions.
type tierState struct {
	lo, hi     float64
	binding    string
	passes     []float64    // loads that met the tier, in order measured
	pending    *pendingTier // a first measurement within noise
	confirming bool         // the bracket is closed: the next step at lo confirms it
	confirmed  bool
	done       bool
	at         *Measurement
}

type pendingTier struct {
	load   float64
	counts []ObjectiveCount
}

// tierSearch is one endpoint's decisions over every tier.
type tierSearch struct {
	plan     SearchPlan
	tiers    []TierSpec
	st       []tierState
	steps    []Measurement
	lastRamp bool // the last step was a ramp step
	done     bool
}

func newTierSearch(plan SearchPlan) *tierSearch {
	return &tierSearch{plan: plan, tiers: plan.Tiers, st: make([]tierState, len(plan.Tiers))}
}

// closed reports whether a bracket needs no more bisection.
func (s *tierSearch) closed(t *tierState) bool {
	switch {
	case t.hi == 0:
		return t.lo >= s.plan.Limit
	case s.plan.By == ByRate:
		return t.lo == 0 || t.hi <= t.lo*(1+RateResolution)
	}
	return t.hi-t.lo <= 1
}

// mid is a bracket's bisection load.
func (s *tierSearch) mid(t *tierState) float64 {
	if s.plan.By == ByRate {
		return math.Round((t.lo+t.hi)/2*1000) / 1000
	}
	return math.Floor((t.lo + t.hi) / 2)
}

// settle marks tiers whose search is over: a bracket closed with nothing to confirm (load 1
// missed), or a confirmed boundary.
func (s *tierSearch) settle() {
	all := true
	for i := range s.st {
		t := &s.st[i]
		if !t.done && t.pending == nil && s.closed(t) {
			switch {
			case t.lo == 0:
				t.done = true
			case t.confirmed:
				t.done = true
			default:
				t.confirming = true
			}
		}
		all = all && t.done
	}
	s.done = all
}

// next is the load of the next step; false once every tier is done.
func (s *tierSearch) next() (load float64, again bool, ok bool) {
	s.settle()
	if s.done {
		return 0, false, false
	}
	ramp, other := math.Inf(1), math.Inf(1)
	for i := range s.st {
		t := &s.st[i]
		switch {
		case t.done:
		case t.pending != nil:
			return t.pending.load, true, true // the noise guard's re-measure comes first
		case t.confirming:
			other = min(other, t.lo)
		case t.hi == 0:
			ramp = min(ramp, max(1, min(2*t.lo, s.plan.Limit)))
		default:
			other = min(other, s.mid(t))
		}
	}
	switch {
	case math.IsInf(ramp, 1), !math.IsInf(other, 1) && s.lastRamp:
		return other, false, true // bisection and confirmation alternate with the ramp
	}
	return ramp, false, true
}

// record takes the step measured at the load next returned (its tier judgements' counts
// filled) and decides on it for every tier whose bracket holds it.
func (s *tierSearch) record(m Measurement) Measurement {
	s.lastRamp = false
	for i := range s.st {
		t := &s.st[i]
		j := &m.Tiers[i]
		j.Binding = -1
		switch {
		case t.done:
			continue
		case t.pending != nil && t.pending.load != m.Load:
			continue // another tier's re-measure: this one waits for its own
		case t.pending != nil:
			j.Remeasured = true
			j.Confirming = t.confirming
			pooled := poolCounts(t.pending.counts, j.Counts)
			j.Pooled = pooled
			t.pending = nil
			j.Verdict, j.Binding = judgeTier(&s.tiers[i], pooled, true)
		case t.confirming && m.Load == t.lo, !t.confirming && m.Load > t.lo && (t.hi == 0 || m.Load < t.hi):
			j.Confirming = t.confirming
			if t.hi == 0 && !t.confirming {
				s.lastRamp = true
			}
			j.Verdict, j.Binding = judgeTier(&s.tiers[i], j.Counts, false)
		default:
			continue
		}
		j.Judged = true
		s.apply(i, &m)
	}
	s.steps = append(s.steps, m)
	s.settle()
	return m
}

// apply moves tier i's bracket by its judgement of step m.
func (s *tierSearch) apply(i int, m *Measurement) {
	t, j := &s.st[i], &m.Tiers[i]
	switch j.Verdict {
	case Pending:
		t.pending = &pendingTier{load: m.Load, counts: j.Counts}
	case Met:
		if t.confirming {
			t.confirmed = true
			c := *m
			t.at = &c
			return
		}
		t.lo = m.Load
		t.passes = append(t.passes, m.Load)
	case Missed:
		t.hi = m.Load
		t.binding = ""
		if j.Binding >= 0 {
			t.binding = s.tiers[i].Objectives[j.Binding].Text
		}
		if t.confirming { // the boundary did not hold: reopen below it
			t.confirming = false
			t.lo = 0
			for _, p := range t.passes {
				if p < m.Load {
					t.lo = max(t.lo, p)
				}
			}
		}
	}
}

// poolCounts adds two measurements' counts objective by objective (the percentile value is
// the later one's: pooling keeps no values).
func poolCounts(a, b []ObjectiveCount) []ObjectiveCount {
	out := make([]ObjectiveCount, len(b))
	for i := range b {
		out[i] = b[i]
		if i < len(a) {
			out[i].N += a[i].N
			out[i].Good += a[i].Good
		}
	}
	return out
}

// stop ends the search with what it has (the endpoint was stopped).
func (s *tierSearch) stop() {
	s.done = true
	for i := range s.st {
		s.st[i].done = true
	}
}

// outcome is a copy of where the search stands.
func (s *tierSearch) outcome() Outcome {
	o := Outcome{Done: s.done, Steps: append([]Measurement(nil), s.steps...)}
	for i := range s.st {
		t := &s.st[i]
		to := TierOutcome{Name: s.tiers[i].Name, FirstMiss: t.hi, Binding: t.binding, Confirmed: t.confirmed, Done: t.done}
		if t.confirmed {
			to.Boundary, to.AtBoundary = t.lo, t.at
		} else {
			to.Boundary = t.lo // not yet confirmed: a candidate
		}
		o.Tiers = append(o.Tiers, to)
	}
	return o
}

// left estimates the steps still to run: the bisection steps of every bracket and a
// confirmation per boundary, each counted once for tiers that share a bracket (one step serves
// them all), and, while tiers ramp, the doublings up to the limit (ramping true: an upper bound
// of the ramp, the bisection after it not counted).
func (s *tierSearch) left() (steps int, ramping bool) {
	ramp := 0
	seen := map[[2]float64]bool{}
	again := map[float64]bool{} // loads to measure again, one step each
	for i := range s.st {
		t := &s.st[i]
		switch {
		case t.done:
			continue
		case t.pending != nil && !again[t.pending.load]:
			again[t.pending.load] = true
			steps++
		}
		if t.hi == 0 && t.lo < s.plan.Limit {
			ramping = true
			ramp = max(ramp, int(math.Ceil(math.Log2(s.plan.Limit/max(t.lo, 1)))))
			continue
		}
		if key := [2]float64{t.lo, t.hi}; !seen[key] {
			seen[key] = true
			if !s.closed(t) {
				steps += bisectSteps(s.plan.By, t.lo, t.hi)
			}
			if !t.confirmed {
				steps++ // its confirmation
			}
		}
	}
	return steps + ramp, ramping
}

// bisectSteps is how many bisections close a bracket [lo, hi].
func bisectSteps(by string, lo, hi float64) int {
	if by == ByRate {
		if lo <= 0 {
			return 1
		}
		return max(0, int(math.Ceil(math.Log2((hi-lo)/(lo*RateResolution)))))
	}
	return max(0, int(math.Ceil(math.Log2(hi-lo))))
}
