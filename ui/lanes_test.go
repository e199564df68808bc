package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/stats"
	"tokscope/workload"
)

// The Lanes view draws a row per lane and one per sub-agent depth under it: a finished turn
// ░ to its first token and █ after, a turn in flight up to now, tool time blank between;
// the flight strip counts the turns; it joins the tabs only once a session turn was seen.
func TestLanesView(t *testing.T) {
	keys := DefaultKeyMap()
	v := newLanesView(common{styles: new(DefaultStyles()), keys: &keys}, []config.Endpoint{{Name: "ep"}})
	v.SetSize(67, 10) // 60 columns of strip: one a second
	if v.InTabs() {
		t.Fatal("in the tabs before any session")
	}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(time.Duration(s-60) * time.Second) }
	turn := func(seq uint64, lane, depth, start, first, end int, ok bool) *sample.Done {
		s := sample.Sample{Seq: seq, Start: at(start), FirstToken: time.Duration(first-start) * time.Second,
			End: time.Duration(end-start) * time.Second, LastToken: time.Duration(end-start) * time.Second, Outcome: sample.OutcomeOK,
			Session: &workload.SessionTurn{Lane: lane, Depth: depth}}
		if !ok {
			s.Outcome, s.FirstToken = sample.OutcomeError, sample.Absent
		}
		return &sample.Done{Sample: s}
	}
	v.Observe(turn(1, 1, 0, 10, 14, 20, true))  // ░ 10–13, █ 14–20
	v.Observe(turn(2, 1, 1, 25, 26, 30, true))  // a sub-agent, under lane 1
	v.Observe(turn(3, 2, 0, 40, 40, 45, false)) // failed
	v.Observe(&sample.Started{Seq: 4, At: at(50), Session: &workload.SessionTurn{Lane: 1}})
	if !v.InTabs() {
		t.Fatal("not in the tabs after session turns")
	}
	out := ansi.Strip(v.Render(&frame{sel: 0, now: now, snap: &stats.Snapshot{Endpoints: []stats.EndpointStats{{}}}}))
	lines := strings.Split(out, "\n")
	row := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l[len(prefix):]
			}
		}
		t.Fatalf("no row %q in\n%s", prefix, out)
		return ""
	}
	lane1 := []rune(row("  1   "))
	if string(lane1[10:14]) != "░░░░" || string(lane1[14:21]) != "███████" || string(lane1[21:50]) != strings.Repeat(" ", 29) || lane1[55] != '░' {
		t.Errorf("lane 1: %q", string(lane1))
	}
	if sub := []rune(row("  1├1 ")); sub[24] != ' ' || sub[25] != '░' || string(sub[26:31]) != "█████" || sub[32] != ' ' {
		t.Errorf("lane 1's sub-agent: %q", string(sub))
	}
	if l2 := []rune(row("  2   ")); l2[42] == ' ' {
		t.Errorf("lane 2's failed turn is not drawn: %q", string(l2))
	}
	if fl := []rune(row("flight ")); fl[15] == ' ' || fl[35] != ' ' {
		t.Errorf("flight strip: %q", string(fl))
	}
	// The last finished turn's breakdown (the failed one).
	if got := row("last turn "); !strings.HasPrefix(got, "lane 2 turn 0 · gap 0 ms · error") {
		t.Errorf("last turn: %q", got)
	}
	v.Observe(turn(5, 1, 1, 52, 53, 55, true))
	out = ansi.Strip(v.Render(&frame{sel: 0, now: now, snap: &stats.Snapshot{Endpoints: []stats.EndpointStats{{}}}}))
	lines = strings.Split(out, "\n")
	if got := row("last turn "); !strings.HasPrefix(got, "lane 1 sub-agent 0 (depth 1) turn 0 · gap 0 ms") {
		t.Errorf("last turn: %q", got)
	}
	if !strings.Contains(out, "to first token 1.00 s · decode 2.00 s · 0 tok out") || !strings.Contains(out, "prompt 0 (offline), 0 blocks · cache ideal 0") {
		t.Errorf("the last turn's breakdown:\n%s", out)
	}
}
