package ui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"tokscope/sample"
	"tokscope/stats"
	"tokscope/sweep"
)

// fakeReporter counts what the UI hands it and "writes" to a fixed path.
type fakeReporter struct {
	observed, resets int
	saved            []stats.Snapshot
	err              error
}

func (r *fakeReporter) Observe(sample.Event) bool { r.observed++; return true }
func (r *fakeReporter) Reset()                    { r.resets++ }
func (r *fakeReporter) Save(snap stats.Snapshot, _ *sweep.Report) func() (string, error) {
	r.saved = append(r.saved, snap)
	return func() (string, error) { return "/tmp/tokscope-report.html", r.err }
}

// runCmd runs cmd and every Cmd of a batch it returns, feeding their messages to Update;
// a Cmd that does not return at once (a timer, such as the notice's expiry) is left alone.
func runCmd(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	if cmd == nil {
		return m
	}
	got := make(chan tea.Msg, 1)
	go func() { got <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-got:
	case <-time.After(200 * time.Millisecond):
		return m
	}
	if batch, ok := msg.(tea.BatchMsg); ok {
		for _, c := range batch {
			m = runCmd(t, m, c)
		}
		return m
	}
	next, cmd := m.Update(msg)
	return runCmd(t, next.(Model), cmd)
}

// The w key writes the report of the session so far off the event loop and says where in the
// footer; the Reporter sees every finished request and every reset; the help names the key.
func TestReportKeyWritesTheSessionReport(t *testing.T) {
	rep := &fakeReporter{}
	m := New(newFakeControls(), testEndpoints(2), make(chan sample.Event), Options{Now: pinned, Board: NewBoard(testEndpoints(2), nil, rep)})
	m = update(t, m, resize(120, 40))
	m = update(t, m, eventsMsg{events: history(m.eps, 5)})
	if rep.observed != 10 {
		t.Fatalf("the Reporter saw %d events, want the 10 finished requests", rep.observed)
	}
	next, cmd := m.Update(keyMsg("w"))
	m = runCmd(t, next.(Model), cmd)
	if len(rep.saved) != 1 || rep.saved[0].Endpoints[0].Requests != 5 {
		t.Fatalf("Save got %d snapshots; want one with the 5 requests of the session", len(rep.saved))
	}
	if !strings.Contains(m.View(), "report written to /tmp/tokscope-report.html") {
		t.Errorf("no notice of where the report went:\n%s", m.View())
	}

	rep.err = errors.New("disk full")
	next, cmd = m.Update(keyMsg("w"))
	m = runCmd(t, next.(Model), cmd)
	if !strings.Contains(m.View(), "report not written: disk full") {
		t.Errorf("a failed write is not shown:\n%s", m.View())
	}

	m = press(t, m, "r", "y")
	if rep.resets != 1 {
		t.Errorf("reset reached the Reporter %d times, want 1", rep.resets)
	}
	if help := press(t, m, "?").View(); !strings.Contains(help, "w write HTML report") {
		t.Errorf("the help does not name the report key:\n%s", help)
	}
}

// Without a Reporter the key says so instead of doing nothing.
func TestReportKeyWithoutReporter(t *testing.T) {
	m, _ := newTestModel(t, 1, 100, 30, 2)
	next, cmd := m.Update(keyMsg("w"))
	m = runCmd(t, next.(Model), cmd)
	if !strings.Contains(m.View(), "no report writer in this session") {
		t.Errorf("no notice:\n%s", m.View())
	}
}
