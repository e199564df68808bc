package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"tokscope/sample"
	"tokscope/sample/sampletest"
)

// h2hResult runs a head-to-head Cmd (as bubbletea would, off the event loop) and returns its
// message; it fails when cmd is not one.
func h2hResult(t *testing.T, cmd tea.Cmd) headToHeadMsg {
	t.Helper()
	if cmd == nil {
		t.Fatal("no head-to-head computation was started")
	}
	msg, ok := cmd().(headToHeadMsg)
	if !ok {
		t.Fatalf("the Cmd returned %T, want headToHeadMsg", msg)
	}
	// How long the bootstrap took depends on the machine's load (-race on 2 busy cores can
	// pass h2hSlow); as if it were fast, so only TestHeadToHeadPausesAfterSlowComputation,
	// which sets took itself, meets the pause.
	msg.took = 0
	return msg
}

func updateCmd(t *testing.T, m Model, msg tea.Msg) (Model, tea.Cmd) {
	t.Helper()
	next, cmd := m.Update(msg)
	return next.(Model), cmd
}

// The compare view computes head-to-head rows in a Cmd when it is shown and the data changed,
// never in Update or View, and shows them when the result comes back.
func TestCompareHeadToHead(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m, _ := newTestModel(t, 4, size[0], size[1], 30)
			if m.headToHead.inFlight {
				t.Fatal("computed outside the compare view")
			}
			m, cmd := updateCmd(t, m, keyMsg("2"))
			if strings.Contains(m.View(), "head-to-head") {
				t.Fatal("rows shown before the computation returned")
			}
			msg := h2hResult(t, cmd)
			m, cmd = updateCmd(t, m, msg)
			if cmd != nil {
				t.Error("recomputed although nothing changed")
			}
			view := m.View()
			for _, want := range []string{"head-to-head vs best", "best", "slower"} {
				if !strings.Contains(view, want) {
					t.Errorf("compare view lacks %q:\n%s", want, view)
				}
			}
			golden.RequireEqual(t, []byte(view))

			// Same data: leaving and coming back starts nothing.
			m = press(t, m, "1")
			if _, cmd = updateCmd(t, m, keyMsg("2")); cmd != nil {
				t.Error("recomputed on return without new data")
			}
		})
	}
}

func TestHeadToHeadRecomputesOnNewDataAndDropsStaleResults(t *testing.T) {
	m, _ := newTestModel(t, 3, 120, 40, 10)
	m, cmd := updateCmd(t, m, keyMsg("2"))
	first := h2hResult(t, cmd)

	// New data while the first computation is in flight: nothing starts until it returns.
	more := history(m.eps, 12)[30:] // seq 11 and 12 of each endpoint
	m = update(t, m, eventsMsg{events: more})
	m, cmd = updateCmd(t, m, redrawMsg{})
	if cmd != nil {
		t.Fatal("a second computation started while one is in flight")
	}
	m, cmd = updateCmd(t, m, first)
	second := h2hResult(t, cmd) // the result came back: the changed data is computed next
	m = update(t, m, second)
	v := m.headToHead.version

	// Reset drops results computed before it.
	m = update(t, m, eventsMsg{events: history(m.eps, 13)[36:]})
	m, cmd = updateCmd(t, m, redrawMsg{})
	stale := h2hResult(t, cmd)
	m = press(t, m, "r", "y")
	m, _ = updateCmd(t, m, stale)
	if m.headToHead.computed || len(m.headToHead.rows) != 0 || m.headToHead.version == v {
		t.Errorf("a result from before the reset was kept: %+v", m.headToHead)
	}
	if strings.Contains(m.View(), "slower") {
		t.Errorf("stale verdicts shown after reset:\n%s", m.View())
	}
}

func TestHeadToHeadNeedsTwoEndpoints(t *testing.T) {
	m, _ := newTestModel(t, 1, 100, 30, 10)
	if _, cmd := updateCmd(t, m, keyMsg("2")); cmd != nil {
		t.Error("head-to-head with one endpoint")
	}
}

// A replay: no Controls, events fed then closed; the header names the file, the control keys say
// they are unavailable.
func TestReplayWithoutControls(t *testing.T) {
	eps := testEndpoints(2)
	evs := history(eps, 5)
	ch := make(chan sample.Event, len(evs))
	for _, ev := range evs {
		ch <- ev
	}
	close(ch)
	m := New(nil, eps, ch, Options{Now: pinned, Replay: "run.jsonl"})
	m = update(t, m, resize(100, 30))
	m = update(t, m, waitForEvent(ch, nil)())
	m = update(t, m, redrawMsg{})
	view := m.View()
	if header := strings.SplitN(view, "\n", 2)[0]; !m.stopped || !strings.Contains(header, "replay run.jsonl") || strings.Contains(header, "stopped") {
		t.Errorf("header: %s", header)
	}
	if !strings.Contains(view, "5 req") {
		t.Errorf("replayed requests not counted:\n%s", view)
	}
	for _, k := range []string{"p", "P", "+", "ctrl+r"} {
		m = press(t, m, k)
		if !strings.Contains(m.View(), "no engine") {
			t.Errorf("%s: no notice:\n%s", k, m.View())
		}
		m = press(t, m, "1")
	}
}

func TestDetailShowsRateLimits(t *testing.T) {
	m, _ := newTestModel(t, 2, 120, 40, 5)
	ep, ms := m.eps[0], time.Millisecond
	s := sampletest.OK(ep.Name, ep.Model, 6, t0.Add(-time.Second)).Times(300*time.Microsecond, 60*ms).Role(95*ms).
		Chunks(20, 100*ms, 10*ms, 4).Tokens(20, sample.SourceUsage).Prompt(530, 0).EndAfter(ms).
		With(func(s *sample.Sample) { s.Cache = ep.Cache }).Sample()
	s.RateLimitRemainingRequests, s.RateLimitRemainingTokens = 42, -1
	lim := sampletest.Err(ep.Name, ep.Model, 7, t0.Add(-500*ms), "http_429", 429, "slow down").
		Times(ms, 40*ms).EndAt(41 * ms).Sample()
	lim.RetryAfter, lim.Backoff = 12*time.Second, 12*time.Second
	m = update(t, m, eventsMsg{events: []sample.Event{
		&sample.Done{Endpoint: 0, Sample: s},
		&sample.Done{Endpoint: 0, Sample: lim},
		&sample.Status{Endpoint: 0, State: sample.StateBackoff, Until: t0.Add(12 * time.Second), Backoff: 12 * time.Second},
	}})
	m = update(t, m, redrawMsg{})
	m = press(t, m, "enter")
	view := m.View()
	for _, want := range []string{"rate limit left 42 req — tok", "retry-after 12.0s", "backed off 12.0s in total (not latency)"} {
		if !strings.Contains(view, want) {
			t.Errorf("detail view lacks %q:\n%s", want, view)
		}
	}
	// The other endpoint saw no header and never backed off: no line.
	m = press(t, m, "right")
	if strings.Contains(m.View(), "rate limit") || strings.Contains(m.View(), "backed off") {
		t.Errorf("rate-limit line without data:\n%s", m.View())
	}
}

// A slow computation is followed by a pause of four times its length before the next one.
func TestHeadToHeadPausesAfterSlowComputation(t *testing.T) {
	m, _ := newTestModel(t, 2, 120, 40, 5)
	m, cmd := updateCmd(t, m, keyMsg("2"))
	msg := h2hResult(t, cmd)
	msg.took = time.Second // as if it had taken a second
	m = update(t, m, msg)
	m = update(t, m, eventsMsg{events: history(m.eps, 6)[10:]})
	if m, cmd = updateCmd(t, m, redrawMsg{}); cmd != nil {
		t.Error("recomputed right after a slow computation")
	}
	m.headToHead.lastDone = time.Now().Add(-5 * time.Second) // the pause is over
	if m = update(t, m, clockMsg{}); !m.headToHead.inFlight {
		t.Error("the clock did not restart the computation after the pause")
	}
}
