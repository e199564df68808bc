package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"tokscope/sample"
	"tokscope/stats"
	"tokscope/sweep"
)

// Reporter writes the HTML report of the session so far (the w key). The Board feeds it every
// event it takes into its statistics (on the run's loop); Save is called under the Board's
// lock from Update and returns the work of writing, which the UI runs in a Cmd, off its loop.
// (package cli implements it with package report; the UI does not draw reports itself.)
type Reporter interface {
	Observe(ev sample.Event) bool
	Reset()
	// Save captures what the report will show: the statistics of snap and, during a
	// sweep, its steps so far (nil otherwise). write writes the file and says where.
	Save(snap stats.Snapshot, sw *sweep.Report) (write func() (path string, err error))
}

// reportSavedMsg says where the report was written, or why not.
type reportSavedMsg struct {
	path string
	err  error
}

// saveReport starts writing the report of the session so far.
func (m *Model) saveReport() tea.Cmd {
	if !m.board.reporting() {
		return m.setNotice("no report writer in this session", true)
	}
	write := m.board.save(m.now())
	return tea.Batch(m.setNotice("writing the report…", false), func() tea.Msg {
		path, err := write()
		return reportSavedMsg{path: path, err: err}
	})
}

func (m *Model) handleReportSaved(msg reportSavedMsg) tea.Cmd {
	if msg.err != nil {
		return m.setNotice("report not written: "+msg.err.Error(), true)
	}
	return m.setNotice("report written to "+msg.path, false)
}
