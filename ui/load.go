package ui

import (
	"tokscope/config"
	"tokscope/stats"
)

// Load shapes beyond closed-loop streams, as the model sees them: an open-loop run (the
// cards show the client queue and dropped arrivals) and a sweep (its Tracker, fed with the
// same events as the statistics, and the sweep view).

// openLoopStats is the part of stats.Aggregator that records open-loop arrivals, polled from
// the engine when it counts them (stats.ArrivalSource: the probe Runner; engines without
// it, tests and replays, have no arrivals to show).
type openLoopStats interface {
	Rate() float64
	PollArrivals(src stats.ArrivalSource)
}

// initLoad sets the model up for opts' load shape, before the views are built from it; a
// sweep opens on the sweep view.
func (m *Model) initLoad(opts Options) {
	if opts.Sweep != nil {
		m.sweepTracker = opts.Sweep
		m.view = viewSweep
	}
	if opts.Search != nil {
		m.capacitySearch = opts.Search
		m.view = viewSweep
	}
	if a, ok := m.agg.(openLoopStats); ok {
		m.rate = a.Rate()
	}
}

// closeLoad: the events ended; the sweep keeps the steps that ended.
func (m *Model) closeLoad() {
	if m.sweepTracker != nil {
		m.sweepTracker.Close()
	}
}

// refreshSweep runs on the clock: a step can end, and become final, without any event.
func (m *Model) refreshSweep() {
	if m.sweepTracker != nil && m.sweepTracker.Refresh() && m.view == viewSweep || m.capacitySearch != nil && m.view == viewSweep {
		m.renderBody() // a search's running step shows its time and requests so far
	}
}

// pollArrivals copies the Runner's open-loop arrival counts into the statistics.
func (m *Model) pollArrivals() {
	if m.rate <= 0 {
		return
	}
	src, ok := m.controls.(stats.ArrivalSource)
	a, ok2 := m.agg.(openLoopStats)
	if ok && ok2 {
		a.PollArrivals(src)
	}
}

// namesOf are the endpoints' names, in order, for the sweep charts' legend.
func namesOf(eps []config.Endpoint) []string {
	names := make([]string, len(eps))
	for i, ep := range eps {
		names[i] = ep.Name
	}
	return names
}
