package ui

import (
	"time"

	"tokscope/config"
	"tokscope/probe"
)

// Load shapes beyond closed-loop streams, as the model sees them: an open-loop run (the
// cards show the client queue and dropped arrivals) and a sweep (its Tracker, fed with the
// same events as the statistics, and the sweep view).

// arrivalCounter is the part of the probe Runner an open-loop UI polls; engines without it
// (tests, replays) have no arrivals to show.
type arrivalCounter interface {
	Arrivals(ep int) (offered, dropped uint64)
}

// arrivalQueue is the part of the probe Runner that tells which arrivals still wait.
type arrivalQueue interface {
	Waiting(ep int) []time.Time
}

// openLoopStats is the part of stats.Aggregator that records open-loop arrivals.
type openLoopStats interface {
	SetRate(rate float64)
	SetArrivals(ep int, offered, dropped uint64)
	SetWaiting(ep int, arrivals []time.Time)
}

// initLoad sets the model up for opts' load shape, before the views are built from it; a
// sweep opens on the sweep view.
func (m *Model) initLoad(opts Options) {
	if opts.Sweep != nil {
		m.swp = opts.Sweep.Track(m.eps, m.now)
		m.swp.SetTTFTFrom(opts.TTFTFrom)
		m.view = viewSweep
	}
	if opts.Search != nil {
		m.srch = opts.Search
		m.view = viewSweep
	}
	if opts.Rate > 0 {
		m.rate = opts.Rate
		if a, ok := m.agg.(openLoopStats); ok {
			a.SetRate(opts.Rate)
		}
	}
}

// observeLoad gives one event to the sweep's Tracker.
func (m *Model) observeLoad(ev probe.Event) {
	if m.swp != nil && m.swp.Observe(ev) {
		m.statsDirty = true
	}
}

// closeLoad: the events ended; the sweep keeps the steps that ended.
func (m *Model) closeLoad() {
	if m.swp != nil {
		m.swp.Close()
	}
}

// refreshSweep runs on the clock: a step can end, and become final, without any event.
func (m *Model) refreshSweep() {
	if m.swp != nil && m.swp.Refresh() && m.view == viewSweep || m.srch != nil && m.view == viewSweep {
		m.renderBody() // a search's running step shows its time and requests so far
	}
}

// pollArrivals copies the Runner's open-loop arrival counts into the statistics.
func (m *Model) pollArrivals() {
	if m.rate <= 0 {
		return
	}
	c, ok := m.eng.(arrivalCounter)
	a, ok2 := m.agg.(openLoopStats)
	if !ok || !ok2 {
		return
	}
	q, _ := m.eng.(arrivalQueue)
	for i := range m.eps {
		offered, dropped := c.Arrivals(i)
		a.SetArrivals(i, offered, dropped)
		if q != nil {
			a.SetWaiting(i, q.Waiting(i))
		}
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
