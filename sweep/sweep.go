// Package sweep steps every endpoint's concurrency through a list of levels, one fixed-length
// step each, and measures every step on its own: aggregate tok/s, per-stream decode tok/s,
// TTFT and errors against concurrency.
//
// A Sweep is the schedule: Run (its own goroutine) waits for the warm-ups, sets the
// concurrency at each step boundary, and pauses every endpoint after the last step so that
// the requests in flight finish and report. Each step's requests have Plan.Grace after the
// step's end to finish (while the next step runs: steps follow each other without a pause);
// then those still running are cut (probe.Runner.CutBefore) and count as cut in their step. A Tracker, fed by the one goroutine that reads
// the Runner's events, slices the finished requests by step and builds the Results.
//
// Attribution, the rule every figure follows:
//   - a request belongs to the step in which it started (its t0), wherever it ends; a step's
//     results wait until every request started before its end has finished;
//   - aggregate tok/s of a step is the tokens that arrived during the step's window divided
//     by its length — docs/metrics.md's aggregate tok/s (tokens attributed at arrival) over the
//     window, whichever step's request carried them;
//   - requests finished before the first step began (an endpoint whose warm-ups ended before
//     the others') belong to the first step; warm-ups and interactive requests to none.
//
// It imports config, sample, metric, stats, servermetrics and fanout; never bubbletea, lipgloss or go-openai.
package sweep

import (
	"context"
	"errors"
	"sync"
	"time"

	"tokscope/sample"
)

// DefaultStepDuration is the length of a step when the plan gives none.
const DefaultStepDuration = 30 * time.Second

// MaxConcurrency bounds one step: a typo should not open thousands of streams.
const MaxConcurrency = 1024

// Plan is what a sweep runs: one step per concurrency level, in the order given.
type Plan struct {
	Concurrency  []int
	StepDuration time.Duration
	// Grace is how long after its step's end a request may go on before it is cut (--grace);
	// 0 cuts at the step's end.
	Grace time.Duration
}

// Validate reports a plan that cannot run.
func (p Plan) Validate() error {
	if len(p.Concurrency) == 0 {
		return errors.New("sweep: no steps")
	}
	for _, n := range p.Concurrency {
		if n < 1 || n > MaxConcurrency {
			return errors.New("sweep: concurrency must be from 1 to 1024")
		}
	}
	if p.StepDuration <= 0 {
		return errors.New("sweep: step duration must be positive")
	}
	return nil
}

// Controller is what a sweep drives: the probe.Runner.
type Controller interface {
	SetConcurrency(ep sample.EndpointIndex, n int)
	SetPaused(ep sample.EndpointIndex, paused bool)
	CutBefore(t time.Time) int // cut the requests in flight that started before t
}

// Sweep is one sweep's schedule. Run and Observe may be called from any goroutine; Schedule
// is safe to call concurrently with them.
type Sweep struct {
	plan      Plan
	endpoints int

	warmMu   sync.Mutex
	warmLeft int
	warmed   chan struct{} // closed when every warm-up has finished

	mu     sync.Mutex
	starts []time.Time // start of each step begun, in order
	end    time.Time   // end of the last step; zero until then
}

// New prepares a sweep over endpoints endpoints, each of which runs warmup warm-up requests
// (probe.Options.Warmup) before the first step can begin.
func New(plan Plan, endpoints, warmup int) *Sweep {
	s := &Sweep{plan: plan, endpoints: endpoints, warmed: make(chan struct{})}
	s.warmLeft = endpoints * max(warmup, 0)
	if s.warmLeft == 0 {
		close(s.warmed)
	}
	return s
}

// Plan returns the sweep's plan.
func (s *Sweep) Plan() Plan { return s.plan }

// Observe takes the run's events (a fanout.Observer, on the run's loop): it counts finished
// warm-ups, so that the first step begins when every endpoint's are over (their connection
// set-up is then out of the way, and the first step's window is not spent waiting for them).
// It changes nothing a view shows: it reports false.
func (s *Sweep) Observe(ev sample.Event) bool {
	if d, ok := ev.(*sample.Done); ok && d.Sample.Warmup {
		s.warmedOne()
	}
	return false
}

// warmedOne counts one finished warm-up.
func (s *Sweep) warmedOne() {
	s.warmMu.Lock()
	defer s.warmMu.Unlock()
	if s.warmLeft > 0 {
		s.warmLeft--
		if s.warmLeft == 0 {
			close(s.warmed)
		}
	}
}

// Run waits for the warm-ups, then for each step sets every endpoint's concurrency and waits
// the step's length; after the last step it pauses every endpoint, so that the requests in
// flight finish and report while no new one starts. A grace after each step's end (the next
// step's start, or the end of the last), it cuts that step's requests still in flight. It
// returns ctx's error if ctx ends first, nil once the last step's grace is over.
func (s *Sweep) Run(ctx context.Context, ctl Controller) error {
	select {
	case <-s.warmed:
	case <-ctx.Done():
		return ctx.Err()
	}
	var cuts cutQueue
	for i, n := range s.plan.Concurrency {
		at := s.beginNow()
		if i > 0 {
			cuts.add(at, s.plan.Grace) // the previous step ended now
		}
		for ep := range sample.EndpointIndex(s.endpoints) {
			ctl.SetConcurrency(ep, n)
		}
		if err := cuts.runUntil(ctx, ctl, at.Add(s.plan.StepDuration)); err != nil {
			return err
		}
	}
	end := s.finishNow()
	for ep := range sample.EndpointIndex(s.endpoints) {
		ctl.SetPaused(ep, true)
	}
	cuts.add(end, s.plan.Grace)
	return cuts.runUntil(ctx, ctl, time.Time{})
}

// cutQueue holds the step ends whose grace is running, oldest first.
type cutQueue []struct{ end, at time.Time }

func (q *cutQueue) add(end time.Time, grace time.Duration) {
	*q = append(*q, struct{ end, at time.Time }{end, end.Add(grace)})
}

// runUntil cuts each queued step's requests when its grace runs out, until until (zero: until
// the queue is empty); ctx's error if ctx ends first.
func (q *cutQueue) runUntil(ctx context.Context, ctl Controller, until time.Time) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := until
		if len(*q) > 0 && (next.IsZero() || (*q)[0].at.Before(next)) {
			next = (*q)[0].at
		}
		if next.IsZero() {
			return nil
		}
		timer.Reset(time.Until(next))
		select {
		case <-timer.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		if len(*q) > 0 && !time.Now().Before((*q)[0].at) {
			ctl.CutBefore((*q)[0].end)
			*q = (*q)[1:]
			continue
		}
		if !until.IsZero() && !time.Now().Before(until) {
			return nil
		}
	}
}

// beginNow starts the next step now. The instant is read under the lock, so that a reader of
// Schedule never sees a request whose t0 is after a boundary the schedule does not hold yet.
func (s *Sweep) beginNow() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := time.Now()
	s.starts = append(s.starts, at)
	return at
}

func (s *Sweep) finishNow() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.end = time.Now()
	return s.end
}

// Schedule returns the start of every step begun so far and the end of the last step (zero
// while it runs).
func (s *Sweep) Schedule() (starts []time.Time, end time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.starts...), s.end
}
