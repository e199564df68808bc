package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"tokscope/sample"
	"tokscope/sample/sampletest"
)

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func TestViewSwitching(t *testing.T) {
	m, _ := newTestModel(t, 4, 100, 30, 5)
	steps := []struct {
		key  string
		want view
	}{
		{"tab", viewCompare}, {"tab", viewDetail}, {"tab", viewStream}, {"tab", viewDashboard},
		{"shift+tab", viewStream}, {"1", viewDashboard}, {"2", viewCompare}, {"3", viewDetail},
		{"esc", viewCompare}, // detail returns where it came from
		{"4", viewStream}, {"esc", viewDashboard},
		{"enter", viewDetail}, {"esc", viewDashboard},
	}
	for i, s := range steps {
		m = press(t, m, s.key)
		if m.view != s.want {
			t.Fatalf("step %d (%s): view %s, want %s", i, s.key, m.views[m.view].Name(), m.views[s.want].Name())
		}
	}
}

func TestQuit(t *testing.T) {
	m, _ := newTestModel(t, 2, 80, 24, 0)
	for _, k := range []string{"q", "ctrl+c"} {
		if _, cmd := m.Update(keyMsg(k)); !isQuit(cmd) {
			t.Fatalf("%s does not quit", k)
		}
	}
}

func TestHelpToggle(t *testing.T) {
	m, _ := newTestModel(t, 2, 80, 24, 0)
	m = press(t, m, "?")
	if !m.showHelp || !strings.Contains(m.View(), "pause all") {
		t.Fatalf("? does not show the full help:\n%s", m.View())
	}
	m = press(t, m, "esc")
	if m.showHelp {
		t.Fatal("esc does not close the help")
	}
}

func TestDashboardSelection(t *testing.T) {
	m, _ := newTestModel(t, 4, 80, 24, 0) // 2×2 grid
	for _, s := range []struct {
		key  string
		want int
	}{
		{"right", 1}, {"right", 2}, {"down", 3}, {"down", 3}, {"up", 1}, {"left", 0}, {"left", 0},
		{"l", 1}, {"j", 3}, {"h", 2}, {"k", 0},
	} {
		m = press(t, m, s.key)
		if m.sel != s.want {
			t.Fatalf("after %s: selected %d, want %d", s.key, m.sel, s.want)
		}
	}
}

func TestDashboardPages(t *testing.T) {
	m, _ := newTestModel(t, 8, 80, 24, 3) // six cards a page
	if !strings.Contains(m.footer, "page 1/2") {
		t.Fatalf("footer %q lacks the page", m.footer)
	}
	m = press(t, m, "down", "down", "down")
	if !strings.Contains(m.footer, "page 2/2") || !strings.Contains(m.View(), "lmstudio") {
		t.Fatalf("selecting card %d does not show page 2:\n%s", m.sel, m.View())
	}
}

func TestPauseAndConcurrency(t *testing.T) {
	m, ctl := newTestModel(t, 3, 80, 24, 0)
	m = press(t, m, "right", "p")
	if !ctl.paused[1] || !m.states[1].paused {
		t.Fatal("p does not pause the selected endpoint")
	}
	if !strings.Contains(m.View(), "paused") {
		t.Fatalf("the card does not say paused:\n%s", m.View())
	}
	m = press(t, m, "p")
	if ctl.paused[1] {
		t.Fatal("p again does not resume")
	}
	m = press(t, m, "P")
	if !ctl.paused[0] || !ctl.paused[1] || !ctl.paused[2] {
		t.Fatalf("P does not pause all: %v", ctl.paused)
	}
	m = press(t, m, "P")
	if ctl.paused[0] || ctl.paused[1] || ctl.paused[2] {
		t.Fatalf("P again does not resume all: %v", ctl.paused)
	}
	m = press(t, m, "+", "+", "=")
	if ctl.conc[1] != 4 || m.states[1].concurrency != 4 {
		t.Fatalf("concurrency %d after three +, want 4", ctl.conc[1])
	}
	m = press(t, m, "-", "-", "-", "-", "-")
	if ctl.conc[1] != 1 {
		t.Fatalf("concurrency %d after many -, want 1 (never below)", ctl.conc[1])
	}
	if ctl.conc[0] != 0 || ctl.conc[2] != 0 {
		t.Fatalf("concurrency of other endpoints changed: %v", ctl.conc)
	}
}

func TestEventsFeedStatisticsThrottled(t *testing.T) {
	m, _ := newTestModel(t, 2, 80, 24, 0)
	m = update(t, m, eventsMsg{events: history(m.eps, 3)})
	if !m.redrawArmed || !m.statsDirty {
		t.Fatal("a batch of Done events does not arm the redraw")
	}
	if got := m.snap.Endpoints[0].Requests; got != 0 {
		t.Fatalf("snapshot taken before the redraw tick: %d requests", got)
	}
	next, cmd := m.Update(feed(m, eventsMsg{events: history(m.eps, 1)}))
	m = next.(Model)
	if cmd == nil {
		t.Fatal("the event reader is not re-armed")
	}
	m = update(t, m, redrawMsg{})
	if m.redrawArmed || m.statsDirty {
		t.Fatal("redraw leaves the model dirty")
	}
	if got := m.snap.Endpoints[0].Requests; got != 4 {
		t.Fatalf("endpoint 0 has %d requests, want 4", got)
	}
	if got := m.snap.Endpoints[1].Errors; got != 2 {
		t.Fatalf("endpoint 1 has %d errors, want 2", got)
	}
	if !m.states[1].inError() {
		t.Fatal("a failed last request does not put the card in error")
	}
}

func TestInteractiveDoneSkipsStatistics(t *testing.T) {
	m, _ := newTestModel(t, 2, 80, 24, 0)
	m = press(t, m, "4", "enter") // stream to endpoint 0, id 1
	ep, ms := m.eps[0], time.Millisecond
	s := sampletest.OK(ep.Name, ep.Model, 1, t0).Times(300*time.Microsecond, 60*ms).Role(95*ms).
		Chunks(20, 100*ms, 20*ms, 4).Tokens(20, sample.SourceUsage).Prompt(530, 0).EndAfter(ms).
		NewConn(1200*time.Microsecond, 800*time.Microsecond, sample.Absent). // the first request, over http
		With(func(s *sample.Sample) { s.Cache = ep.Cache }).Sample()
	m = update(t, m, eventsMsg{events: []sample.Event{
		&sample.Started{Endpoint: 0, Stream: 1, At: t0},
		&sample.Delta{Endpoint: 0, Stream: 1, At: t0.Add(100 * time.Millisecond), Text: "hello"},
		&sample.Done{Endpoint: 0, Stream: 1, Sample: s},
	}})
	m = update(t, m, redrawMsg{})
	if got := m.snap.Endpoints[0].Requests; got != 0 {
		t.Fatalf("an interactive Done entered the statistics: %d requests", got)
	}
	if !strings.Contains(m.View(), "hello") || !strings.Contains(m.View(), "done") {
		t.Fatalf("the stream pane does not show the stream:\n%s", m.View())
	}
}

func TestStaleStreamEventsIgnored(t *testing.T) {
	m, _ := newTestModel(t, 2, 80, 24, 0)
	m = press(t, m, "4", "enter", "enter") // ids 1 then 2
	m = update(t, m, eventsMsg{events: []sample.Event{
		&sample.Started{Endpoint: 0, Stream: 1, At: t0},
		&sample.Delta{Endpoint: 0, Stream: 1, At: t0, Text: "stale text"},
	}})
	m = update(t, m, redrawMsg{})
	if strings.Contains(m.View(), "stale text") {
		t.Fatal("events of an earlier stream reached the current one")
	}
}

func TestPromptTyping(t *testing.T) {
	m, ctl := newTestModel(t, 3, 80, 24, 0)
	m = press(t, m, "right", "/")
	if m.view != viewStream || !m.streamScreen().Typing() {
		t.Fatal("/ does not focus the prompt in the stream view")
	}
	for range len("Why is the sky blue?") {
		m = press(t, m, "backspace")
	}
	m = press(t, m, "q", "u", "i", "c", "k", "?", "2")
	if m.view != viewStream || m.showHelp {
		t.Fatal("keys typed into the prompt acted as commands")
	}
	m = press(t, m, "enter")
	if len(ctl.streams) != 1 || ctl.streams[0] != "1:quick?2" {
		t.Fatalf("enter streamed %v, want [1:quick?2]", ctl.streams)
	}
	if m.streamScreen().Typing() {
		t.Fatal("the prompt keeps focus after sending")
	}
	m = press(t, m, "/", "ctrl+r")
	if len(ctl.races) != 1 || ctl.races[0] != "quick?2" {
		t.Fatalf("ctrl+r raced %v", ctl.races)
	}
	if len(m.streamScreen().run.panes) != 3 {
		t.Fatalf("race shows %d panes, want 3", len(m.streamScreen().run.panes))
	}
	m = press(t, m, "/", "esc")
	if m.streamScreen().Typing() || m.view != viewStream {
		t.Fatal("esc does not leave the prompt")
	}
	if _, cmd := m.Update(keyMsg("ctrl+c")); !isQuit(cmd) {
		t.Fatal("ctrl+c does not quit")
	}
}

func TestCompareSort(t *testing.T) {
	m, _ := newTestModel(t, 4, 120, 40, 10)
	m = press(t, m, "s") // from the dashboard: only switches
	if m.view != viewCompare || m.compareScreen().sortCol != sortConfig {
		t.Fatalf("s on the dashboard: view %s sort %d", m.views[m.view].Name(), m.compareScreen().sortCol)
	}
	m = press(t, m, "s", "s", "s") // name, requests, then ttft p50
	if got := m.compareScreen().order; got[0] != 0 || got[3] != 3 {
		t.Fatalf("ttft p50 order %v, want fastest (0) first and slowest (3) last", got)
	}
	m = press(t, m, "S")
	if got := m.compareScreen().order; got[0] != 3 {
		t.Fatalf("reversed order %v, want 3 first", got)
	}
	m = press(t, m, "up") // endpoint 0 is now the last row
	if m.sel != m.compareScreen().order[2] {
		t.Fatalf("up selects %d, want the third row %d", m.sel, m.compareScreen().order[2])
	}
}

// r asks first (a stray key would cost the whole run): the footer asks, any key but y keeps
// the statistics (and does nothing else), y resets them.
func TestReset(t *testing.T) {
	m, _ := newTestModel(t, 2, 80, 24, 5)
	if m.snap.Endpoints[0].Requests == 0 {
		t.Fatal("no requests before reset")
	}
	m = press(t, m, "r")
	if m.snap.Endpoints[0].Requests == 0 {
		t.Fatal("r reset the statistics without asking")
	}
	if !strings.Contains(m.footer, "reset all statistics? y: reset") {
		t.Fatalf("footer %q does not ask", m.footer)
	}
	m = press(t, m, "2") // any other key: kept, and the key does not act
	if m.snap.Endpoints[0].Requests == 0 || m.view != viewDashboard || !strings.Contains(m.footer, "statistics kept") {
		t.Fatalf("after r then 2: requests %d, view %s, footer %q", m.snap.Endpoints[0].Requests, m.views[m.view].Name(), m.footer)
	}
	m = press(t, m, "r", "y")
	if m.snap.Endpoints[0].Requests != 0 || len(m.states[0].samples) != 0 {
		t.Fatal("r, y does not reset the statistics")
	}
	if !strings.Contains(m.footer, "statistics reset") {
		t.Fatalf("footer %q does not confirm", m.footer)
	}
}

// The help screen says how to close it, on the screen and in the footer; esc and ? do.
func TestHelpSaysHowToClose(t *testing.T) {
	m, _ := newTestModel(t, 2, 80, 24, 5)
	for _, closer := range []string{"esc", "?"} {
		m = press(t, m, "?")
		view := m.View()
		if !m.showHelp || !strings.Contains(view, "esc or ? closes this help") || !strings.Contains(m.footer, "esc/? close help") {
			t.Fatalf("help screen:\n%s", view)
		}
		if m = press(t, m, closer); m.showHelp {
			t.Fatalf("%s does not close the help", closer)
		}
	}
}

// A replay (no Controls) lists in its footer and help only keys that work there: nothing to
// pause, resize, stream or race.
func TestReplayListsOnlyWorkingKeys(t *testing.T) {
	events := make(chan sample.Event)
	m := New(nil, testEndpoints(2), events, Options{Now: pinned, Replay: "run.jsonl"})
	m = update(t, m, resize(120, 40))
	for _, v := range []string{"1", "2", "3", "4"} {
		m = press(t, m, v)
		for _, gone := range []string{"pause", "concurrency", "prompt", "race", "stream to"} {
			if strings.Contains(m.footer, gone) {
				t.Errorf("view %s: the replay's footer offers %q: %s", v, gone, m.footer)
			}
		}
	}
	help := press(t, m, "?").View()
	for _, gone := range []string{"pause", "concurrency", "race all", "leave prompt", "write HTML report"} {
		if strings.Contains(help, gone) {
			t.Errorf("the replay's help offers %q:\n%s", gone, help)
		}
	}
	for _, kept := range []string{"next view", "sort column", "quit"} {
		if !strings.Contains(help, kept) {
			t.Errorf("the replay's help lacks %q:\n%s", kept, help)
		}
	}
}

func TestStatusEvents(t *testing.T) {
	m, _ := newTestModel(t, 2, 80, 24, 0)
	m = update(t, m, eventsMsg{events: []sample.Event{
		&sample.Status{Endpoint: 1, State: sample.StateBackoff, Until: t0.Add(12 * time.Second), Backoff: 12 * time.Second, Concurrency: 3},
		&sample.Started{Endpoint: 0, Seq: 1, At: t0},
	}})
	m = update(t, m, redrawMsg{})
	if !strings.Contains(m.View(), "backing off 12s") {
		t.Fatalf("no back-off countdown:\n%s", m.View())
	}
	if m.states[1].concurrency != 3 {
		t.Fatalf("status not applied: concurrency %d", m.states[1].concurrency)
	}
	if !strings.Contains(m.View(), "streaming") {
		t.Fatalf("a started request does not show streaming:\n%s", m.View())
	}
}

func TestEventsClosed(t *testing.T) {
	m, _ := newTestModel(t, 2, 80, 24, 3)
	next, cmd := m.Update(eventsMsg{closed: true})
	m = next.(Model)
	if !strings.Contains(m.View(), "stopped") {
		t.Fatalf("a closed channel does not show stopped:\n%s", m.View())
	}
	if isQuit(cmd) {
		t.Fatal("a closed channel quits; it should wait for q")
	}
	if _, cmd := m.Update(keyMsg("q")); !isQuit(cmd) {
		t.Fatal("q does not quit once stopped")
	}
}

func TestIdleClockDoesNotRedraw(t *testing.T) {
	m, _ := newTestModel(t, 2, 80, 24, 0)
	m.lastData = t0.Add(-time.Hour)
	ver := m.snapVersion
	m = update(t, m, clockMsg{})
	if m.snapVersion != ver {
		t.Fatal("the idle clock takes snapshots")
	}
}

func TestWaitForEventBatches(t *testing.T) {
	ch := make(chan sample.Event, 2*maxBatch)
	for i := range 2*maxBatch - 10 {
		ch <- &sample.Delta{Seq: uint64(i)}
	}
	msg := waitForEvent(ch, nil)().(eventsMsg)
	if len(msg.events) != maxBatch || msg.closed {
		t.Fatalf("first batch %d events (closed %v), want %d", len(msg.events), msg.closed, maxBatch)
	}
	close(ch)
	msg = waitForEvent(ch, nil)().(eventsMsg)
	if len(msg.events) != maxBatch-10 || !msg.closed {
		t.Fatalf("second batch %d events (closed %v), want %d and closed", len(msg.events), msg.closed, maxBatch-10)
	}
	done := make(chan struct{})
	close(done)
	if msg := waitForEvent(make(chan sample.Event), done)(); msg != nil {
		t.Fatalf("a done context yields %v", msg)
	}
}

func TestTooSmall(t *testing.T) {
	m, _ := newTestModel(t, 4, 80, 24, 3)
	m = update(t, m, resize(30, 8))
	if !strings.Contains(m.View(), "too small") || !strings.Contains(m.View(), "need 40×10") {
		t.Fatalf("no too-small notice:\n%s", m.View())
	}
	m = update(t, m, resize(80, 24))
	if strings.Contains(m.View(), "too small") {
		t.Fatal("notice stays after growing")
	}
}

func TestSanitize(t *testing.T) {
	in := "ok\x1b[2Jclear\x07bell\ttab\r\nline\u009b31m"
	got := sanitize(in)
	if strings.ContainsAny(got, "\x1b\x07\r\u009b") {
		t.Fatalf("sanitize left control characters: %q", got)
	}
	if got != "ok[2Jclearbell  tab\nline31m" {
		t.Fatalf("sanitize = %q", got)
	}
}

func TestReadOnlyMonitor(t *testing.T) {
	m := New(nil, testEndpoints(2), make(chan sample.Event), Options{Now: pinned})
	m = update(t, m, resize(80, 24))
	m = press(t, m, "p", "+", "4", "enter")
	if !strings.Contains(m.footer, "read-only") {
		t.Fatalf("footer %q does not explain", m.footer)
	}
}

// TestStatusWordAgreesWithInFlightLine: a card's status word and its in-flight line say the
// same of the requests in flight, whatever order the Runner's Status and the requests' own
// events arrive in, and across a reset (r, y): a warm-up that finished before it is not shown
// as in flight after it, one still running is.
func TestStatusWordAgreesWithInFlightLine(t *testing.T) {
	m, _ := newTestModel(t, 1, 80, 24, 3)
	start := t0.Add(-2 * time.Second)
	started := &sample.Started{Endpoint: 0, Seq: 10, At: start}
	progress := &sample.Progress{Endpoint: 0, Seq: 10, Start: start, At: 1900 * time.Millisecond,
		FirstEvent: 280 * time.Millisecond, FirstToken: 300 * time.Millisecond, FirstAnswer: 300 * time.Millisecond,
		Tokens: 40, Chunks: 40, MaxTokens: 256}
	done := history(m.eps, 4)[3].(*sample.Done)
	done.Sample.Seq = 10
	warmStart := &sample.Started{Endpoint: 0, Seq: 20, At: start}
	warmProgress := *progress
	warmProgress.Seq, warmProgress.Warmup, warmProgress.Tokens, warmProgress.Chunks = 20, true, 64, 64
	warmDone := history(m.eps, 5)[4].(*sample.Done)
	warmDone.Sample.Seq, warmDone.Sample.Warmup = 20, true
	steps := []struct {
		name   string
		events []sample.Event
		keys   []string
		want   bool // streaming
	}{
		{"idle status, then a request with its first token", []sample.Event{&sample.Status{Endpoint: 0, State: sample.StateIdle}, started, progress}, nil, true},
		{"the request ends before the Runner says streaming", []sample.Event{done, &sample.Status{Endpoint: 0, State: sample.StateStreaming}}, nil, false},
		{"a request sent, no token yet, the Runner still idle", []sample.Event{&sample.Status{Endpoint: 0, State: sample.StateIdle}, started}, nil, true},
		{"that request ends", []sample.Event{done}, nil, false},
		{"a warm-up with its tokens", []sample.Event{warmStart, &warmProgress}, nil, true},
		{"a reset while the warm-up runs", nil, []string{"r", "y"}, true},
		{"the warm-up ends", []sample.Event{warmDone}, nil, false},
		{"a reset after the warm-up", nil, []string{"r", "y"}, false},
	}
	for _, step := range steps {
		m = press(t, m, step.keys...)
		m = update(t, m, eventsMsg{events: step.events})
		m = update(t, m, redrawMsg{})
		view := m.View()
		word, live := "", ""
		for _, l := range strings.Split(view, "\n") {
			switch {
			case strings.Contains(l, "idle"), strings.Contains(l, "streaming"):
				word = l
			case strings.Contains(l, "in flight"), strings.Contains(l, " live"), strings.Contains(l, "warm-up"):
				live = l
			}
		}
		streaming := strings.Contains(word, "streaming")
		liveSays := !strings.Contains(live, "none in flight") && !strings.Contains(live, "0 live")
		if word == "" || live == "" || streaming != liveSays {
			t.Errorf("%s: the status word and the in-flight line disagree:\n%s\n%s", step.name, word, live)
		}
		if streaming != step.want {
			t.Errorf("%s: streaming %v, want %v:\n%s\n%s", step.name, streaming, step.want, word, live)
		}
	}
	if strings.Contains(m.View(), "warm-up") { // its figures are from before the reset
		t.Errorf("after the reset the card still shows the finished warm-up:\n%s", m.View())
	}
}

// TestFooterCutsNoKeyMidWord: with a view's info on the right (the compare view's sort and
// column page), the footer's keys drop whole ("…" alone) and none is cut mid-word.
func TestFooterCutsNoKeyMidWord(t *testing.T) {
	for _, w := range []int{80, 100, 120} {
		for _, v := range []string{"1", "2", "3", "4"} {
			m, _ := newTestModel(t, 4, w, 30, 6)
			m = press(t, m, v)
			footer := ansi.Strip(m.footer)
			for i, r := range []rune(footer) {
				if r == '…' && i > 0 && []rune(footer)[i-1] != ' ' {
					t.Errorf("%d columns, view %s: a key is cut mid-word: %q", w, v, footer)
				}
			}
		}
	}
}

// A replay's Stream view says it cannot send instead of offering enter and ctrl+r, and the
// header and Tab cycle leave it out; its key still shows it, with its tab while it shows.
func TestReplayStreamViewSaysItCannotSend(t *testing.T) {
	events := make(chan sample.Event)
	m := New(nil, testEndpoints(2), events, Options{Now: pinned, Replay: "run.jsonl"})
	m = update(t, m, resize(100, 30))
	if strings.Contains(m.View(), "4 Stream") {
		t.Errorf("the replay's header lists the Stream view:\n%s", m.View())
	}
	m = press(t, m, "4")
	if m.view != viewStream {
		t.Fatalf("key 4 shows view %v, not the Stream view", m.view)
	}
	screen := m.View()
	for _, gone := range []string{"enter: stream", "ctrl+r", "race all"} {
		if strings.Contains(screen, gone) {
			t.Errorf("the replay's Stream view offers %q:\n%s", gone, screen)
		}
	}
	if !strings.Contains(screen, "a replay cannot send prompts") {
		t.Errorf("the replay's Stream view does not say it cannot send:\n%s", screen)
	}
	if header, _, _ := strings.Cut(screen, "\n"); !strings.Contains(header, "4 Stream") {
		t.Errorf("the header has no tab for the view it shows: %q", header)
	}
	for _, k := range []string{"tab", "tab", "tab", "tab", "tab", "tab"} {
		if m = press(t, m, k); m.view == viewStream {
			t.Errorf("Tab stops on the Stream view in a replay")
		}
	}
	if strings.Contains(m.View(), "4 Stream") {
		t.Errorf("the Stream view's tab stays once another view shows:\n%s", m.View())
	}
}
