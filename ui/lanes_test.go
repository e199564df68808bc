package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/stats"
	"tokscope/workload"
)

// lanesFixture is a Lanes view of 60 columns of strip (one a second) at a pinned now.
type lanesFixture struct {
	t   *testing.T
	v   *lanesView
	now time.Time
}

func newLanesFixture(t *testing.T, from sample.TTFTFrom, eps ...config.Endpoint) *lanesFixture {
	keys := DefaultKeyMap()
	if len(eps) == 0 {
		eps = []config.Endpoint{{Name: "ep"}}
	}
	v := newLanesView(common{styles: new(DefaultStyles()), keys: &keys}, eps, from)
	v.SetSize(laneLabel+60, 16)
	return &lanesFixture{t: t, v: v, now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
}

// at is second s of the window (0 its start, 60 now).
func (f *lanesFixture) at(s float64) time.Time {
	return f.now.Add(time.Duration((s - 60) * float64(time.Second)))
}

// turn is a finished turn of context ctx (parent, depth) on lane, from start to end
// seconds, its first token at first.
func (f *lanesFixture) turn(seq uint64, lane int, ctx, parent uint64, depth int, start, first, end float64, ok bool) *sample.Done {
	sec := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	s := sample.Sample{Seq: seq, Start: f.at(start), FirstToken: sec(first - start), FirstAnswer: sec(first - start),
		FirstEvent: sec(first - start), End: sec(end - start), LastToken: sec(end - start), Outcome: sample.OutcomeOK, CachedTokens: -1,
		Headers: sec(first-start) / 2, Wrote: 0, Connect: sample.Absent, Reused: true, Tokens: 7,
		Session: &workload.SessionTurn{ID: ctx, Parent: parent, Root: 1, Lane: lane, Depth: depth, Turn: int(seq)}}
	if !ok {
		s.Outcome, s.ErrorKind, s.FirstToken, s.FirstAnswer, s.FirstEvent = sample.OutcomeError, "http_500", sample.Absent, sample.Absent, sample.Absent
	}
	return &sample.Done{Sample: s}
}

func (f *lanesFixture) started(seq uint64, lane int, ctx, parent uint64, depth int, start float64) *sample.Started {
	return &sample.Started{Seq: seq, At: f.at(start), Session: &workload.SessionTurn{ID: ctx, Parent: parent, Root: 1, Lane: lane, Depth: depth}}
}

func (f *lanesFixture) observe(evs ...sample.Event) {
	for _, e := range evs {
		f.v.Observe(e)
	}
}

// detail is the breakdown under the strip, its wrapped lines joined.
func (f *lanesFixture) detail() string {
	var parts []string
	on := false
	for _, l := range strings.Split(f.screen(), "\n") {
		if strings.HasPrefix(l, "last turn ") || strings.HasPrefix(l, "selected  ") {
			on = true
		}
		if l = strings.TrimSpace(l); on && l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

func (f *lanesFixture) screen() string {
	return ansi.Strip(f.v.Render(&frame{sel: 0, now: f.now, snap: &stats.Snapshot{Endpoints: []stats.EndpointStats{{}}}}))
}

// row is the strip of the row whose label is label (without the selection mark), and whether
// it carries the mark.
func (f *lanesFixture) row(label string) ([]rune, bool) {
	f.t.Helper()
	out := f.screen()
	for _, l := range strings.Split(out, "\n") {
		r := []rune(l)
		if len(r) >= laneLabel && strings.TrimRight(string(r[2:laneLabel]), " ") == strings.TrimRight(label, " ") {
			return r[laneLabel:], r[0] == '▸'
		}
	}
	f.t.Fatalf("no row %q in\n%s", label, out)
	return nil, false
}

func (f *lanesFixture) hasRow(label string) bool {
	for _, l := range strings.Split(f.screen(), "\n") {
		if r := []rune(l); len(r) >= laneLabel && strings.TrimRight(string(r[2:laneLabel]), " ") == label {
			return true
		}
	}
	return false
}

// The Lanes view draws a row per lane and one per live sub-agent under it: a finished turn ░
// to its first token and █ after, a turn in flight up to now, tool time blank between; it
// joins the tabs only once a session turn was seen.
func TestLanesView(t *testing.T) {
	f := newLanesFixture(t, sample.TTFTFirstToken)
	if f.v.InTabs() {
		t.Fatal("in the tabs before any session")
	}
	f.observe(f.turn(1, 1, 1, 0, 0, 10, 14, 20, true), // ░ 10–13, █ 14–20
		f.turn(2, 1, 2, 1, 1, 25, 26, 30, true),  // a sub-agent of lane 1's root
		f.turn(3, 2, 3, 0, 0, 40, 40, 45, false), // failed
		f.started(4, 1, 1, 0, 0, 50))
	if !f.v.InTabs() {
		t.Fatal("not in the tabs after session turns")
	}
	lane1, _ := f.row("  1")
	if string(lane1[10:14]) != "░░░░" || string(lane1[14:21]) != "███████" || string(lane1[21:50]) != strings.Repeat(" ", 29) || lane1[55] != '░' {
		t.Errorf("lane 1: %q", string(lane1))
	}
	// The sub-agent forks (╭) just before its turn; lane 1's turn 4 joined it (╯).
	if sub, _ := f.row("  1├1"); sub[24] != '╭' || sub[25] != '░' || string(sub[26:31]) != "█████" || sub[31] != '╯' || sub[32] != ' ' {
		t.Errorf("lane 1's sub-agent: %q", string(sub))
	}
	if l2, _ := f.row("  2"); l2[42] != '×' { // no colour in tests: the failed shape
		t.Errorf("lane 2's failed turn is not drawn as failed: %q", string(l2))
	}
	// The last finished turn's breakdown (the failed one), and its row marked.
	out := f.screen()
	if !strings.Contains(f.detail(), "last turn lane 2 turn 3 · at 11:59:40 · think time before it 0 ms · error http_500") {
		t.Errorf("last turn:\n%s", out)
	}
	if _, marked := f.row("  2"); !marked {
		t.Errorf("the last turn's row is not marked:\n%s", out)
	}
}

// ←/→ select along a row from the last finished turn, ↑/↓ the nearest turn of the next row;
// the breakdown is the selected turn's, the row marked and the turn's cells highlighted; Esc
// follows the last turn again; while following ↑/↓ choose the endpoint.
func TestLanesSelection(t *testing.T) {
	f := newLanesFixture(t, sample.TTFTFirstToken, config.Endpoint{Name: "a"}, config.Endpoint{Name: "b"})
	f.observe(f.turn(1, 1, 1, 0, 0, 5, 6, 8, true),
		f.turn(2, 1, 1, 0, 0, 20, 22, 30, true),
		f.turn(3, 2, 2, 0, 0, 12, 13, 14, true),
		f.turn(4, 2, 2, 0, 0, 40, 41, 44, true),
		f.turn(5, 1, 1, 0, 0, 50, 51, 55, true)) // the last
	v := f.v
	if got := v.Move(0, 0, 1); got != 1 || v.selOn {
		t.Fatalf("↓ while following: endpoint %d, selected %v; want endpoint 1, following", got, v.selOn)
	}
	sel := func() string {
		t.Helper()
		for _, l := range strings.Split(f.screen(), "\n") {
			if rest, ok := strings.CutPrefix(l, "selected  "); ok {
				return rest
			}
		}
		t.Fatalf("no selected turn in\n%s", f.screen())
		return ""
	}
	v.Move(0, -1, 0) // ←: the last finished turn
	if got := sel(); !strings.HasPrefix(got, "lane 1 turn 5 · at 11:59:50") {
		t.Errorf("first ←: %q", got)
	}
	v.Move(0, -1, 0)
	if got := sel(); !strings.HasPrefix(got, "lane 1 turn 2 · at 11:59:20") {
		t.Errorf("second ←: %q", got)
	}
	v.Move(0, 0, 1) // ↓: lane 2's turn nearest 20 s: turn 3 at 12 s
	if got := sel(); !strings.HasPrefix(got, "lane 2 turn 3 · at 11:59:12") {
		t.Errorf("↓: %q", got)
	}
	if _, marked := f.row("  2"); !marked {
		t.Error("the selected turn's row is not marked")
	}
	v.Move(0, 1, 0)
	v.Move(0, 1, 0) // past the row's last turn: stays
	if got := sel(); !strings.HasPrefix(got, "lane 2 turn 4") {
		t.Errorf("→ →: %q", got)
	}
	if out := f.detail(); !strings.Contains(out, "connection reused · headers 500 ms · to first token 500 ms (ttft 1.00 s) · decode 3.00 s · 7 tok out") {
		t.Errorf("the selected turn's phases:\n%s", out)
	}
	if !v.Owns(keyMsg("esc"), true) || v.Owns(keyMsg("esc"), false) {
		t.Error("Esc is not the view's while a turn is selected")
	}
	v.HandleKey(keyMsg("esc"), nil, true)
	if out := f.screen(); !strings.Contains(out, "last turn lane 1 turn 5") || v.Owns(keyMsg("esc"), true) {
		t.Errorf("Esc did not return to following:\n%s", out)
	}
}

// Through the model: 6 shows the lanes, ← selects, the highlighted cells are the selected
// turn's (reverse video), Esc follows, a second Esc goes back to the dashboard.
func TestLanesKeysInModel(t *testing.T) {
	m, _ := newTestModel(t, 1, 100, 30, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s-60) * time.Second) }
	var evs []sample.Event
	for i, s := range []int{10, 30} {
		evs = append(evs, &sample.Done{Sample: sample.Sample{Seq: uint64(i + 1), Start: at(s), FirstToken: time.Second, LastToken: 3 * time.Second,
			End: 3 * time.Second, Outcome: sample.OutcomeOK, CachedTokens: -1, Tokens: 9,
			Session: &workload.SessionTurn{ID: 1, Root: 1, Lane: 1, Turn: i + 1, Gap: 2 * time.Second, Tool: true}}})
	}
	m = update(t, m, eventsMsg{events: evs})
	m = update(t, m, redrawMsg{})
	m = press(t, m, "6")
	if !strings.Contains(m.View(), "last turn lane 1 turn 2") || !strings.Contains(m.View(), "tool time before it 2.00 s") {
		t.Fatalf("lanes view:\n%s", m.View())
	}
	m = press(t, m, "left", "left")
	if !strings.Contains(m.View(), "selected  lane 1 turn 1 ") {
		t.Fatalf("← ←:\n%s", m.View())
	}
	m = press(t, m, "esc")
	if !strings.Contains(m.View(), "last turn lane 1 turn 2") || m.view != viewLanes {
		t.Fatalf("esc:\n%s", m.View())
	}
	m = press(t, m, "esc")
	if m.view != viewDashboard {
		t.Errorf("a second esc: view %d, want the dashboard", m.view)
	}
}

// Two sub-agents at one depth running at once get a row each under their lane, each from its
// fork to its join; once both joined, the next sub-agent takes the first row again, and a
// row whose sub-agent ended more than a window ago is gone.
func TestLanesConcurrentSubAgents(t *testing.T) {
	f := newLanesFixture(t, sample.TTFTFirstToken)
	f.observe(f.turn(1, 1, 1, 0, 0, 2, 3, 5, true),
		f.started(2, 1, 2, 1, 1, 8), f.started(3, 1, 3, 1, 1, 9), // two sub-agents fork
		f.turn(2, 1, 2, 1, 1, 8, 9, 12, true),
		f.turn(3, 1, 3, 1, 1, 9, 10, 20, true),
		f.turn(4, 1, 2, 1, 1, 14, 15, 16, true), // the first one's second turn: still its row
		f.started(5, 1, 1, 0, 0, 22))            // the parent goes on: both joined
	subRows := func() [][]rune { // the rows labelled 1├1, top to bottom
		var out [][]rune
		for _, l := range strings.Split(f.screen(), "\n") {
			if r := []rune(l); len(r) > laneLabel && strings.Contains(string(r[:laneLabel]), "1├1") {
				out = append(out, r[laneLabel:])
			}
		}
		return out
	}
	subs := subRows()
	if len(subs) != 2 {
		t.Fatalf("%d sub-agent rows, want 2:\n%s", len(subs), f.screen())
	}
	// Row 1: sub-agent 2, ╭ at 7, turns 8–12 and 14–16 with ─ between, ╯ at 17.
	if string(subs[0][7:18]) != "╭░████─░██╯" {
		t.Errorf("first sub-agent's row: %q", string(subs[0]))
	}
	// Row 2: sub-agent 3, ╭ at 8, 9–20, ╯ at 21.
	if subs[1][8] != '╭' || subs[1][9] != '░' || subs[1][20] != '█' || subs[1][21] != '╯' {
		t.Errorf("second sub-agent's row: %q", string(subs[1]))
	}
	// Both joined: a new sub-agent takes row 1 (its ╭ on the first row).
	f.observe(f.turn(5, 1, 1, 0, 0, 22, 23, 25, true), f.started(6, 1, 4, 1, 1, 30))
	subs = subRows()
	if len(subs) != 2 || subs[0][29] != '╭' || subs[0][30] != '░' || subs[1][29] != ' ' {
		t.Errorf("a third sub-agent after both joined:\n%s", f.screen())
	}
	// A minute on, sub-agent 4 finished and joined: its row and the second are gone.
	f.observe(f.turn(6, 1, 4, 1, 1, 30, 31, 33, true), f.started(7, 1, 1, 0, 0, 40))
	f.now = f.now.Add(lanesWindow)
	if f.hasRow("  1├1") {
		t.Errorf("sub-agent rows outlive their sub-agents by a window:\n%s", f.screen())
	}
}

// A turn that missed the endpoint's TTFT objective is in the error colour by the run's
// --ttft-from: a reasoning turn whose first token came at 200 ms and its first answer at 800
// ms meets a 500 ms objective under first-token and misses it under first-answer, as stats
// judges it; the ░/█ split moves to the answer too.
func TestLanesMissUnderTTFTFrom(t *testing.T) {
	ep := config.Endpoint{Name: "ep", SLO: config.SLO{TTFT: 500 * time.Millisecond}}
	for _, c := range []struct {
		from   sample.TTFTFrom
		missed bool
	}{{sample.TTFTFirstToken, false}, {sample.TTFTFirstAnswer, true}} {
		f := newLanesFixture(t, c.from, ep)
		d := f.turn(1, 1, 1, 0, 0, 10, 10.2, 20, true)
		d.Sample.FirstAnswer = 8 * time.Second // first answer at 18 s
		f.observe(d)
		counted, good := stats.MeetsSLO(ep.SLO, &d.Sample, c.from)
		if !counted || good == c.missed {
			t.Fatalf("%s: stats says counted %v good %v", c.from, counted, good)
		}
		row, _ := f.row("  1")
		out := f.detail()
		switch {
		case c.missed && (row[15] != '×' || !strings.Contains(out, "missed its objectives")):
			t.Errorf("%s: the miss is not drawn as one: %q\n%s", c.from, string(row), out)
		case !c.missed && (row[15] != '█' || strings.Contains(out, "missed")):
			t.Errorf("%s: a turn that met its objectives drawn as a miss: %q\n%s", c.from, string(row), out)
		}
	}
	// Without an objective, first-answer moves the first token: ░ until 18 s.
	f := newLanesFixture(t, sample.TTFTFirstAnswer)
	d := f.turn(1, 1, 1, 0, 0, 10, 10.2, 20, true)
	d.Sample.FirstAnswer = 8 * time.Second
	f.observe(d)
	if row, _ := f.row("  1"); row[17] != '░' || row[18] != '█' {
		t.Errorf("first-answer: %q", string(row))
	}
	if out := f.detail(); !strings.Contains(out, "to first answer 7.90 s (ttft 8.00 s) · decode 2.00 s") {
		t.Errorf("first-answer breakdown:\n%s", out)
	}
}

// The flight strip draws the most requests in flight at once in each second: two turns one
// after the other in one second are 1, two at once 2; requests without a session count (the
// endpoint's requests); the axis says the peak and how many are in flight now.
func TestLanesFlightStrip(t *testing.T) {
	f := newLanesFixture(t, sample.TTFTFirstToken)
	f.observe(f.turn(1, 1, 1, 0, 0, 10.1, 10.2, 10.4, true), f.turn(2, 1, 1, 0, 0, 10.5, 10.6, 10.9, true), // one after the other
		f.turn(3, 1, 1, 0, 0, 20, 21, 24, true), f.turn(4, 2, 2, 0, 0, 22, 23, 26, true), // overlap 22–24
		&sample.Started{Seq: 9, At: f.at(50)}) // a request outside the sessions, in flight
	strip, _ := f.row("flight")
	// Peak 2: a level of 1 is ▄ (half), 2 is █.
	if strip[10] != '▄' || strip[20] != '▄' || strip[22] != '█' || strip[24] != '█' || strip[26] != '▄' || strip[30] != ' ' || strip[55] != '▄' {
		t.Errorf("flight strip: %q", string(strip))
	}
	if out := f.screen(); !strings.Contains(out, "in flight: 1 now, peak 2") {
		t.Errorf("axis:\n%s", out)
	}
}

// Memory is bounded: a lane keeps its last laneKeep turns and spans, an endpoint its last
// flightKeep finished requests, whatever the run's length.
func TestLanesBounded(t *testing.T) {
	f := newLanesFixture(t, sample.TTFTFirstToken)
	for i := range 5000 {
		s := float64(i) / 100
		f.v.Observe(f.turn(uint64(2*i+1), 1, 1, 0, 0, s, s, s+0.005, true))
		f.v.Observe(f.turn(uint64(2*i+2), 1, uint64(10+i), 1, 1, s+0.005, s+0.006, s+0.009, true))
	}
	el := f.v.eps[0]
	l := el.lanes[1]
	if len(l.turns) > laneKeep || len(l.spans) > laneKeep || len(el.closed) > flightKeep || len(l.rowOf) > laneKeep {
		t.Errorf("kept %d turns, %d spans, %d rows of joined sub-agents, %d requests", len(l.turns), len(l.spans), len(l.rowOf), len(el.closed))
	}
	if len(l.turns) != laneKeep {
		t.Errorf("kept %d turns, want the last %d", len(l.turns), laneKeep)
	}
}

// A sub-agent in the background, idle when its parent goes on, is joined; its next turn goes
// on on its row, one span from its fork (no second ╭) while no other sub-agent took the row.
func TestLanesBackgroundSubAgent(t *testing.T) {
	f := newLanesFixture(t, sample.TTFTFirstToken)
	f.observe(f.turn(1, 1, 1, 0, 0, 2, 3, 5, true),
		f.turn(2, 1, 2, 1, 1, 8, 9, 12, true),
		f.started(3, 1, 1, 0, 0, 14),            // the parent goes on: sub-agent 2 is idle, joined
		f.turn(4, 1, 2, 1, 1, 16, 17, 20, true), // and goes on
		f.turn(3, 1, 1, 0, 0, 14, 15, 18, true))
	sub, _ := f.row("  1├1")
	if got := string(sub[7:22]); got != "╭░████───░████─" { // still live: ─ up to now
		t.Errorf("the background sub-agent's row: %q", got)
	}
}

// In colour the shown turn's cells are in reverse video: the last finished turn's while
// following, the selected one's after a key; the other rows are drawn as they were.
func TestLanesHighlight(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	f := newLanesFixture(t, sample.TTFTFirstToken)
	f.observe(f.turn(1, 1, 1, 0, 0, 5, 6, 8, true), f.turn(2, 2, 2, 0, 0, 20, 22, 30, true))
	rows := func() []string {
		fr := &frame{sel: 0, now: f.now, snap: &stats.Snapshot{Endpoints: []stats.EndpointStats{{}}}}
		out, head := strings.Split(f.v.Render(fr), "\n"), len(f.v.header(fr, 0))
		return out[head : head+2] // lane 1, lane 2, under the header
	}
	reversed := func(row string) int {
		return strings.Count(row, "\x1b[7") + strings.Count(row, ";7m") + strings.Count(row, ";7;")
	}
	following := rows()
	if reversed(following[1]) != 11 || reversed(following[0]) != 0 { // lane 2's turn: 20–30 s
		t.Fatalf("the last turn (lane 2) is not highlighted: %q", following[1])
	}
	f.v.Move(0, -1, 0) // lane 2's turn, the last
	f.v.Move(0, 0, -1) // ↑: lane 1's
	selected := rows()
	if selected[0] == following[0] || selected[1] == following[1] {
		t.Errorf("the highlight did not move from lane 2 to lane 1:\n%q\n%q", following, selected)
	}
	if reversed(selected[0]) != 4 || reversed(selected[1]) != 0 { // lane 1's turn: 5–8 s
		t.Errorf("the selected turn (lane 1) is not highlighted: %q", selected[0])
	}
}

// A lane without a turn in the window (its loop given up with -) is no longer drawn.
func TestLanesIdleLaneGoes(t *testing.T) {
	f := newLanesFixture(t, sample.TTFTFirstToken)
	f.observe(f.turn(1, 1, 1, 0, 0, 5, 6, 8, true), f.turn(2, 2, 2, 0, 0, 50, 52, 55, true))
	if !f.hasRow("  1") || !f.hasRow("  2") {
		t.Fatalf("both lanes should show:\n%s", f.screen())
	}
	f.now = f.now.Add(20 * time.Second) // lane 1's turn ended 72 s ago
	if f.hasRow("  1") || !f.hasRow("  2") {
		t.Errorf("lane 1 still drawn, or lane 2 gone:\n%s", f.screen())
	}
	f.now = f.now.Add(time.Minute)
	if out := f.screen(); !strings.Contains(out, "no turn in the last minute") {
		t.Errorf("an idle endpoint:\n%s", out)
	}
}

// More rows than fit: the shown turn's row stays in sight and the title says which rows show.
func TestLanesRowsScroll(t *testing.T) {
	f := newLanesFixture(t, sample.TTFTFirstToken)
	for lane := 1; lane <= 12; lane++ {
		s := float64(lane)
		f.observe(f.turn(uint64(lane), lane, uint64(lane), 0, 0, s, s+1, s+2, true)) // lane 12's is the last
	}
	out := f.screen()
	if !strings.Contains(out, "Lanes: ep rows 6–12 of 12") || !f.hasRow(" 12") || f.hasRow("  1") { // the legend takes two lines of its own
		t.Errorf("12 lanes in 16 lines:\n%s", out)
	}
	f.v.Move(0, -1, 0)
	for range 11 {
		f.v.Move(0, 0, -1) // ↑ to lane 1
	}
	if out := f.screen(); !strings.Contains(out, "rows 1–7 of 12") || !f.hasRow("  1") || !strings.Contains(out, "selected  lane 1 turn 1") {
		t.Errorf("lane 1 selected:\n%s", out)
	}
}

// Where the server reports its queue (vLLM's queue_ms), a turn's wait in it is drawn ▁ before
// its prefill ░.
func TestLanesServerQueue(t *testing.T) {
	f := newLanesFixture(t, sample.TTFTFirstToken)
	d := f.turn(1, 1, 1, 0, 0, 10, 15, 20, true)
	srv := sample.NoServerTiming("vllm")
	srv.QueueMs, srv.TTFTms = 3000, 4900
	d.Sample.Server = &srv
	f.observe(d)
	if row, _ := f.row("  1"); string(row[9:22]) != " ▁▁▁░░██████ " {
		t.Errorf("a turn queued 3 s: %q", string(row[9:22]))
	}
	if out := f.detail(); !strings.Contains(out, "server: queue 3000.0 · prefill 1900.0") {
		t.Errorf("breakdown: %s", out)
	}
}

// A selected turn still in flight shows what is known of it so far, never a blank: where and
// when it runs, how long so far, and its first token once it came.
func TestLanesSelectedTurnInFlight(t *testing.T) {
	f := newLanesFixture(t, sample.TTFTFirstToken)
	f.observe(f.turn(1, 1, 1, 0, 0, 10, 11, 12, true))
	st := f.started(2, 2, 2, 0, 0, 50)
	st.Session.Turn = 1
	f.observe(st)
	f.v.Move(0, -1, 0) // ←: lane 1's turn, the last finished
	f.v.Move(0, 0, 1)  // ↓: lane 2's, in flight
	if _, sel := f.row("  2"); !sel {
		t.Fatalf("lane 2 is not selected:\n%s", f.screen())
	}
	if d := f.detail(); !strings.Contains(d, "lane 2 turn 1 · at 11:59:50 · in flight 10.00 s") || !strings.Contains(d, "no first token yet") {
		t.Errorf("the turn in flight's breakdown: %q\n%s", d, f.screen())
	}
	f.observe(&sample.Progress{Seq: 2, Start: f.at(50), FirstToken: 1500 * time.Millisecond, FirstAnswer: 1500 * time.Millisecond,
		FirstEvent: 1500 * time.Millisecond, Tokens: 3, Chunks: 3})
	if d := f.detail(); !strings.Contains(d, "first token after 1.50 s") {
		t.Errorf("the turn in flight's breakdown after its first token: %q", d)
	}
}

// The header (title, figures, the glyphs' legend) wraps between items to the width: no item
// is cut, and "session" agrees with its number.
func TestLanesHeaderFits(t *testing.T) {
	for _, w := range []int{80, 100, 120} {
		for _, done := range []int{1, 2} {
			f := newLanesFixture(t, sample.TTFTFirstToken, config.Endpoint{Name: "fast-gpu"})
			f.v.SetSize(w, 30)
			f.observe(f.turn(1, 1, 1, 0, 0, 10, 11, 12, true))
			ideal, served := 0.41, 0.38
			fr := &frame{sel: 0, now: f.now, snap: &stats.Snapshot{Endpoints: []stats.EndpointStats{{
				Sessions: &stats.SessionStats{IdealHitRate: &ideal, ServedHitRate: &served, Completed: done, Turns: 12}}}}}
			lines := strings.Split(ansi.Strip(f.v.Render(fr)), "\n")
			head := strings.Join(lines[:len(f.v.header(fr, 0))], "\n")
			for _, item := range append([]string{"Lanes: fast-gpu", "cache hit ideal 41.0%  served 38.0%"}, laneLegend...) {
				if !strings.Contains(head, item) {
					t.Errorf("%d columns: the header lacks %q whole:\n%s", w, item, head)
				}
			}
			want := map[int]string{1: "1 session done, 12 turns", 2: "2 sessions done, 12 turns"}[done]
			if !strings.Contains(head, want) || strings.Contains(head, "…") {
				t.Errorf("%d columns, %d done: want %q, uncut:\n%s", w, done, want, head)
			}
		}
	}
}

// A turn's breakdown says every client phase, "—" where its figure is absent, so the line
// keeps its shape.
func TestLanesBreakdownKeepsAbsentFigures(t *testing.T) {
	f := newLanesFixture(t, sample.TTFTFirstToken)
	d := f.turn(1, 1, 1, 0, 0, 10, 11, 12, true)
	d.Sample.Headers = sample.Absent
	f.observe(d)
	if out := f.detail(); !strings.Contains(out, "connection reused · headers — · to first token 1.00 s") {
		t.Errorf("a turn without its headers instant: %s", out)
	}
	d = f.turn(2, 1, 1, 0, 0, 20, 21, 22, true)
	d.Sample.Wrote, d.Sample.Headers = 300*time.Millisecond, 200*time.Millisecond
	f.observe(d)
	if out := f.detail(); !strings.Contains(out, "headers before sent") {
		t.Errorf("a turn whose response began before its request was written: %s", out)
	}
}

// A turn's cache line keeps each count in its own tokenizer's unit: the prompt and the ideal
// in tokscope's offline tokens, what the server served of its own count of the prompt; served
// is left out when the server did not say (Ollama: -1), never shown as 0.
func TestLanesCacheLineUnits(t *testing.T) {
	turn := &workload.SessionTurn{PromptTokens: 2000, Blocks: 31, IdealCached: 1984}
	for _, tc := range []struct {
		cached, prompt int
		want           string
	}{
		{1900, 2050, "prompt 2000 (offline), 31 blocks · cache ideal 1984 · served 1900 of the server's 2050"},
		{1900, 0, "prompt 2000 (offline), 31 blocks · cache ideal 1984 · served 1900"},
		{-1, 2050, "prompt 2000 (offline), 31 blocks · cache ideal 1984"},
	} {
		if got := cacheLine(&sample.Sample{Session: turn, CachedTokens: tc.cached, PromptTokens: tc.prompt}); got != tc.want {
			t.Errorf("cached %d of %d:\n got %q\nwant %q", tc.cached, tc.prompt, got, tc.want)
		}
	}
}

// A failed turn's breakdown says why, in the server's words, on a line of its own under the
// error's kind (sanitized to one line and bounded); an ok turn has no such line.
func TestLanesFailedTurnSaysWhy(t *testing.T) {
	turn := &workload.SessionTurn{PromptTokens: 15291, Blocks: 238}
	msg := "request (26301 tokens) exceeds the available context size (2048 tokens),\n\x1b[31mtry increasing it"
	s := &sample.Sample{Session: turn, Outcome: sample.OutcomeError, ErrorKind: "http_400", ErrorMessage: msg,
		CachedTokens: -1, Start: time.Unix(1700000000, 0)}
	lines := strings.Split(turnBreakdown(s, sample.TTFTFirstToken, false), "\n")
	if len(lines) < 2 || !strings.HasSuffix(lines[0], "error http_400") ||
		lines[1] != "request (26301 tokens) exceeds the available context size (2048 tokens), [31mtry increasing it" {
		t.Errorf("breakdown:\n%s", strings.Join(lines, "\n"))
	}
	s.ErrorMessage = strings.Repeat("long ", 200)
	if l := strings.Split(turnBreakdown(s, sample.TTFTFirstToken, false), "\n")[1]; ansi.StringWidth(l) != maxTurnError {
		t.Errorf("a long message shows %d columns, want %d", ansi.StringWidth(l), maxTurnError)
	}
	ok := &sample.Sample{Session: turn, Outcome: sample.OutcomeOK, CachedTokens: -1, Start: s.Start}
	if b := turnBreakdown(ok, sample.TTFTFirstToken, false); strings.Contains(b, "exceeds") || strings.Count(b, "\n") != strings.Count(turnBreakdown(s, sample.TTFTFirstToken, false), "\n")-1 {
		t.Errorf("an ok turn's breakdown:\n%s", b)
	}
}
