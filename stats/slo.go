package stats

import (
	"time"

	"tokscope/config"
	"tokscope/metric"
	"tokscope/sample"
)

// DefaultBreachTarget is the attainment below which the recent window is a breach when no
// --slo-target is given: one request in ten missing its objectives.
const DefaultBreachTarget = 0.9

// SLO requests: every finished, non-warm-up background request counts — ok, truncated and
// failed alike — except those cancelled by tokscope itself (the end of a run, a pause, Ctrl-C),
// which say nothing about the server. A request is good when it succeeded (ok) and met every
// objective; errors and truncations are never good. A value exactly at its objective meets it.
//
// Per objective, a request without the figure meets it when the figure cannot exist for it:
// TPOT needs two tokens and ITL two token-bearing chunks. A successful request that never
// delivered a first token misses a TTFT objective.

// objective is one row of the SLO table: the objective's key (config.SLOKeys; its limit is
// config.SLO.Limit) and a request's figure it bounds. A request without the figure (ok false)
// misses it only when missWithout says so. The table is walked in its order, which is
// config.SLOKeys' order: the JSON's violations, the CSV's columns and the table's "missed" list
// follow it.
type objective struct {
	key         string
	figure      func(f *figures) (time.Duration, bool)
	missWithout bool
}

// objectives is the SLO table. A successful request that never delivered a first token
// misses a TTFT objective; TPOT needs two tokens and ITL two token-bearing chunks, so a request
// without them meets those. E2E is t0 → the last chunk (docs/outputs.md's e2e_ms), else t0 →
// the end of the request: every request has one.
var objectives = [...]objective{
	{"ttft", func(f *figures) (time.Duration, bool) { return f.TTFT, f.HasTTFT }, true},
	{"tpot", func(f *figures) (time.Duration, bool) { return f.s.TPOT() }, false},
	{"e2e", func(f *figures) (time.Duration, bool) {
		if f.HasE2E {
			return f.E2E, true
		}
		return f.s.End, true
	}, false},
	{"itl", func(f *figures) (time.Duration, bool) { return f.s.MaxGap() }, false},
}

const numObjectives = len(objectives)

// sloCounts are the SLO tallies of a set of requests.
type sloCounts struct {
	counted, good int
	failed        int                // counted requests that did not succeed
	violations    [numObjectives]int // by index in objectives
}

// sloSlot is one second of the recent window.
type sloSlot struct {
	sec  int64
	used bool
	sloCounts
}

// sloState is one endpoint's SLO statistics.
type sloState struct {
	slo   config.SLO
	whole sloCounts
	slots [recentSlots]sloSlot
}

func (s *sloState) configure(ep *config.Endpoint) { s.slo = ep.SLO }

func (s *sloState) reset() {
	s.whole = sloCounts{}
	clear(s.slots[:])
}

func (c *sloCounts) add(ok, good bool, violated *[numObjectives]bool) {
	c.counted++
	if good {
		c.good++
	}
	if !ok {
		c.failed++
	}
	for i, v := range violated {
		if v {
			c.violations[i]++
		}
	}
}

// sloCounted reports whether a finished non-warm-up request enters the SLO figures.
func sloCounted(s *sample.Sample) bool {
	return !(s.Outcome == sample.OutcomeError && s.ErrorKind == sample.ErrCanceled)
}

// judge says whether a request met every objective of slo, and which it missed. Only ok
// requests are judged; the caller counts the others as not good.
func judge(slo *config.SLO, f *figures) (good bool, violated [numObjectives]bool) {
	good = true
	for i := range objectives {
		o := &objectives[i]
		limit := slo.Limit(o.key)
		if limit <= 0 {
			continue
		}
		d, ok := o.figure(f)
		if miss := !ok && o.missWithout || ok && d > limit; miss {
			violated[i], good = true, false
		}
	}
	return good, violated
}

// take accounts for one finished non-warm-up background request.
func (s *sloState) take(f *figures) {
	if !f.finished || !s.slo.Set() || !sloCounted(f.s) {
		return
	}
	var good bool
	var violated [numObjectives]bool
	ok := f.s.Outcome == sample.OutcomeOK
	if ok {
		good, violated = judge(&s.slo, f)
	}
	s.whole.add(ok, good, &violated)
	sec := f.done.Unix()
	sl := &s.slots[int(mod(sec, int64(recentSlots)))]
	switch {
	case !sl.used || sl.sec < sec:
		*sl = sloSlot{sec: sec, used: true}
		sl.add(ok, good, &violated)
	case sl.sec == sec:
		sl.add(ok, good, &violated)
	}
}

// SLOStats are an endpoint's SLO figures; nil in EndpointStats when it has no objectives.
type SLOStats struct {
	Objectives []config.Objective
	// Counted requests (see the rules above), Good ones, Failed ones (errors and
	// truncations, never good), and per objective key the ok requests that missed it (a
	// request may miss several).
	Counted, Good, Failed int
	Violations            map[string]int
	// Attainment is Good/Counted, GoodputRPS good requests per second of the run's wall
	// time; both meaningful only when Counted > 0.
	Attainment float64
	GoodputRPS float64

	// The recent window (RecentWindow): its attainment, and whether it is a breach (below
	// the target: --slo-target, else DefaultBreachTarget). Worst names the objective most
	// requests of the window missed, "errors" when failures alone caused the breach.
	RecentCounted, RecentGood int
	RecentAttainment          float64
	Breach                    bool
	Worst                     string
	Target                    float64
}

func (s *sloState) fill(out *EndpointStats, r readout) {
	objs := s.slo.Objectives()
	if len(objs) == 0 {
		return
	}
	st := &SLOStats{
		Objectives: objs,
		Counted:    s.whole.counted, Good: s.whole.good, Failed: s.whole.failed,
		Violations: make(map[string]int, len(objs)),
		Target:     DefaultBreachTarget,
	}
	if r.sloTarget > 0 {
		st.Target = r.sloTarget
	}
	for i := range objectives {
		if s.slo.Limit(objectives[i].key) > 0 {
			st.Violations[objectives[i].key] = s.whole.violations[i]
		}
	}
	if st.Counted > 0 {
		st.Attainment = float64(st.Good) / float64(st.Counted)
		if r.span > 0 {
			st.GoodputRPS = float64(st.Good) / r.span.Seconds()
		}
	}
	recent := s.recent(r.now)
	st.RecentCounted, st.RecentGood = recent.counted, recent.good
	if recent.counted > 0 {
		st.RecentAttainment = float64(recent.good) / float64(recent.counted)
		st.Breach = st.RecentAttainment < st.Target
	}
	if st.Breach {
		st.Worst = "errors"
		best := 0
		for i := range objectives {
			if n := recent.violations[i]; n > best {
				st.Worst, best = objectives[i].key, n
			}
		}
	}
	out.SLO = st
}

// recent is the tallies of the recent window ending with now's second.
func (s *sloState) recent(now time.Time) sloCounts {
	var recent sloCounts
	hi := now.Unix()
	for i := range s.slots {
		if sl := &s.slots[i]; sl.used && sl.sec > hi-int64(recentSlots) && sl.sec <= hi {
			recent.counted += sl.counted
			recent.good += sl.good
			for j := range recent.violations {
				recent.violations[j] += sl.violations[j]
			}
		}
	}
	return recent
}

// MeetsSLO applies the SLO rules above to one finished non-warm-up request: whether it counts
// towards slo's attainment, and whether it is good (for the report's attainment over time).
func MeetsSLO(slo config.SLO, s *sample.Sample, ttftFrom sample.TTFTFrom) (counted, good bool) {
	if !slo.Set() || !sloCounted(s) {
		return false, false
	}
	if s.Outcome != sample.OutcomeOK {
		return true, false
	}
	var f figures
	f.derive(s, metric.Context{TTFTFrom: ttftFrom})
	good, _ = judge(&slo, &f)
	return true, good
}
