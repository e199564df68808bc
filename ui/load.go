package ui

import (
	"tokscope/config"
	"tokscope/stats"
)

// Load shapes beyond closed-loop streams, as the model sees them: an open-loop run (the
// cards show the client queue and dropped arrivals) and a sweep (its steps, on the Board, and
// the sweep view).

// initLoad sets the model up for opts' load shape, before the views are built from it; a
// sweep opens on the sweep view.
func (m *Model) initLoad(opts Options) {
	if m.board.sweeping() {
		m.view = viewSweep
	}
	if opts.Search != nil {
		m.capacitySearch = opts.Search
		m.view = viewSweep
	}
	m.rate = m.board.Rate()
}

// refreshSweep runs on the clock: a step can end, and become final, without any event.
func (m *Model) refreshSweep() {
	if m.board.refreshSteps() && m.view == viewSweep || m.capacitySearch != nil && m.view == viewSweep {
		m.renderBody() // a search's running step shows its time and requests so far
	}
}

// arrivals is where the statistics poll the open-loop arrival counts from: the Runner, in an
// open-loop run (controls without them, tests and replays, have no arrivals to show).
func (m *Model) arrivals() stats.ArrivalSource {
	if m.rate <= 0 {
		return nil
	}
	src, _ := m.controls.(stats.ArrivalSource)
	return src
}

// namesOf are the endpoints' names, in order, for the sweep charts' legend.
func namesOf(eps []config.Endpoint) []string {
	names := make([]string, len(eps))
	for i, ep := range eps {
		names[i] = ep.Name
	}
	return names
}
