package ui

import (
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"tokscope/config"
	"tokscope/fanout"
	"tokscope/sample"
	"tokscope/stats"
	"tokscope/sweep"
)

// Options tune the UI; the zero value is fine.
type Options struct {
	// Now is the clock; nil means time.Now. Tests pin it for deterministic goldens.
	Now func() time.Time
	// Prompt is the stream view's initial prompt; "" means config.DefaultPrompt.
	Prompt string
	// Board is the run's statistics (with the sweep's steps and the report), fed by the run's
	// loop; the views draw its snapshots. Nil: an empty Board, which nothing feeds. With
	// stats.WithRate among its options the cards show the client queue and dropped arrivals.
	Board *Board
	// Replay names the record file being replayed: the header says so instead of "stopped".
	Replay string
	// Search, when not nil, is the capacity search being run (--find-max): the sweep view
	// shows it (capacityview.go).
	Search *sweep.Search
}

// Model is the root bubbletea model. It is a value whose children are pointers: Update works
// on its copy and returns it, so there is one live copy at a time.
type Model struct {
	controls Controls
	eps      []config.Endpoint
	events   <-chan sample.Event
	done     <-chan struct{} // closed when Run's context ends; unblocks waitForEvent
	now      func() time.Time
	keys     *KeyMap
	styles   *Styles
	help     help.Model

	board       *Board // the run's statistics: the Model reads them, the run's loop feeds them
	snap        stats.Snapshot
	snapVersion uint64
	states      []*endpointState

	view, back    view // back: where Esc from the detail view returns
	sel           int
	width, height int
	showHelp      bool
	confirmReset  bool // r was pressed: the footer asks, the next key answers
	stopped       bool // the event channel was closed
	started       time.Time
	replay        string

	notice    string
	noticeBad bool
	noticeID  int

	statsDirty, streamDirty bool
	redrawArmed             bool
	lastData                time.Time // last Done, for draining the aggregate tok/s window

	views      [nViews]screen // by view: header and Tab order; they own their keys and events (input.go)
	headToHead *headToHead    // compare view's head-to-head rows, computed in a Cmd

	// missing: what this session lacks (the Runner's Controls, a Reporter); its keys are disabled (keys.go).
	missing []requirement

	capacitySearch capacitySearch // the capacity search being run, nil without --find-max (load.go)
	rate           float64        // open-loop arrivals per second per endpoint, 0 in the closed loop

	header, body, footer string
}

// New builds the model. controls may be nil (a read-only monitor: pause, concurrency and streams
// are then unavailable). events is read until closed.
func New(controls Controls, eps []config.Endpoint, events <-chan sample.Event, opts Options) Model {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	prompt := opts.Prompt
	if prompt == "" {
		prompt = config.DefaultPrompt
	}
	st, keys := DefaultStyles(), DefaultKeyMap()
	m := Model{
		controls:   controls,
		eps:        eps,
		events:     events,
		now:        now,
		keys:       &keys,
		styles:     &st,
		help:       help.New(),
		board:      opts.Board,
		headToHead: &headToHead{},
		replay:     opts.Replay,
		states:     make([]*endpointState, len(eps)),
		started:    now(),
	}
	m.help.Styles = st.Help
	if controls == nil {
		m.missing = append(m.missing, keys.controlKeys().disable())
	}
	if m.board == nil {
		m.board = NewBoard(eps, nil, nil)
	}
	if !m.board.reporting() {
		m.missing = append(m.missing, keys.reporterKeys().disable())
	}
	for i, ep := range eps {
		s := &endpointState{concurrency: max(ep.Concurrency, 1), tlsUnverified: ep.InsecureSkipVerify}
		if controls != nil {
			s.paused = controls.Paused(sample.EndpointIndex(i))
			if c := controls.Concurrency(sample.EndpointIndex(i)); c > 0 {
				s.concurrency = c
			}
		}
		m.states[i] = s
	}
	m.initLoad(opts)
	c := common{styles: m.styles, keys: m.keys}
	// The instant TTFT is measured to (--ttft-from), as the statistics were told (Stats).
	ttftFrom, _ := sample.ParseTTFTFrom(m.board.Snapshot(m.started, nil).TTFTFrom)
	m.views = [nViews]screen{
		viewDashboard: newDashboard(c, len(eps), m.rate > 0),
		viewCompare:   newCompareView(c, eps, m.headToHead),
		viewDetail:    newDetailView(c),
		viewStream:    newStreamView(c, prompt, controls, eps),
		viewSweep:     newSweepView(c, m.board, m.capacitySearch, namesOf(eps)),
		viewLanes:     newLanesView(c, eps, ttftFrom),
	}
	m.takeSnapshot()
	return m
}

// Init starts reading events and the idle clock.
func (m Model) Init() tea.Cmd {
	return tea.Batch(waitForEvent(m.events, m.done), tickClock())
}

// Update handles one message; it is the only writer of the model.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, cmd
}

// View joins the cached header, body and footer; it never draws.
func (m Model) View() string {
	if m.width == 0 {
		return ""
	}
	if tooSmall(m.width, m.height) {
		return m.body
	}
	return m.header + "\n" + m.body + "\n" + m.footer
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.relayout()
		return nil
	case tea.KeyMsg:
		return m.handleKey(msg)
	case eventsMsg:
		return m.handleEvents(msg)
	case redrawMsg:
		m.redrawArmed = false
		m.flush()
		return m.refreshHeadToHead()
	case clockMsg:
		m.handleClock()
		return tea.Batch(tickClock(), m.refreshHeadToHead())
	case headToHeadMsg:
		return m.handleHeadToHead(msg)
	case reportSavedMsg:
		return m.handleReportSaved(msg)
	case clearNoticeMsg:
		if msg.id == m.noticeID && m.notice != "" {
			m.notice = ""
			m.renderFooter()
		}
		return nil
	}
	return nil
}

// handleEvents applies a batch and re-arms the event Cmd unless the channel closed. Drawing
// waits for the throttled redraw tick.
func (m *Model) handleEvents(msg eventsMsg) tea.Cmd {
	for _, ev := range msg.events {
		m.handleEvent(ev)
	}
	if msg.closed {
		if !m.stopped {
			m.handleClosed() // a screen whose run ended without an End
		}
		return m.armRedraw()
	}
	return tea.Batch(waitForEvent(m.events, m.done), m.armRedraw())
}

// handleEvent applies one event, which the run's loop has already given the statistics (the
// Board): a server scrape (--server-metrics: the cards, the compare and the detail view then
// show the servers' own figures beside the client's) only marks them for the next redraw; the
// end of the Runner's events marks the run stopped (the UI stays, and scrapes may follow).
// Otherwise the views that take events take theirs (an interactive stream's goes to the
// stream view only), and the others update the endpoint's state.
func (m *Model) handleEvent(ev sample.Event) {
	switch ev.(type) {
	case *fanout.Scrape:
		m.statsDirty = true
		return
	case *fanout.End:
		if !m.stopped {
			m.handleClosed()
		}
		return
	}
	counted := countedEvent(ev)
	if m.observeViews(ev) {
		m.streamDirty = true
		return
	}
	if counted {
		m.statsDirty = true
	}
	switch ev := ev.(type) {
	case *sample.Started:
		if st := m.state(ev.Endpoint); st != nil && ev.Stream == 0 {
			st.inflight++
			st.version++
			m.statsDirty = true
		}
	case *sample.Progress:
		switch st := m.state(ev.Endpoint); {
		case ev.Stream != 0:
		case ev.Warmup && st != nil:
			st.warmup, st.warmupLive = *ev, true // not counted: shown as a warm-up until the first counted one
			st.version++
			m.statsDirty = true
		case counted:
			m.lastData = m.now()
		}
	case *sample.Done:
		if st := m.state(ev.Endpoint); st != nil && ev.Stream == 0 {
			st.inflight = max(0, st.inflight-1)
			if ev.Sample.Warmup {
				st.warmupDone(&ev.Sample)
			}
			s := ev.Sample
			st.addSample(&s)
			m.statsDirty = true
			m.lastData = m.now()
		}
	case *sample.Status:
		if st := m.state(ev.Endpoint); st != nil {
			m.handleStatus(st, ev)
		}
	}
}

// countedEvent: ev changes what the statistics show (a finished background request, or the
// tokens so far of a counted one), so the next redraw takes a snapshot.
func countedEvent(ev sample.Event) bool {
	switch ev := ev.(type) {
	case *sample.Done:
		return ev.Stream == 0
	case *sample.Progress:
		return ev.Stream == 0 && !ev.Warmup
	}
	return false
}

// handleStatus takes the Runner's word on an endpoint's state.
func (m *Model) handleStatus(st *endpointState, ev *sample.Status) {
	st.state, st.until = ev.State, ev.Until
	st.connPerRequest, st.reason = ev.ConnPerRequest, ev.Reason
	if was := st.finishing; ev.InFlight != was {
		st.finishing = ev.InFlight
		defer m.renderFooter()
	}
	if ev.State == sample.StatePaused {
		st.paused = true
	} else if m.controls != nil {
		st.paused = m.controls.Paused(ev.Endpoint)
	}
	if ev.Concurrency > 0 {
		st.concurrency = ev.Concurrency
	}
	st.version++
	m.statsDirty = true
}

// handleClosed: the Runner stopped; the UI stays, marked stopped, until q.
func (m *Model) handleClosed() {
	m.stopped = true
	m.statsDirty = true
	for _, st := range m.states {
		st.state, st.inflight, st.drawnInflight, st.finishing = sample.StateStopped, 0, 0, 0
		st.version++
	}
	m.stopViews()
	m.renderHeader()
	m.renderFooter()
}

// armRedraw schedules one redraw tick if something is dirty and none is pending: at most
// ~4 Hz while data flows, nothing while idle.
func (m *Model) armRedraw() tea.Cmd {
	if m.redrawArmed || !(m.statsDirty || m.streamDirty) {
		return nil
	}
	m.redrawArmed = true
	d := redrawEvery
	if m.view == viewStream && m.streamDirty && !m.statsDirty {
		d = streamRedrawEvery
	}
	return scheduleRedraw(d)
}

// flush takes a snapshot if statistics changed and redraws the active view.
func (m *Model) flush() {
	if m.statsDirty {
		m.takeSnapshot()
	}
	m.statsDirty, m.streamDirty = false, false
	m.renderBody()
}

// handleClock runs once a second: the header clock, back-off countdowns, the stream
// elapsed time, and the aggregate tok/s window draining after traffic stops.
func (m *Model) handleClock() {
	m.refreshSweep()
	now := m.now()
	busy := now.Sub(m.lastData) < stats.AggregateWindow+clockEvery
	for _, st := range m.states {
		if st.state == sample.StateBackoff || st.inflight > 0 {
			busy = true
		}
	}
	if busy && !m.redrawArmed {
		m.takeSnapshot()
	}
	m.renderHeader()
	if busy || m.viewsLive() {
		m.renderBody()
	}
}

func (m *Model) takeSnapshot() {
	m.snap = m.board.Snapshot(m.now(), m.arrivals())
	for _, st := range m.states {
		st.drawnInflight, st.drawnWarmupLive = st.inflight, st.warmupLive
	}
	// The views index Endpoints by endpoint number: make sure there is one per endpoint.
	if len(m.snap.Endpoints) != len(m.eps) {
		es := make([]stats.EndpointStats, len(m.eps))
		copy(es, m.snap.Endpoints)
		for i := len(m.snap.Endpoints); i < len(es); i++ {
			es[i] = stats.EndpointStats{Name: m.eps[i].Name, Model: m.eps[i].Model, BaseURL: m.eps[i].BaseURL, API: m.eps[i].API}
		}
		m.snap.Endpoints = es
	}
	m.snapVersion++
}

func (m *Model) state(ep sample.EndpointIndex) *endpointState {
	if !ep.In(len(m.states)) {
		return nil
	}
	return m.states[ep]
}

// relayout sizes every view for the terminal; only on resize.
func (m *Model) relayout() {
	w, h := bodySize(m.width, m.height)
	for _, v := range m.views {
		v.SetSize(w, h)
	}
	m.help.Width = w
	m.renderAll()
}

func (m *Model) renderAll() {
	m.renderHeader()
	m.renderBody()
}

// renderBody redraws the active view (its children skip what has not changed).
func (m *Model) renderBody() {
	if m.width == 0 {
		return
	}
	if tooSmall(m.width, m.height) {
		m.body = tooSmallView(m.width, m.height)
		return
	}
	w, h := bodySize(m.width, m.height)
	switch {
	case m.showHelp:
		m.body = m.fullHelp(w, h)
	case len(m.eps) == 0:
		m.body = fit(m.styles.Muted.Render("no endpoints configured"), w, h)
	default:
		m.body = m.views[m.view].Render(m.frame())
	}
	m.renderFooter()
}

const helpNotes = "In the stream view, / edits the prompt, enter streams it to the selected endpoint and " +
	"ctrl+r races it on all endpoints at once. Figures marked ≈ come from estimated token counts " +
	"(tokenizer or chunk count); — means no data yet."

// fullHelp is the `?` screen: the key groups flowed into as many columns as fit (only the
// keys that work in this session), then notes.
func (m *Model) fullHelp(w, h int) string {
	var rows, row []string
	rowW := 0
	for _, group := range m.keys.FullHelp() {
		col := m.help.FullHelpView([][]key.Binding{group})
		cw := lipgloss.Width(col) + 4
		if rowW > 0 && rowW+cw > w {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row, rowW = nil, 0
		}
		row = append(row, lipgloss.NewStyle().PaddingRight(4).Render(col))
		rowW += cw
	}
	rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
	notes := m.styles.Muted.Render(ansi.Wrap(helpNotes, max(1, min(w, 100)), ""))
	title := m.styles.Title.Render("keys") + m.styles.Muted.Render(" · esc or ? closes this help")
	return fit(title+"\n\n"+strings.Join(rows, "\n\n")+"\n\n"+notes, w, h)
}

func (m *Model) renderHeader() {
	if m.width == 0 {
		return
	}
	s := m.styles
	var tabs []string
	for v := view(0); v < nViews; v++ {
		if !m.viewShown(v) && v != m.view { // a view out of the Tab cycle has its tab while it shows
			continue
		}
		t := itoa(int(v)+1) + " " + m.views[v].Name()
		if v == m.view && !m.showHelp {
			tabs = append(tabs, s.TabActive.Render(t))
		} else {
			tabs = append(tabs, s.Tab.Render(t))
		}
	}
	right := s.Clock.Render(m.now().Format("15:04:05"))
	switch {
	case m.replay != "":
		right = s.Notice.Render("replay "+m.replay) + " " + right
	case m.stopped:
		right = s.Stopped.Render("■ stopped") + " " + right
	}
	m.header = spread(s.Header.Render("tokscope")+"  "+strings.Join(tabs, "  "), right, m.width)
}

func (m *Model) renderFooter() {
	if m.width == 0 {
		return
	}
	s := m.styles
	active := m.views[m.view]
	info := active.Info()
	// The keys leave room for the view's info on the right: the help drops whole keys (and
	// says … for them) rather than spread cutting the last key mid-word.
	keys := m.help
	if info != "" {
		keys.Width = max(1, m.width-lipgloss.Width(info)-1)
	}
	left := keys.ShortHelpView(active.ShortHelp())
	if n := m.finishing(); n > 0 {
		left = s.Notice.Render(finishingText(n))
	}
	if m.showHelp {
		left, info = m.help.ShortHelpView([]key.Binding{m.keys.CloseHelp, m.keys.Quit}), ""
	}
	if m.notice != "" {
		style := s.Notice
		if m.noticeBad {
			style = s.NoticeError
		}
		left = style.Render(m.notice)
	}
	m.footer = spread(left, s.PageInfo.Render(info), m.width)
}

// setNotice shows a transient footer message.
func (m *Model) setNotice(text string, bad bool) tea.Cmd {
	m.notice, m.noticeBad = text, bad
	m.noticeID++
	m.renderFooter()
	return clearNoticeAfter(noticeFor, m.noticeID)
}

func (m *Model) setView(v view) tea.Cmd {
	if v == viewDetail && m.view != viewDetail {
		m.back = m.view
		if m.back == viewStream {
			m.back = viewDashboard
		}
	}
	m.view = v
	m.showHelp = false
	m.renderAll()
	return m.refreshHeadToHead()
}

// finishing is how many requests are finishing within the grace after the run ended.
func (m *Model) finishing() int {
	n := 0
	for _, st := range m.states {
		n += st.finishing
	}
	return n
}

// finishingText is the footer while the run's last requests finish: "finishing 4 requests…".
func finishingText(n int) string {
	if n == 1 {
		return "finishing 1 request…"
	}
	return "finishing " + itoa(n) + " requests…"
}
