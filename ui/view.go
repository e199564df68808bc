package ui

import (
	"time"

	"github.com/charmbracelet/bubbles/key"

	"tokscope/stats"
)

// view names one of the model's views: its place in the header, the Tab cycle and the
// model's table of screens.
type view int

const (
	viewDashboard view = iota
	viewCompare
	viewDetail
	viewStream
	viewSweep // in the header and the Tab cycle only while a sweep runs
	viewLanes // agent sessions' lanes (lanes.go); in the header once a session turn was seen
	nViews
)

// screen is what every view is to the model, which holds one per view in a table
// (Model.views) and knows none of them by kind for drawing, sizing or the footer. A view is
// built with all it draws from besides the frame; adding one is its file and a table entry.
type screen interface {
	// Name is the view's title in the header.
	Name() string
	// SetSize sets the body size; the model calls it on resize only.
	SetSize(w, h int)
	// Render draws the body, exactly w×h, redrawing only what changed since the last call.
	Render(f *frame) string
	// Info is the footer's right-hand indicator (page, sort, dropped deltas); "" for none.
	Info() string
	// ShortHelp is the footer's key help while the view shows.
	ShortHelp() []key.Binding
}

// mover is a screen that lays the endpoints out (a grid of cards, sorted rows) and so moves
// the selection its own way; ←↑→↓ elsewhere step through the endpoints in order.
type mover interface {
	// Move returns the selection after moving dx across and dy down from sel.
	Move(sel, dx, dy int) int
}

// occasional is a screen that is in the header and the Tab cycle only sometimes (the sweep
// view, while a sweep runs); its number key shows it always.
type occasional interface {
	InTabs() bool
}

// frame is what a view draws from, beyond what it was built with: the model's latest
// statistics, the endpoints' states, the selection and the clock.
type frame struct {
	snap        *stats.Snapshot
	snapVersion uint64
	states      []*endpointState
	sel         int
	now         time.Time
	// itl counts endpoint ep's recent inter-chunk gaps by itlBuckets, from the statistics
	// (the gaps of snap's Recent.ITL); computed when called.
	itl func(ep int) []int
}

// common is what every view is built with: the one Styles and KeyMap of the model, and the
// body size.
type common struct {
	styles *Styles
	keys   *KeyMap
	w, h   int
}

// SetSize sets the body size.
func (c *common) SetSize(w, h int) { c.w, c.h = w, h }

// viewShown reports whether v is one of the views of this run (in the header and the Tab
// cycle).
func (m *Model) viewShown(v view) bool {
	o, ok := m.views[v].(occasional)
	return !ok || o.InTabs()
}

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

func (m *Model) frame() *frame {
	board, at := m.board, m.snap.At
	itl := func(ep int) []int { return board.RecentITL(ep, at, itlBuckets) }
	return &frame{snap: &m.snap, snapVersion: m.snapVersion, states: m.states, sel: m.sel, now: m.now(), itl: itl}
}
