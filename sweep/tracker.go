package sweep

import (
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/stats"
)

// settle is how long after a step's end its results wait at least: a request that started
// just before the boundary may still have its Started event on the way.
const settle = 250 * time.Millisecond

// Result is one endpoint's figures over one step.
type Result struct {
	Step        int // 1-based
	Endpoint    string
	Model       string
	Concurrency int
	Duration    time.Duration // the step's window

	// Requests that started during the step: finished (non-warm-up), ok, failed, truncated;
	// Cut: still in flight a grace after the step's end (not in Requests, not errors).
	Requests, OK, Errors, Truncated, Cut int
	TokenSource                          string // as stats.EndpointStats.TokenSource

	// AggregateTPS is the tokens that arrived during the step's window, over every stream of
	// the endpoint, divided by the window's length.
	AggregateTPS float64
	DecodeTPS    stats.Dist // per-stream decode tok/s of the step's ok requests
	TTFT         stats.Dist // ms
}

// ErrorPct is the share of the step's requests that failed (errors, not truncations), in
// percent; false when the step has no request.
func (r *Result) ErrorPct() (float64, bool) {
	if r.Requests == 0 {
		return 0, false
	}
	return 100 * float64(r.Errors) / float64(r.Requests), true
}

// Progress is where a sweep stands.
type Progress struct {
	Step        int           // 0-based running step; -1 before the first, Steps after the last
	Steps       int           // steps in the plan
	Concurrency int           // of the running step (0 outside steps)
	Left        time.Duration // until the running step ends
	Finished    int           // steps whose results are final
	Draining    bool          // the last step has ended; its requests are finishing
	Complete    bool          // every step's results are final
	Interrupted bool          // the run stopped before the sweep completed
}

// Tracker slices a Runner's finished requests by sweep step.
//
// It is NOT safe for concurrent use: the goroutine that reads the Runner's events calls
// every method (it owns a stats.Aggregator per step).
type Tracker struct {
	plan     Plan
	sched    Schedule
	eps      []config.Endpoint
	now      func() time.Time
	inflight []map[uint64]time.Time // per endpoint: background request seq → Started.At
	steps    []*stepData
	final    int // steps whose results are final, a prefix
	closed   bool
	ttftFrom sample.TTFTFrom
	version  uint64
	results  []Result
	resVer   uint64
}

type stepData struct {
	agg    *stats.Aggregator
	tokens []float64 // per endpoint: tokens that arrived during the window
}

// Schedule is where a sweep's steps stand: the start of every step begun so far and the end
// of the last step (zero while it runs). A Sweep is one; a test scripts its own.
type Schedule interface {
	Schedule() (starts []time.Time, end time.Time)
}

// Track returns a Tracker of s over eps (the Runner's endpoints, in order); see NewTracker.
func (s *Sweep) Track(eps []config.Endpoint, now func() time.Time, opts ...stats.Option) *Tracker {
	return NewTracker(s.plan, s, eps, now, opts...)
}

// NewTracker returns a Tracker of the steps of plan as sched runs them, over eps (the Runner's
// endpoints, in order). now is its clock; nil means time.Now. Each step's statistics are built
// with opts, the options of the run's own Aggregator (stats.WithTTFTFrom: the instant the
// steps' TTFT figures are measured to).
func NewTracker(plan Plan, sched Schedule, eps []config.Endpoint, now func() time.Time, opts ...stats.Option) *Tracker {
	if now == nil {
		now = time.Now
	}
	t := &Tracker{plan: plan, sched: sched, eps: eps, now: now, inflight: make([]map[uint64]time.Time, len(eps)), version: 1}
	for i := range t.inflight {
		t.inflight[i] = map[uint64]time.Time{}
	}
	t.steps = make([]*stepData, len(plan.Concurrency))
	for i := range t.steps {
		t.steps[i] = &stepData{agg: stats.New(eps, opts...), tokens: make([]float64, len(eps))}
	}
	t.ttftFrom = stats.New(nil, opts...).TTFTFrom()
	return t
}

// Plan returns the plan of the sweep this Tracker follows.
func (t *Tracker) Plan() Plan { return t.plan }

// Version counts changes of what Results and Progress return (for redraw caches).
func (t *Tracker) Version() uint64 { return t.version }

// Observe accounts for one of the Runner's events and reports whether anything changed.
func (t *Tracker) Observe(ev sample.Event) bool {
	changed := false
	switch ev := ev.(type) {
	case *sample.Started:
		if ev.Stream == 0 && ev.Endpoint.In(len(t.eps)) {
			t.inflight[ev.Endpoint][ev.Seq] = ev.At
		}
	case *sample.Done:
		if ev.Stream != 0 || !ev.Endpoint.In(len(t.eps)) {
			break
		}
		delete(t.inflight[ev.Endpoint], ev.Sample.Seq)
		if t.add(ev) {
			t.version++ // a late request of a final step: the results change
			changed = true
		}
	}
	return t.Refresh() || changed
}

// add attributes one finished request to its step, whose statistics take it in as every
// Aggregator does (Observe). It reports whether a final step changed: the running step's
// figures are not shown until it is final, so they need no redraw (and Results, which
// snapshots every final step's Aggregator, is not recomputed at every sample).
func (t *Tracker) add(ev *sample.Done) bool {
	ep, s := ev.Endpoint, &ev.Sample
	if s.Warmup || s.Stream != 0 {
		return false
	}
	starts, end := t.sched.Schedule()
	if !end.IsZero() && !s.Start.Before(end) {
		return false // started after the last step, in the drain
	}
	i := stepAt(starts, s.Start)
	t.steps[i].agg.Observe(ev)
	touched := i < t.final
	if s.Counted() {
		stats.TokenArrivals(s, func(at time.Time, tokens float64) {
			if k, ok := windowAt(starts, end, at); ok {
				t.steps[k].tokens[ep] += tokens
				touched = touched || k < t.final
			}
		})
	}
	return touched
}

// stepAt is the step in which a request that started at t belongs: the last one begun at or
// before t, the first one if none.
func stepAt(starts []time.Time, t time.Time) int {
	i := 0
	for k, s := range starts {
		if !t.Before(s) {
			i = k
		}
	}
	return i
}

// windowAt is the step whose window [start, next start or end) holds t.
func windowAt(starts []time.Time, end, t time.Time) (int, bool) {
	if len(starts) == 0 || t.Before(starts[0]) || (!end.IsZero() && !t.Before(end)) {
		return 0, false
	}
	return stepAt(starts, t), true
}

// stepEnd is the end of step i's window, if it has ended.
func stepEnd(starts []time.Time, end time.Time, i int) (time.Time, bool) {
	switch {
	case i+1 < len(starts):
		return starts[i+1], true
	case i == len(starts)-1 && !end.IsZero():
		return end, true
	}
	return time.Time{}, false
}

// Refresh makes final, in order, every step whose window has ended at least settle ago and
// whose requests have all finished. Observe calls it; call it on a clock too, since a step
// can end without any event arriving. It reports whether a step became final.
func (t *Tracker) Refresh() bool {
	starts, end := t.sched.Schedule()
	now := t.now()
	changed := false
	for t.final < len(t.steps) {
		e, ok := stepEnd(starts, end, t.final)
		if !ok {
			break
		}
		if !t.closed && (now.Sub(e) < settle || t.startedBefore(e)) {
			break
		}
		t.final++
		changed = true
	}
	if changed {
		t.version++
	}
	return changed
}

// startedBefore reports whether a request started before e is still in flight.
func (t *Tracker) startedBefore(e time.Time) bool {
	for _, m := range t.inflight {
		for _, at := range m {
			if at.Before(e) {
				return true
			}
		}
	}
	return false
}

// Close records that the Runner's events ended: requests still in flight will never report,
// so every step that ended is final; a step cut short stays out of the results.
func (t *Tracker) Close() {
	t.closed = true
	for i := range t.inflight {
		clear(t.inflight[i])
	}
	t.Refresh()
	t.version++
}

// Complete reports whether every step's results are final.
func (t *Tracker) Complete() bool { return t.final == len(t.steps) }

// Progress reports where the sweep stands at the Tracker's clock.
func (t *Tracker) Progress() Progress {
	starts, end := t.sched.Schedule()
	plan := t.plan
	p := Progress{Step: len(starts) - 1, Steps: len(plan.Concurrency), Finished: t.final, Complete: t.Complete()}
	switch {
	case !end.IsZero():
		p.Step = p.Steps
		p.Draining = !p.Complete
	case len(starts) > 0:
		p.Concurrency = plan.Concurrency[p.Step]
		p.Left = max(0, starts[p.Step].Add(plan.StepDuration).Sub(t.now()))
	}
	p.Interrupted = t.closed && !p.Complete
	return p
}

// Report is what a sweep measured, for the exporters.
type Report struct {
	Plan     Plan
	Results  []Result // final steps only, as Results
	TTFTFrom string   // the instant TTFT figures are measured to, e.g. "first-token"
	Complete bool     // false when the run stopped before every step was final
}

// Report returns the results with what the exporters say about them.
func (t *Tracker) Report() Report {
	rs := t.Results()
	return Report{Plan: t.plan, Results: rs, TTFTFrom: t.ttftFrom.Name(), Complete: t.Complete()}
}

// Results returns one row per endpoint of every final step, step by step, endpoints in
// order. The slice is shared until the next change: do not modify it.
func (t *Tracker) Results() []Result {
	if t.resVer == t.version && t.results != nil {
		return t.results
	}
	starts, end := t.sched.Schedule()
	at := t.now()
	out := make([]Result, 0, t.final*len(t.eps))
	for i := 0; i < t.final; i++ {
		e, _ := stepEnd(starts, end, i)
		window := e.Sub(starts[i])
		snap := t.steps[i].agg.Snapshot(at)
		for ep := range t.eps {
			es := &snap.Endpoints[ep]
			r := Result{
				Step: i + 1, Endpoint: es.Name, Model: es.Model,
				Concurrency: t.plan.Concurrency[i], Duration: window,
				Requests: es.Requests, OK: es.OK, Errors: es.Errors, Truncated: es.Truncated, Cut: es.Cut,
				TokenSource: es.TokenSource,
				DecodeTPS:   es.Whole.DecodeTPS, TTFT: es.Whole.TTFT,
			}
			if window > 0 {
				r.AggregateTPS = t.steps[i].tokens[ep] / window.Seconds()
			}
			out = append(out, r)
		}
	}
	t.results, t.resVer = out, t.version
	return out
}
