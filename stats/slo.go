package stats

import (
	"time"

	"tokscope/config"
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

// sloCounts are the SLO tallies of a set of requests.
type sloCounts struct {
	counted, good int
	failed        int                // counted requests that did not succeed
	violations    [numObjectives]int // by index in config.SLOKeys
}

const numObjectives = 4 // len(config.SLOKeys)

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
func judge(slo config.SLO, s *sample.Sample, ttftFrom sample.TTFTFrom) (good bool, violated [numObjectives]bool) {
	good = true
	for i := range numObjectives {
		limit := *objectiveLimit(&slo, i)
		if limit <= 0 {
			continue
		}
		var miss bool
		switch i {
		case 0:
			d, ok := ttftFrom.TTFT(s)
			miss = !ok || d > limit
		case 1:
			d, ok := s.TPOT()
			miss = ok && d > limit
		case 2:
			miss = e2eOf(s) > limit
		case 3:
			d, ok := s.MaxGap()
			miss = ok && d > limit
		}
		if miss {
			violated[i], good = true, false
		}
	}
	return good, violated
}

// e2eOf is t0 → the last chunk (docs/outputs.md's e2e_ms), else t0 → the end of the request.
func e2eOf(s *sample.Sample) time.Duration {
	if n := len(s.Chunks); n > 0 {
		return s.Chunks[n-1].At
	}
	return s.End
}

// addSLO accounts for one finished non-warm-up background request.
func (a *Aggregator) addSLO(e *endpoint, s *sample.Sample) {
	if !e.slo.slo.Set() || !sloCounted(s) {
		return
	}
	var good bool
	var violated [numObjectives]bool
	ok := s.Outcome == sample.OutcomeOK
	if ok {
		good, violated = judge(e.slo.slo, s, a.ttftFrom)
	}
	e.slo.whole.add(ok, good, &violated)
	sec := doneAt(s).Unix()
	sl := &e.slo.slots[int(mod(sec, int64(recentSlots)))]
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

func (a *Aggregator) sloStats(e *endpoint, now time.Time, wall time.Duration) *SLOStats {
	objs := e.slo.slo.Objectives()
	if len(objs) == 0 {
		return nil
	}
	st := &SLOStats{
		Objectives: objs,
		Counted:    e.slo.whole.counted, Good: e.slo.whole.good, Failed: e.slo.whole.failed,
		Violations: make(map[string]int, len(objs)),
		Target:     DefaultBreachTarget,
	}
	if a.sloTarget > 0 {
		st.Target = a.sloTarget
	}
	for i, k := range config.SLOKeys {
		if *objectiveLimit(&e.slo.slo, i) > 0 {
			st.Violations[k] = e.slo.whole.violations[i]
		}
	}
	if st.Counted > 0 {
		st.Attainment = float64(st.Good) / float64(st.Counted)
		if wall > 0 {
			st.GoodputRPS = float64(st.Good) / wall.Seconds()
		}
	}
	var recent sloCounts
	hi := now.Unix()
	for i := range e.slo.slots {
		if sl := &e.slo.slots[i]; sl.used && sl.sec > hi-int64(recentSlots) && sl.sec <= hi {
			recent.counted += sl.counted
			recent.good += sl.good
			for j := range recent.violations {
				recent.violations[j] += sl.violations[j]
			}
		}
	}
	st.RecentCounted, st.RecentGood = recent.counted, recent.good
	if recent.counted > 0 {
		st.RecentAttainment = float64(recent.good) / float64(recent.counted)
		st.Breach = st.RecentAttainment < st.Target
	}
	if st.Breach {
		st.Worst = "errors"
		best := 0
		for i, k := range config.SLOKeys {
			if n := recent.violations[i]; n > best {
				st.Worst, best = k, n
			}
		}
	}
	return st
}

func objectiveLimit(s *config.SLO, i int) *time.Duration {
	return [numObjectives]*time.Duration{&s.TTFT, &s.TPOT, &s.E2E, &s.ITL}[i]
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
	good, _ = judge(slo, s, ttftFrom)
	return true, good
}
