package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"tokscope/sample"
)

// Views own their input: a view with keys of its own (keyHandler) acts on them itself, and a
// view that shows events of its own (eventObserver: the stream view's interactive streams)
// takes them itself. The model knows no view by kind; it routes by which view shows (pug's
// root model routes by focus), and keeps the keys of the whole UI (views, quit, help,
// selection, pause, reset, report).

// keyHandler is a screen with keys of its own.
type keyHandler interface {
	// Captures reports whether every key goes to the view first (a text input with focus);
	// the model then keeps only ForceQuit.
	Captures() bool
	// Owns reports whether msg is one of the view's keys. shown is false while another view
	// shows: a key the view owns then shows it (the sort key shows what it sorts, the
	// prompt key the prompt), and HandleKey gets it with shown false.
	Owns(msg tea.KeyMsg, shown bool) bool
	// HandleKey acts on one of the view's keys.
	HandleKey(msg tea.KeyMsg, f *frame, shown bool) keyResult
}

// keyResult is what a view's key did, for the model to finish: the Cmd to run and a footer
// notice ("" none). The model redraws the whole screen after it.
type keyResult struct {
	cmd    tea.Cmd
	notice string
	bad    bool
}

// eventObserver is a screen that takes events itself; Observe reports whether it changed
// (the model then redraws it when it shows, at the stream pace).
type eventObserver interface {
	Observe(ev sample.Event) bool
}

// liveScreen is a screen whose content moves with the clock while something runs (a
// stream's elapsed time), and that is told when the events end.
type liveScreen interface {
	Live() bool
	Stop()
}

// viewKey offers msg to the views that own it: the one that shows first, then (shown false)
// the others, the first of which that owns it is shown. It reports whether one took it.
func (m *Model) viewKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	if h, ok := m.views[m.view].(keyHandler); ok && h.Owns(msg, true) {
		return m.finishKey(h.HandleKey(msg, m.frame(), true)), true
	}
	for v, s := range m.views {
		if h, ok := s.(keyHandler); ok && view(v) != m.view && h.Owns(msg, false) {
			m.setView(view(v))
			return m.finishKey(h.HandleKey(msg, m.frame(), false)), true
		}
	}
	return nil, false
}

// capturingKey gives msg to the view that captures every key, if one shows.
func (m *Model) capturingKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	h, ok := m.views[m.view].(keyHandler)
	if !ok || !h.Captures() {
		return nil, false
	}
	if key.Matches(msg, m.keys.ForceQuit) {
		return tea.Quit, true
	}
	return m.finishKey(h.HandleKey(msg, m.frame(), true)), true
}

func (m *Model) finishKey(r keyResult) tea.Cmd {
	m.renderAll()
	if r.notice == "" {
		return r.cmd
	}
	return tea.Batch(r.cmd, m.setNotice(r.notice, r.bad))
}

// observeViews hands ev to the views that take events; it reports whether one changed.
func (m *Model) observeViews(ev sample.Event) bool {
	changed := false
	for _, v := range m.views {
		if o, ok := v.(eventObserver); ok && o.Observe(ev) {
			changed = true
		}
	}
	return changed
}

// viewsLive reports whether a view moves with the clock.
func (m *Model) viewsLive() bool {
	for _, v := range m.views {
		if l, ok := v.(liveScreen); ok && l.Live() {
			return true
		}
	}
	return false
}

// stopViews tells the views that the events ended.
func (m *Model) stopViews() {
	for _, v := range m.views {
		if l, ok := v.(liveScreen); ok {
			l.Stop()
		}
	}
}

// The compare view's keys: s and S sort its columns; pressed elsewhere, they show it first.

func (v *compareView) Captures() bool { return false }

func (v *compareView) Owns(msg tea.KeyMsg, _ bool) bool {
	return key.Matches(msg, v.keys.Sort, v.keys.SortReverse)
}

func (v *compareView) HandleKey(msg tea.KeyMsg, _ *frame, shown bool) keyResult {
	if shown { // the first press only shows what it sorts
		v.CycleSort(key.Matches(msg, v.keys.SortReverse))
	}
	return keyResult{}
}
