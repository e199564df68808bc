package ui

import (
	"strings"

	"tokscope/probe"
	"tokscope/stats"
)

// Load shapes beyond closed-loop streams, as the model sees them: an open-loop run (the
// cards show the client queue and dropped arrivals) and a sweep (its Tracker, fed with the
// same events as the statistics, and the sweep view).

// arrivalCounter is the part of the probe Runner an open-loop UI polls; engines without it
// (tests, replays) have no arrivals to show.
type arrivalCounter interface {
	Arrivals(ep int) (offered, dropped uint64)
}

// openLoopStats is the part of stats.Aggregator that records open-loop arrivals.
type openLoopStats interface {
	SetRate(rate float64)
	SetArrivals(ep int, offered, dropped uint64)
}

// initLoad sets the model up for opts' load shape; a sweep opens on the sweep view.
func (m *Model) initLoad(opts Options) {
	m.swv = newSweepView(m.styles)
	if opts.Sweep != nil {
		m.swp = opts.Sweep.Track(m.eps, m.now)
		m.swp.SetTTFTFrom(opts.TTFTFrom)
		m.view = viewSweep
	}
	if opts.Rate > 0 {
		m.rate = opts.Rate
		if a, ok := m.agg.(openLoopStats); ok {
			a.SetRate(opts.Rate)
		}
		m.dash.SetOpenLoop(true)
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
	if m.swp != nil && m.swp.Refresh() && m.view == viewSweep {
		m.renderBody()
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
	for i := range m.eps {
		offered, dropped := c.Arrivals(i)
		a.SetArrivals(i, offered, dropped)
	}
}

// viewShown reports whether v is one of the views of this run: the sweep view is in the
// header and the Tab cycle only while a sweep runs (key 5 still shows how to start one).
func (m *Model) viewShown(v view) bool { return v != viewSweep || m.swp != nil }

// cycleView is the next (step 1) or previous (step -1) view of the Tab cycle.
func (m *Model) cycleView(step int) view {
	v := m.view
	for range nViews {
		v = (v + view(step) + nViews) % nViews
		if m.viewShown(v) {
			return v
		}
	}
	return m.view
}

// endpointNames are the endpoints' names, in order, for the sweep charts' legend.
func (m *Model) endpointNames() []string {
	names := make([]string, len(m.eps))
	for i, ep := range m.eps {
		names[i] = ep.Name
	}
	return names
}

// SetOpenLoop makes every card show the client queue line (rate mode).
func (d *dashboard) SetOpenLoop(on bool) {
	for _, p := range d.panels {
		p.open = on
	}
}

// queueLine is a card's "queue p50 3.2 p99 41 ms · drop 2", shortened until it fits w: the
// client queue (arrival to t0, never part of TTFT) and the arrivals dropped on a full queue.
func queueLine(s *Styles, es *stats.EndpointStats, w int) string {
	q50, q99 := pick(es.Queue, p50, ms), pick(es.Queue, p99, ms)
	drop := itoa(int(es.DroppedArrivals))
	dropStyle := s.Muted
	if es.DroppedArrivals > 0 {
		dropStyle = s.Warn
	}
	L, V := s.Label.Render, s.Value.Render
	candidates := []struct{ plain, styled string }{
		{"queue p50 " + q50 + " p99 " + q99 + " ms · drop " + drop,
			L("queue") + " " + L("p50") + " " + V(q50) + " " + L("p99") + " " + V(q99) + " " + s.Unit.Render("ms") + s.Faint.Render(" · ") + dropStyle.Render("drop "+drop)},
		{"q p50 " + q50 + " p99 " + q99 + " drop " + drop,
			L("q") + " " + L("p50") + " " + V(q50) + " " + L("p99") + " " + V(q99) + " " + dropStyle.Render("drop "+drop)},
	}
	for _, c := range candidates {
		if len([]rune(c.plain)) <= w {
			return c.styled
		}
	}
	return truncate(strings.TrimSpace(candidates[len(candidates)-1].styled), w)
}
