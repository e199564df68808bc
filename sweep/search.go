package sweep

import (
	"errors"
	"math"
	"time"

	"tokscope/stats"
)

// A capacity search (--find-max concurrency|rate, docs/load.md "Capacity search") finds, per
// endpoint, the highest load at which at least the target share of requests meets every
// objective: steps at load 1, 2, 4, … until one misses the target, then bisection between
// the last load that met it and the first that missed, to the integer (concurrency) or until
// the first miss is within RateResolution of the last met load (rate), never past the limit.
//
// This file holds the decisions, without a clock (search); capacity.go runs them.
//
// Noise guard. A step's attainment is a share of n requests: under the hypothesis that the
// true attainment is the target T, it has the binomial standard error SE = √(T(1−T)/n). A
// first measurement from T − 2·SE to T + SE decides nothing: the load is measured once more,
// and the verdict is the two measurements pooled (good₁+good₂ over n₁+n₂), so one lucky or
// unlucky step alone never moves the bracket. Both measurements are listed. The band is wider
// below the target because a false miss costs more than a false pass: a miss while doubling
// ends the doubling, and the search never tries a load above its first miss, so one unlucky
// step at load 2 (2 of 10 requests caught by a stall of the client machine) would put the
// answer two orders of magnitude low; a false pass near the boundary puts it one bisection
// step high. With the minimum 10 requests, 8 or 9 good are measured again, 10 pass, 7 miss.
//
// Non-monotonic curves: a load is only ever tried between the bracket's ends, so every load
// measured below the answer met the target, and the answer is the highest load that met with
// every load below its bracket having met; a load above the first miss that might meet again
// is never tried (the search answers "how far up does it hold", not "where does it hold").

// What a search varies.
const (
	ByConcurrency = "concurrency"
	ByRate        = "rate"
	// ByUsers varies users in flight, each one of a kind (SearchPlan.Users); it needs tiers.
	ByUsers = "users"
)

// User kinds of a ByUsers search: what one user in flight is. Each is held by one of the
// endpoint's streams for as long as it lasts, so the load is set as the streams are; a kind
// is one more case here and in Search.apply.
const (
	// UsersConversations: a conversation of --turns turns, its turns one after the other.
	UsersConversations = "conversations"
	// UsersSessions: a recorded agent session (--sessions), its turns, tool gaps and
	// sub-agents as recorded, in one lane of the endpoint.
	UsersSessions = "sessions"
)

// Defaults of a search.
const (
	DefaultFindMaxLimit = 256  // --find-max-limit
	DefaultSearchTarget = 0.9  // --slo-target of a search
	MinStepRequests     = 10   // a step lasts until at least this many requests finished in it
	RateResolution      = 0.05 // a rate search ends when first miss ≤ max × (1 + this)
)

// SearchPlan is what a capacity search runs.
type SearchPlan struct {
	By           string  // ByConcurrency or ByRate
	Limit        float64 // the highest load tried
	StepDuration time.Duration
	Grace        time.Duration // a step's requests may finish this long after its end
	Target       float64       // share of requests that must meet every objective
	MinRequests  int           // 0 = MinStepRequests
	// Tiers, when set, replace the single target: one search finds every tier's boundary
	// (tiersearch.go). Users is the user kind of a ByUsers search.
	Tiers []TierSpec
	Users string
	// Accelerators: the GPUs serving each endpoint (--accelerators; 0 = not given), for users
	// per GPU at each tier's boundary. Carried to the report; the search does not use it.
	Accelerators int
}

// Validate reports a plan that cannot run.
func (p SearchPlan) Validate() error {
	switch {
	case p.By != ByConcurrency && p.By != ByRate && p.By != ByUsers:
		return errors.New("sweep: a search varies concurrency, rate or users")
	case p.By == ByUsers && (len(p.Tiers) == 0 || p.Users != UsersConversations && p.Users != UsersSessions):
		return errors.New("sweep: a users search needs tiers and a user kind (conversations)")
	case p.By != ByRate && (p.Limit < 1 || p.Limit > MaxConcurrency || p.Limit != math.Trunc(p.Limit)):
		return errors.New("sweep: the concurrency limit must be a whole number from 1 to 1024")
	case p.By == ByRate && !(p.Limit >= 1 && p.Limit <= MaxSearchRate):
		return errors.New("sweep: the rate limit must be from 1 to 10000")
	case p.StepDuration <= 0:
		return errors.New("sweep: step duration must be positive")
	case !(p.Target > 0 && p.Target <= 1):
		return errors.New("sweep: the target must be a share > 0 and ≤ 1")
	}
	return nil
}

// MaxSearchRate bounds a rate search's limit (as --rate).
const MaxSearchRate = 10000

func (p SearchPlan) minRequests() int {
	if p.MinRequests > 0 {
		return p.MinRequests
	}
	return MinStepRequests
}

// Measurement is one step of one endpoint's search: the load it ran at and what its requests
// (those that started in it) did.
type Measurement struct {
	Load     float64
	Start    time.Time
	Duration time.Duration // the step's window
	// Requests: counted in the SLO figures (finished, not cut); Good: met every objective.
	Requests, Good, Errors, Cut int
	Attainment                  float64 // Good/Requests; 0 without requests
	GoodputRPS, OutputTPS       float64 // as stats: per second of the step's requests' span
	TTFT                        stats.Dist
	// Tiers: the step judged against every tier of a tier search, in order (nil without).
	Tiers []TierJudgement
	// SessionsPerMin: conversations whose last turn finished ok in the step, per minute of
	// its window (a users search of conversations; 0 otherwise).
	SessionsPerMin float64
	// PowerW: the GPUs' mean power over the step's window (--gpu-metrics), from the energy of
	// the scrapes inside it; PowerOK false without one.
	PowerW  float64
	PowerOK bool

	// The verdict on Load after this step: Pending (measured once, within noise: measured
	// again next), Met or Missed. Remeasured marks the second measurement of a load, whose
	// verdict pools both.
	Verdict    Verdict
	Remeasured bool
	Pooled     float64 // the attainment the verdict rests on (pooled when Remeasured)
}

// Verdict is what a step decided about its load.
type Verdict int

const (
	Pending Verdict = iota // within noise of the target: measured again
	Met
	Missed
)

// Outcome is where one endpoint's search stands.
type Outcome struct {
	Steps []Measurement
	// Max is the highest load that met the target (0: none yet, or none at all once Done);
	// AttainmentAtMax its (pooled) attainment. FirstMiss is the lowest load above Max that
	// missed (0: none), AttainmentAtMiss the (pooled) attainment that decided it.
	Max, AttainmentAtMax, FirstMiss, AttainmentAtMiss float64
	Done                                              bool
	// Tiers: every tier's boundary (a tier search), in order; nil otherwise.
	Tiers []TierOutcome
}

// decider is one endpoint's decisions: the single-target search or the tier search.
type decider interface {
	next() (load float64, again bool, ok bool)
	record(m Measurement) Measurement
	outcome() Outcome
	stop()
	left() (steps int, ramping bool)
}

// search is one endpoint's decisions.
type search struct {
	plan    SearchPlan
	out     Outcome
	pending *Measurement // a first measurement within noise, awaiting its second
}

// next is the load of the next step, and whether it re-measures; false once done.
func (s *search) next() (load float64, again bool, ok bool) {
	if s.out.Done {
		return 0, false, false
	}
	if s.pending != nil {
		return s.pending.Load, true, true
	}
	lo, hi := s.out.Max, s.out.FirstMiss
	switch {
	case hi == 0 && lo == 0:
		return 1, false, true
	case hi == 0 && lo >= s.plan.Limit:
	case hi == 0:
		return min(2*lo, s.plan.Limit), false, true
	case lo == 0: // load 1 missed
	case s.plan.By == ByConcurrency && hi-lo > 1:
		return math.Floor((lo + hi) / 2), false, true
	case s.plan.By == ByRate && hi > lo*(1+RateResolution):
		return math.Round((lo+hi)/2*1000) / 1000, false, true
	}
	s.out.Done = true
	return 0, false, false
}

// record takes the step measured at the load next returned and decides on it.
func (s *search) record(m Measurement) Measurement {
	good, n := m.Good, m.Requests
	if s.pending != nil {
		m.Remeasured = true
		good, n = good+s.pending.Good, n+s.pending.Requests
		s.pending = nil
	}
	m.Pooled = 0
	if n > 0 {
		m.Pooled = float64(good) / float64(n)
	}
	t := s.plan.Target
	switch {
	case !m.Remeasured && n > 0 && withinNoise(m.Pooled, t, n):
		m.Verdict = Pending
	case n > 0 && m.Pooled >= t:
		m.Verdict = Met
	default:
		m.Verdict = Missed
	}
	switch m.Verdict {
	case Pending:
		p := m
		s.pending = &p
	case Met:
		s.out.Max, s.out.AttainmentAtMax = m.Load, m.Pooled
	case Missed:
		s.out.FirstMiss, s.out.AttainmentAtMiss = m.Load, m.Pooled
	}
	s.out.Steps = append(s.out.Steps, m)
	return m
}

// stop ends the search with what it has (the endpoint was stopped).
func (s *search) stop() { s.out.Done = true }

// left estimates the steps still to run: the bisections of the bracket, or while doubling the
// doublings up to the limit (ramping: the bisection after them not counted).
func (s *search) left() (steps int, ramping bool) {
	lo, hi := s.out.Max, s.out.FirstMiss
	switch {
	case s.out.Done:
		return 0, false
	case hi == 0:
		return int(math.Ceil(math.Log2(s.plan.Limit / max(lo, 1)))), true
	}
	n := bisectSteps(s.plan.By, lo, hi)
	if s.pending != nil {
		n++
	}
	return n, false
}

// outcome is a copy of where the search stands.
func (s *search) outcome() Outcome {
	o := s.out
	o.Steps = append([]Measurement(nil), s.out.Steps...)
	return o
}

// withinNoise reports whether attainment a of n requests is from two binomial standard
// errors below target t to one above (never when t is 1: a single miss is then a miss).
func withinNoise(a, t float64, n int) bool {
	se := math.Sqrt(t * (1 - t) / float64(n))
	return se > 0 && a >= t-2*se && a <= t+se
}
