package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"tokscope/sample"
)

// maxConcurrency bounds `+`: a typo should not open hundreds of streams.
const maxConcurrency = 64

// handleKey maps a key to an action. While the prompt has focus, keys are text except the
// few typing bindings.
func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	if m.notice != "" {
		m.notice = "" // notices clear on the next key
	}
	if cmd, ok := m.capturingKey(msg); ok {
		return cmd
	}
	if m.confirmReset {
		return m.answerReset(msg)
	}
	if why := unavailable(msg, m.missing); why != "" {
		return m.setNotice(why, true)
	}
	if cmd, ok := m.viewKey(msg); ok {
		return cmd
	}
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = !m.showHelp
		m.renderAll()
		return nil
	case m.showHelp && key.Matches(msg, k.Back):
		m.showHelp = false
		m.renderAll()
		return nil
	case key.Matches(msg, k.NextView):
		return m.setView(m.cycleView(1))
	case key.Matches(msg, k.PrevView):
		return m.setView(m.cycleView(-1))
	case key.Matches(msg, k.Back):
		switch m.view {
		case viewDetail:
			return m.setView(m.back)
		case viewDashboard:
			return nil
		}
		return m.setView(viewDashboard)
	case key.Matches(msg, k.Enter):
		return m.setView(viewDetail)
	case key.Matches(msg, k.Up):
		return m.move(0, -1)
	case key.Matches(msg, k.Down):
		return m.move(0, 1)
	case key.Matches(msg, k.Left):
		return m.move(-1, 0)
	case key.Matches(msg, k.Right):
		return m.move(1, 0)
	case key.Matches(msg, k.Pause):
		return m.togglePause()
	case key.Matches(msg, k.PauseAll):
		return m.togglePauseAll()
	case key.Matches(msg, k.Reset):
		return m.askReset()
	case key.Matches(msg, k.Report):
		return m.saveReport()
	case key.Matches(msg, k.MoreStreams):
		return m.changeConcurrency(1)
	case key.Matches(msg, k.FewerStreams):
		return m.changeConcurrency(-1)
	}
	for v, b := range k.viewKeys() {
		if key.Matches(msg, b) {
			return m.setView(view(v))
		}
	}
	m.renderFooter()
	return nil
}

// move changes the selection (or, in compare, scrolls columns with ←/→).
func (m *Model) move(dx, dy int) tea.Cmd {
	n := len(m.eps)
	if n == 0 {
		return nil
	}
	if mv, ok := m.views[m.view].(mover); ok {
		m.sel = mv.Move(m.sel, dx, dy)
	} else {
		m.sel = (m.sel + dx + dy + n) % n
	}
	m.renderBody()
	return nil
}

func (m *Model) noControls() tea.Cmd { return m.setNotice(noControlsNotice, true) }

func (m *Model) togglePause() tea.Cmd {
	if m.controls == nil {
		return m.noControls()
	}
	if len(m.eps) == 0 {
		return nil
	}
	ep := sample.EndpointIndex(m.sel)
	paused := !m.controls.Paused(ep)
	m.controls.SetPaused(ep, paused)
	st := m.states[m.sel]
	st.paused = paused
	st.version++
	m.renderBody()
	word := "resumed "
	if paused {
		word = "paused "
	}
	return m.setNotice(word+m.eps[m.sel].Name, false)
}

func (m *Model) togglePauseAll() tea.Cmd {
	if m.controls == nil {
		return m.noControls()
	}
	pause := false
	for i := range sample.EndpointIndex(len(m.eps)) {
		if !m.controls.Paused(i) {
			pause = true
		}
	}
	for i, st := range m.states {
		m.controls.SetPaused(sample.EndpointIndex(i), pause)
		st.paused = pause
		st.version++
	}
	m.renderBody()
	if pause {
		return m.setNotice("paused all endpoints", false)
	}
	return m.setNotice("resumed all endpoints", false)
}

func (m *Model) changeConcurrency(delta int) tea.Cmd {
	if m.controls == nil {
		return m.noControls()
	}
	if len(m.eps) == 0 {
		return nil
	}
	ep := sample.EndpointIndex(m.sel)
	n := clamp(m.controls.Concurrency(ep)+delta, 1, maxConcurrency)
	m.controls.SetConcurrency(ep, n)
	st := m.states[m.sel]
	st.concurrency = n
	st.version++
	m.renderBody()
	return m.setNotice(m.eps[m.sel].Name+": concurrency "+itoa(n), false)
}

// askReset asks in the footer before the statistics are thrown away (a stray r costs the
// whole run otherwise); the question stays until a key answers it.
func (m *Model) askReset() tea.Cmd {
	m.confirmReset = true
	m.notice, m.noticeBad = "reset all statistics? y: reset · any other key: keep them", true
	m.noticeID++ // a pending expiry of an older notice must not clear the question
	m.renderFooter()
	return nil
}

// answerReset takes the key that answers askReset: y resets, ctrl+c still quits, any other
// key keeps the statistics and does nothing else.
func (m *Model) answerReset(msg tea.KeyMsg) tea.Cmd {
	m.confirmReset = false
	switch {
	case key.Matches(msg, m.keys.Confirm):
		return m.resetStats()
	case key.Matches(msg, m.keys.ForceQuit):
		return tea.Quit
	}
	return m.setNotice("statistics kept", false)
}

func (m *Model) resetStats() tea.Cmd {
	m.board.Reset()
	for _, st := range m.states {
		st.reset()
	}
	m.headToHead.reset()
	m.takeSnapshot()
	m.statsDirty = false
	m.renderBody()
	return tea.Batch(m.setNotice("statistics reset", false), m.refreshHeadToHead())
}
