package ui

import (
	"sync"
	"time"

	"tokscope/config"
	"tokscope/fanout"
	"tokscope/sample"
	"tokscope/stats"
	"tokscope/sweep"
)

// Board is a run's statistics as the screen reads them: the Aggregator, the sweep's steps and
// the report's collector. The run builds it (package cli) and its loop feeds it (Observe, a
// fanout.Observer, as soon as each event is read, whatever the screen's lag); the Model owns
// none of it: it reads snapshots at each redraw and sends the reset (r). Every method takes
// the Board's lock, so the loop and the Model may call them from their own goroutines.
type Board struct {
	mu       sync.Mutex
	agg      *stats.Aggregator
	steps    *sweep.Tracker // nil without --sweep
	reporter Reporter       // nil: no report in this session
}

// NewBoard builds the statistics of a run over eps with the options of every Aggregator of
// the run (stats.WithTTFTFrom, WithSLOTarget, WithRate…), with the sweep's steps (nil without
// --sweep) and the report's collector (nil: none).
func NewBoard(eps []config.Endpoint, steps *sweep.Tracker, reporter Reporter, opts ...stats.Option) *Board {
	return &Board{agg: stats.New(eps, opts...), steps: steps, reporter: reporter}
}

// Observe takes one event of the run's stream: a request's into the statistics, the steps
// and the report; a server scrape into the statistics; the end of the Runner's events closes
// the steps (those that ended are final). It reports whether the statistics changed.
func (b *Board) Observe(ev sample.Event) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *fanout.Scrape:
		return b.agg.ObserveServer(ev.Update)
	case *fanout.End:
		if b.steps != nil {
			b.steps.Close()
		}
		return true
	}
	changed := b.agg.Observe(ev)
	if b.steps != nil && b.steps.Observe(ev) {
		changed = true
	}
	if b.reporter != nil && b.reporter.Observe(ev) {
		changed = true
	}
	return changed
}

// Snapshot is the statistics at now; open-loop arrivals are polled from src first, when
// it is not nil.
func (b *Board) Snapshot(now time.Time, src stats.ArrivalSource) stats.Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	if src != nil && b.agg.Rate() > 0 {
		b.agg.PollArrivals(src)
	}
	return b.agg.Snapshot(now)
}

// RecentITL counts endpoint ep's inter-chunk gaps of the recent window by bars.
func (b *Board) RecentITL(ep int, now time.Time, bounds []float64) []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.agg.RecentITL(ep, now, bounds)
}

// Rate is the open-loop arrivals per second per endpoint, 0 in the closed loop.
func (b *Board) Rate() float64 { return b.agg.Rate() }

// Reset forgets what the statistics and the report hold (the r key).
func (b *Board) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.agg.Reset()
	if b.reporter != nil {
		b.reporter.Reset()
	}
}

// sweeping: the run is a sweep (its steps are on the Board).
func (b *Board) sweeping() bool { return b.steps != nil }

// reporting: the session can write a report.
func (b *Board) reporting() bool { return b.reporter != nil }

// refreshSteps makes final the sweep's steps that ended without any event (the clock); it
// reports whether one did.
func (b *Board) refreshSteps() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.steps != nil && b.steps.Refresh()
}

// sweepState is what the sweep view draws: where the sweep stands, its final steps, its plan.
func (b *Board) sweepState() (sweep.Progress, []sweep.Result, sweep.Plan) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.steps.Progress(), b.steps.Results(), b.steps.Plan()
}

// save captures the report of the session so far (the statistics at now, the sweep's steps)
// and returns the work of writing it.
func (b *Board) save(now time.Time) func() (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var sw *sweep.Report
	if b.steps != nil {
		rep := b.steps.Report()
		sw = &rep
	}
	return b.reporter.Save(b.agg.Snapshot(now), sw)
}
