package ui

import (
	"context"
	"errors"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"tokscope/watch"
)

// The screens of `tokscope watch` (package watch): the fleet table first, Enter drills into
// one server (watchview.go draws both). The model owns the Fleet: every scrape arrives as a
// message and Update is its only writer.

// WatchOptions wires a watch into its screens.
type WatchOptions struct {
	Targets  []watch.Target
	Window   time.Duration
	Instants <-chan watch.Instant // the scraper's; closed when the watch ends
	// Observe gives a scrape to the fleet (and to the record file and the exporter);
	// Retarget applies a new set of targets. Both run in Update.
	Observe  func(*watch.Fleet, watch.Instant)
	Retarget func(*watch.Fleet, []watch.Target)
	Changes  <-chan []watch.Target // a targets file re-read
	Notices  <-chan string         // shown in the footer
	Sort     string                // initial sort column (watch.ColumnKeys)
	Filter   string                // initial filter
	// Canary sends one request to a server (the drill-down's c key); nil: no canary.
	Canary func(context.Context, watch.Target) watch.CanaryResult
	// Replay, when set, is shown instead of live scrapes, at the pace it was recorded.
	Replay *watch.Replay
	// Now is the clock (tests pin it); time.Now when nil.
	Now func() time.Time
}

// RunWatch shows the fleet table full-screen until the user quits or ctx is done.
func RunWatch(ctx context.Context, opts WatchOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lipgloss.HasDarkBackground()
	if opts.Replay != nil {
		opts = replayOptions(ctx, opts)
	}
	m := newWatchModel(ctx, opts)
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithoutSignalHandler())
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
			p.Quit()
		case <-finished:
		}
	}()
	_, err := p.Run()
	if err != nil && ctx.Err() != nil && !errors.Is(err, tea.ErrProgramPanic) {
		return nil
	}
	return err
}

// replayOptions feeds a record's scrapes at the pace they were taken, on a goroutine of its
// own that stops with ctx.
func replayOptions(ctx context.Context, opts WatchOptions) WatchOptions {
	rp := opts.Replay
	instants, changes := make(chan watch.Instant), make(chan []watch.Target, 1)
	opts.Targets, opts.Window, opts.Instants, opts.Changes = rp.Targets, rp.Window, instants, changes
	opts.Observe = func(f *watch.Fleet, in watch.Instant) { f.Observe(in) }
	opts.Retarget = func(f *watch.Fleet, ts []watch.Target) { f.SetTargets(ts) }
	go func() {
		defer close(instants)
		var prev time.Time
		for _, ev := range rp.Events {
			if ev.Targets != nil {
				select {
				case changes <- ev.Targets:
				case <-ctx.Done():
					return
				}
				continue
			}
			if !prev.IsZero() {
				select {
				case <-time.After(min(ev.Instant.At.Sub(prev), 10*time.Second)):
				case <-ctx.Done():
					return
				}
			}
			prev = ev.Instant.At
			select {
			case instants <- ev.Instant:
			case <-ctx.Done():
				return
			}
		}
	}()
	return opts
}

// watchKeys are the fleet screens' bindings.
type watchKeys struct {
	Up, Down, Enter, Back, Sort, SortReverse, Filter, Canary, Quit key.Binding
}

func defaultWatchKeys() watchKeys {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return watchKeys{
		Up: b("↑/k", "up", "up", "k"), Down: b("↓/j", "down", "down", "j"),
		Enter: b("enter", "drill down", "enter"), Back: b("esc", "back", "esc", "backspace"),
		Sort: b("s", "sort", "s"), SortReverse: b("S", "reverse", "S"),
		Filter: b("/", "filter", "/"), Canary: b("c", "canary request", "c"),
		Quit: b("q", "quit", "q", "ctrl+c"),
	}
}

// Messages.
type (
	instantMsg   struct{ in watch.Instant }
	watchEndMsg  struct{}
	targetsMsg   struct{ targets []watch.Target }
	noticeMsg    struct{ text string }
	canaryMsg    struct{ res watch.CanaryResult }
	watchTickMsg struct{}
)

// watchModel is the fleet table and its drill-down.
type watchModel struct {
	ctx    context.Context
	opts   WatchOptions
	fleet  *watch.Fleet
	keys   watchKeys
	styles Styles
	now    func() time.Time

	rows          []watch.Row // as shown: filtered and sorted
	cursor        int
	sortCol       int // index in watch.Columns; -1: the targets' order
	descending    bool
	filter        string
	filtering     bool   // typing the filter
	drill         string // the drilled row's key + "\x00" + model; "" on the table
	canary        map[string]watch.CanaryResult
	canaryRunning string
	notice        string
	ended         bool
	width, height int
}

func newWatchModel(ctx context.Context, opts WatchOptions) *watchModel {
	m := &watchModel{ctx: ctx, opts: opts, fleet: watch.NewFleet(opts.Window), keys: defaultWatchKeys(),
		styles: DefaultStyles(), now: opts.Now, sortCol: -1, descending: true, filter: opts.Filter,
		canary: map[string]watch.CanaryResult{}, width: 80, height: 24}
	if m.now == nil {
		m.now = time.Now
	}
	m.fleet.SetTargets(opts.Targets)
	for i, c := range watch.Columns {
		if c.Key == opts.Sort {
			m.sortCol = i
		}
	}
	m.refresh()
	return m
}

func (m *watchModel) Init() tea.Cmd {
	return tea.Batch(m.waitForInstant(), m.waitForTargets(), m.waitForNotice(), watchTick())
}

// waitForInstant blocks on the scraper's channel for one scrape (bubbletea's realtime
// pattern: re-armed in Update after each).
func (m *watchModel) waitForInstant() tea.Cmd {
	ch := m.opts.Instants
	return func() tea.Msg {
		in, ok := <-ch
		if !ok {
			return watchEndMsg{}
		}
		return instantMsg{in}
	}
}

func (m *watchModel) waitForTargets() tea.Cmd {
	ch := m.opts.Changes
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case ts := <-ch:
			return targetsMsg{ts}
		case <-m.ctx.Done():
			return nil
		}
	}
}

func (m *watchModel) waitForNotice() tea.Cmd {
	ch := m.opts.Notices
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case n := <-ch:
			return noticeMsg{n}
		case <-m.ctx.Done():
			return nil
		}
	}
}

// watchTick redraws once a second for the ages and expiries the screens show.
func watchTick() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return watchTickMsg{} })
}

func (m *watchModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyMsg:
		return m, m.handleKey(msg)
	case instantMsg:
		m.observe(msg.in)
		m.refresh()
		return m, m.waitForInstant()
	case watchEndMsg:
		m.ended = true
	case targetsMsg:
		m.retarget(msg.targets)
		m.refresh()
		return m, m.waitForTargets()
	case noticeMsg:
		m.notice = msg.text
		return m, m.waitForNotice()
	case canaryMsg:
		m.canary[msg.res.Target] = msg.res
		m.canaryRunning = ""
	case watchTickMsg:
		m.refresh()
		return m, watchTick()
	}
	return m, nil
}

func (m *watchModel) observe(in watch.Instant) {
	if m.opts.Observe != nil {
		m.opts.Observe(m.fleet, in)
		return
	}
	m.fleet.Observe(in)
}

func (m *watchModel) retarget(ts []watch.Target) {
	if m.opts.Retarget != nil {
		m.opts.Retarget(m.fleet, ts)
		return
	}
	m.fleet.SetTargets(ts)
}

// refresh recomputes the rows shown: the fleet's, filtered, sorted; the cursor stays on its
// row where it can.
func (m *watchModel) refresh() {
	var selected string
	if m.cursor < len(m.rows) {
		selected = rowID(m.rows[m.cursor])
	}
	rows := watch.Filter(m.fleet.Rows(m.now()), m.filter)
	if m.sortCol >= 0 {
		watch.SortRows(rows, watch.Columns[m.sortCol].Key, m.descending)
	}
	m.rows = rows
	m.cursor = min(m.cursor, max(len(rows)-1, 0))
	for i, r := range rows {
		if rowID(r) == selected {
			m.cursor = i
		}
	}
}

func rowID(r watch.Row) string { return r.Key + "\x00" + r.Model }

func (m *watchModel) handleKey(msg tea.KeyMsg) tea.Cmd {
	if m.filtering {
		return m.filterKey(msg)
	}
	m.notice = ""
	switch {
	case key.Matches(msg, m.keys.Quit):
		return tea.Quit
	case m.drill != "":
		return m.drillKey(msg)
	case key.Matches(msg, m.keys.Up):
		m.cursor = max(m.cursor-1, 0)
	case key.Matches(msg, m.keys.Down):
		m.cursor = min(m.cursor+1, max(len(m.rows)-1, 0))
	case key.Matches(msg, m.keys.Enter):
		if m.cursor < len(m.rows) {
			m.drill = rowID(m.rows[m.cursor])
		}
	case key.Matches(msg, m.keys.Sort):
		m.sortCol = nextSortable(m.sortCol)
		m.refresh()
	case key.Matches(msg, m.keys.SortReverse):
		m.descending = !m.descending
		m.refresh()
	case key.Matches(msg, m.keys.Filter):
		m.filtering = true
	case key.Matches(msg, m.keys.Back):
		if m.filter != "" {
			m.filter = ""
			m.refresh()
		}
	}
	return nil
}

// nextSortable is the column after i that can be sorted by (-1, the targets' order, after
// the last).
func nextSortable(i int) int {
	for j := i + 1; j < len(watch.Columns); j++ {
		if watch.Columns[j].Key != "badges" {
			return j
		}
	}
	return -1
}

// filterKey edits the filter as it is typed; Enter keeps it, Esc clears it.
func (m *watchModel) filterKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyEnter:
		m.filtering = false
	case tea.KeyEsc:
		m.filtering, m.filter = false, ""
	case tea.KeyBackspace:
		if r := []rune(m.filter); len(r) > 0 {
			m.filter = string(r[:len(r)-1])
		}
	case tea.KeyCtrlC:
		return tea.Quit
	case tea.KeyRunes, tea.KeySpace:
		m.filter += string(msg.Runes)
	}
	m.refresh()
	return nil
}

func (m *watchModel) drillKey(msg tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Back), key.Matches(msg, m.keys.Enter):
		m.drill = ""
	case key.Matches(msg, m.keys.Canary):
		return m.sendCanary()
	}
	return nil
}

// sendCanary sends the drilled server one request, unless one is in flight.
func (m *watchModel) sendCanary() tea.Cmd {
	r, ok := m.drilled()
	if !ok || m.opts.Canary == nil || m.canaryRunning != "" {
		return nil
	}
	var target watch.Target
	for _, t := range m.fleet.Targets() {
		if t.Key() == r.Key {
			target = t
		}
	}
	m.canaryRunning = r.Key
	ctx, canary := m.ctx, m.opts.Canary
	return func() tea.Msg { return canaryMsg{canary(ctx, target)} }
}

// drilled is the row the drill-down shows.
func (m *watchModel) drilled() (watch.Row, bool) {
	for _, r := range m.fleet.Rows(m.now()) {
		if rowID(r) == m.drill {
			return r, true
		}
	}
	return watch.Row{}, false
}
