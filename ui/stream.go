package ui

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"tokscope/config"
	"tokscope/sample"
)

// Bounds of a live stream pane.
const (
	keepText   = 256 << 10 // bytes of answer (and of reasoning) text kept per pane
	keepStrip  = 512       // per-chunk gaps kept for the strip
	paneAspect = 1.0
)

// streamView is the interactive view: a prompt input, and one pane per streaming endpoint
// (one for Enter, all for a race) with live text and live figures.
type streamView struct {
	common
	controls Controls // sends the streams, counts the dropped deltas; nil in a replay
	eps      []config.Endpoint
	input    textinput.Model
	run      *streamRun
	grid     grid
	page     int
	noRun    bool // nothing sent yet
}

// streamRun is one Stream or Race: its id tags every event that belongs to it.
type streamRun struct {
	id      uint64
	race    bool
	begun   time.Time
	stopped bool
	panes   []*streamPane
	byEP    map[int]*streamPane
}

// streamPane is one endpoint's live stream.
type streamPane struct {
	ep                  int
	name                string
	started             time.Time // Started.At; zero until then
	first, last         time.Time // first and latest delta
	reasoning, answer   []byte
	chunks              int
	gaps                []float64
	done                *sample.Sample
	progress            sample.Progress // the latest; Chunks == 0 until the first
	version             uint64
	strip               *spark
	view                string
	viewKey             paneKey
	reasoningH, answerH int
}

type paneKey struct {
	w, h     int
	version  uint64
	selected bool
	second   int64 // elapsed time shown while streaming
}

// newStreamView builds the view with prompt in its input; controls (nil in a replay) send the
// streams to eps and count the deltas dropped under back-pressure.
func newStreamView(c common, prompt string, controls Controls, eps []config.Endpoint) *streamView {
	st := c.styles
	in := textinput.New()
	in.Prompt = ""
	in.Placeholder = "type a prompt"
	in.SetValue(prompt)
	in.CharLimit = 8192
	in.Cursor.SetMode(cursor.CursorStatic) // no blink ticks: the UI is idle when idle
	in.TextStyle = st.Answer
	in.PlaceholderStyle = st.Muted
	return &streamView{common: c, controls: controls, eps: eps, input: in, noRun: true}
}

func (v *streamView) Name() string { return "Stream" }

// InTabs: a replay (no Controls) cannot send, so its header and Tab cycle leave the view out;
// the key 4 still shows it, to say so, and the other views keep their numbers.
func (v *streamView) InTabs() bool { return v.controls != nil }

// ShortHelp: while the prompt has focus, only the typing keys act.
func (v *streamView) ShortHelp() []key.Binding {
	k := v.keys
	if v.Typing() {
		return []key.Binding{k.Submit, k.Race, k.Blur, k.ForceQuit}
	}
	return []key.Binding{k.Help, k.Prompt, k.Submit, k.Race, k.Back, k.Quit}
}

func (v *streamView) SetSize(w, h int) {
	v.w, v.h = w, h
	v.input.Width = max(1, w-len("prompt> ")-1)
	v.layout()
}

func (v *streamView) layout() {
	n := 1
	if v.run != nil {
		n = len(v.run.panes)
	}
	v.grid = tile(n, v.w, max(0, v.h-2), paneMinWidth, paneMinHeight, paneAspect)
}

func (v *streamView) Typing() bool   { return v.input.Focused() }
func (v *streamView) Focus() tea.Cmd { return v.input.Focus() }
func (v *streamView) Blur()          { v.input.Blur() }
func (v *streamView) Prompt() string { return strings.TrimSpace(v.input.Value()) }
func (v *streamView) Live() bool     { return v.run != nil && !v.run.stopped && !v.run.finished() }
func (v *streamView) Input(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	v.input, cmd = v.input.Update(msg)
	return cmd
}

// Begin starts showing run id over endpoints eps (indices into all).
func (v *streamView) Begin(id uint64, race bool, eps []int, all []config.Endpoint, now time.Time) {
	r := &streamRun{id: id, race: race, begun: now, byEP: make(map[int]*streamPane, len(eps))}
	for _, ep := range eps {
		p := &streamPane{ep: ep, name: all[ep].Name, strip: newSpark(v.styles.SparkGap)}
		r.panes = append(r.panes, p)
		r.byEP[ep] = p
	}
	v.run, v.noRun = r, false
	v.layout()
}

// Stop marks the run as over: the event channel closed.
func (v *streamView) Stop() {
	if v.run != nil {
		v.run.stopped = true
		for _, p := range v.run.panes {
			p.version++
		}
	}
}

func (r *streamRun) finished() bool {
	for _, p := range r.panes {
		if p.done == nil {
			return false
		}
	}
	return true
}

// pane finds the pane an event belongs to; events of older runs are ignored.
func (v *streamView) pane(stream uint64, ep sample.EndpointIndex) *streamPane {
	if v.run == nil || stream != v.run.id {
		return nil
	}
	return v.run.byEP[int(ep)]
}

func (v *streamView) Started(ev *sample.Started) {
	if p := v.pane(ev.Stream, ev.Endpoint); p != nil {
		p.started = ev.At
		p.version++
	}
}

func (v *streamView) Delta(ev *sample.Delta) {
	p := v.pane(ev.Stream, ev.Endpoint)
	if p == nil {
		return
	}
	text := sanitize(ev.Text)
	if ev.Reasoning {
		p.reasoning = appendBounded(p.reasoning, text)
	} else {
		p.answer = appendBounded(p.answer, text)
	}
	if !p.last.IsZero() {
		p.gaps = append(p.gaps, float64(ev.At.Sub(p.last))/float64(time.Millisecond))
		if len(p.gaps) > keepStrip {
			p.gaps = append(p.gaps[:0], p.gaps[len(p.gaps)-keepStrip/2:]...)
		}
	} else {
		p.first = ev.At
	}
	p.last = ev.At
	p.chunks++
	p.version++
}

// Progress takes a stream's token count so far (the probe's per-chunk estimate when the
// server sends no per-chunk usage).
func (v *streamView) Progress(ev *sample.Progress) {
	if p := v.pane(ev.Stream, ev.Endpoint); p != nil {
		p.progress = *ev
		p.version++
	}
}

func (v *streamView) Done(ev *sample.Done) {
	if p := v.pane(ev.Stream, ev.Endpoint); p != nil {
		s := ev.Sample
		p.done = &s
		p.version++
	}
}

// appendBounded appends text, dropping the oldest half when the pane holds too much.
func appendBounded(b []byte, text string) []byte {
	b = append(b, text...)
	if len(b) > keepText {
		cut := len(b) - keepText/2
		for cut < len(b) && !utf8.RuneStart(b[cut]) {
			cut++
		}
		b = append(b[:0], b[cut:]...)
	}
	return b
}

// Info is the footer's indicator: the page and dropped deltas.
func (v *streamView) Info() string {
	var parts []string
	if v.run != nil && v.grid.Pages(len(v.run.panes)) > 1 {
		parts = append(parts, "page "+itoa(v.page+1)+"/"+itoa(v.grid.Pages(len(v.run.panes))))
	}
	if v.controls != nil {
		if d := v.controls.DroppedDeltas(); d > 0 {
			parts = append(parts, itoa(int(d))+" deltas dropped")
		}
	}
	return strings.Join(parts, " · ")
}

// Render draws the prompt line, the hint line and the panes.
func (v *streamView) Render(f *frame) string {
	s := v.styles
	lines := make([]string, 0, 3)
	promptLine := s.Prompt.Render("prompt> ")
	if v.input.Focused() {
		promptLine += v.input.View()
	} else {
		promptLine += s.Muted.Render(oneLine(v.input.Value()))
	}
	lines = append(lines, truncate(promptLine, v.w))

	// The keys' hint, said shorter rather than cut where the full one does not fit.
	target := f.snap.Endpoints[f.sel].Name
	var hints []string
	switch {
	case v.controls == nil:
		hints = []string{"a replay cannot send prompts: streaming and racing need a live run",
			"a replay cannot send prompts", "replay: cannot send"}
	case v.input.Focused():
		hints = []string{"enter: stream to " + target + " · ctrl+r: race all · esc: leave prompt",
			"enter: stream · ctrl+r: race all · esc: leave prompt", "enter stream · ctrl+r race · esc leave"}
	case v.run == nil:
		hints = []string{"/: edit prompt · enter: stream to " + target + " · ctrl+r: race all endpoints · ←→: choose endpoint",
			"/: edit prompt · enter: stream to " + target + " · ctrl+r: race all · ←→: endpoint",
			"/: prompt · enter: stream · ctrl+r: race all · ←→: endpoint", "/ prompt · enter stream · ctrl+r race"}
	default:
		kind := "stream"
		if v.run.race {
			kind = "race"
		}
		run := kind + " #" + itoa(int(v.run.id))
		hints = []string{run + " · " + itoa(len(v.run.panes)) + " endpoint(s) · started " +
			v.run.begun.Format("15:04:05") + " · enter: stream to " + target + " · ctrl+r: race",
			run + " · started " + v.run.begun.Format("15:04:05") + " · enter: stream · ctrl+r: race",
			run + " · enter: stream · ctrl+r: race"}
	}
	for i := range hints {
		hints[i] = s.Muted.Render(hints[i])
	}
	lines = append(lines, figureFit(v.w, hints...))

	if v.run == nil || v.grid.PerPage() == 0 {
		return fit(strings.Join(lines, "\n"), v.w, v.h)
	}
	per := v.grid.PerPage()
	pos := 0
	for i, p := range v.run.panes {
		if p.ep == f.sel {
			pos = i
		}
	}
	v.page = pos / per
	first := v.page * per
	last := min(len(v.run.panes), first+per)
	var rows []string
	for r := 0; r < v.grid.Rows; r++ {
		var cells []string
		for c := 0; c < v.grid.Cols; c++ {
			i := first + r*v.grid.Cols + c
			if i >= last {
				break
			}
			cells = append(cells, v.renderPane(v.run.panes[i], v.grid.Widths[c], v.grid.Heights[r], f))
		}
		if len(cells) == 0 {
			break
		}
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, cells...))
	}
	lines = append(lines, rows...)
	return fit(strings.Join(lines, "\n"), v.w, v.h)
}

// renderPane draws one pane, border included, exactly w×h; it redraws only when the pane's
// stream, the selection, the size or (while streaming) the elapsed tenth of a second changed.
func (v *streamView) renderPane(p *streamPane, w, h int, f *frame) string {
	selected := p.ep == f.sel
	k := paneKey{w: w, h: h, version: p.version, selected: selected}
	if p.done == nil && !p.started.IsZero() && !v.stopped() {
		k.second = int64(f.now.Sub(p.started) / (100 * time.Millisecond))
	}
	if k == p.viewKey && p.view != "" {
		return p.view
	}
	p.viewKey = k
	iw, ih := w-4, h-2
	content := v.paneTitle(p, f.now, iw) + "\n" + strings.Join(v.paneText(p, iw, max(0, ih-3)), "\n") + "\n" +
		v.figures(p, f.now, iw) + "\n" + v.gapStrip(p, iw)
	style := v.styles.Pane
	if selected {
		style = v.styles.PaneSelected
	}
	p.view = style.Render(fit(content, iw, ih))
	return p.view
}

// stopped reports whether the run was cut short by the end of the events.
func (v *streamView) stopped() bool { return v.run != nil && v.run.stopped }

// paneTitle is the endpoint's name and, right-aligned, the pane's status with the elapsed
// time unless the name would have to shrink for it. The name comes first: an error kind too
// long to fit beside it (stream_error in a race's 25-column pane) reads "error", the
// message on the pane's last row saying which.
func (v *streamView) paneTitle(p *streamPane, now time.Time, w int) string {
	s := v.styles
	status, style := paneStatus(s, p, v.stopped())
	if p.done != nil && p.done.Outcome == sample.OutcomeError && ansi.StringWidth(p.name+" "+status) > w {
		status = "error"
	}
	if el := v.paneElapsed(p, now); el != "" && ansi.StringWidth(p.name+" "+status+" "+el) <= w {
		status += " " + el
	}
	return spread(s.Title.Render(p.name), style.Render(status), w)
}

// paneStatus is the pane's status word and its style; stopped: the run was cut short.
func paneStatus(s *Styles, p *streamPane, stopped bool) (string, lipgloss.Style) {
	switch {
	case p.done != nil && p.done.Outcome == sample.OutcomeError:
		if p.done.ErrorKind == "" {
			return "error", s.StatusError
		}
		return p.done.ErrorKind, s.StatusError
	case p.done != nil && p.done.Outcome == sample.OutcomeTruncated:
		return "truncated", s.Warn
	case p.done != nil:
		return "done", s.Good
	case stopped:
		return "stopped", s.StatusStopped
	case p.chunks > 0:
		return "streaming", s.StatusStreaming
	case !p.started.IsZero():
		return "sent", s.StatusIdle
	}
	return "waiting", s.StatusIdle
}

// paneText is the pane's text in h rows of width w: the newest reasoning over a separator,
// then the newest answer; a failed request's error message on the last rows, wrapped (up to
// a third of the pane; cut only past that).
func (v *streamView) paneText(p *streamPane, w, h int) []string {
	s := v.styles
	failed := p.done != nil && p.done.Outcome == sample.OutcomeError
	textH := h
	var errLines []string
	if failed {
		errLines = wrapLines(oneLine(p.done.ErrorMessage), w)
		if n := max(1, min(len(errLines), h/3)); n < len(errLines) {
			errLines[n-1] = strings.Join(errLines[n-1:], " ")
			errLines = errLines[:n]
		}
		textH -= len(errLines)
	}
	var text []string
	if len(p.reasoning) > 0 && textH >= 3 {
		rh := reasoningRows(textH, len(tail(p.reasoning, w, textH/3)), len(p.answer) > 0)
		for _, l := range tail(p.reasoning, w, rh) {
			text = append(text, s.Reasoning.Render(l))
		}
		text = append(text, s.Faint.Render(fitLine("── answer ", w)))
		textH -= rh + 1
	}
	for _, l := range tail(p.answer, w, textH) {
		text = append(text, s.Answer.Render(l))
	}
	text = strings.Split(fit(strings.Join(text, "\n"), w, h), "\n")
	if failed {
		text = text[:max(0, len(text)-len(errLines))]
		for _, l := range errLines {
			text = append(text, truncate(s.Bad.Render(l), w))
		}
	}
	return text
}

// reasoningRows is how many of textH text rows (3 or more) the reasoning gets, one more
// going to the separator: while an answer comes, as many as its newest lines need (have),
// between one and a third; before any answer, all but the separator's.
func reasoningRows(textH, have int, answer bool) int {
	if !answer {
		return textH - 1
	}
	return max(1, min(textH/3, have))
}

// gapStrip is the pane's bottom line: a sparkline of the per-chunk gaps and its label.
func (v *streamView) gapStrip(p *streamPane, w int) string {
	s := v.styles
	label := stripLabel(p.gaps, w)
	stripW := max(1, w-ansi.StringWidth(label))
	p.strip.Set(p.gaps, stripW, 1)
	if len(p.gaps) == 0 {
		return s.Faint.Render(strings.Repeat("·", stripW)) + s.Muted.Render(label)
	}
	return p.strip.View() + s.Muted.Render(label)
}

// stripLabel names the gap strip: " gaps" before there are any, then the largest of the
// newest w gaps, " max 41ms".
func stripLabel(gaps []float64, w int) string {
	if len(gaps) == 0 {
		return " gaps"
	}
	top := 0.0
	for _, g := range gaps[max(0, len(gaps)-w):] {
		top = max(top, g)
	}
	return " max " + ms(top) + "ms"
}

// figures is the live line under a pane: TTFT, decode tok/s so far, tokens so far; after
// Done, the Sample's own figures.
func (v *streamView) figures(p *streamPane, now time.Time, w int) string {
	s := v.styles
	L, V := s.Label.Render, s.Value.Render
	if d := p.done; d != nil {
		if d.Outcome == sample.OutcomeError {
			return figureFit(w, s.Bad.Render("failed")+L(" after ")+V(itoa(p.chunks))+L(" chunks"),
				s.Bad.Render("failed")+L(" · ")+V(itoa(p.chunks))+L(" chunks"),
				s.Bad.Render("failed")+L(" ")+V(itoa(p.chunks))+L(" ch"))
		}
		ttft, rate := dash, dash
		if t, ok := d.TTFT(); ok {
			ttft = durMs(t) + "ms"
		}
		mark := approx(string(d.Source))
		if r, ok := d.DecodeRate(); ok {
			rate = mark + num(r)
		}
		return figureFit(w,
			L("ttft ")+V(ttft)+L(" · ")+V(rate)+L(" tok/s · ")+V(mark+itoa(d.Tokens))+L(" tok ")+s.Muted.Render(sourceLabel(string(d.Source))),
			L("ttft ")+V(ttft)+L(" · ")+V(rate)+L(" tok/s · ")+V(mark+itoa(d.Tokens))+L(" tok"),
			L("ttft ")+V(ttft)+" "+V(rate)+L(" tok/s ")+V(mark+itoa(d.Tokens))+L(" tok"),
			V(ttft)+L(" ")+V(rate)+L("t/s ")+V(mark+itoa(d.Tokens))+L("tok"))
	}
	// While it streams: the probe's count so far (the server's per-chunk usage, else its
	// per-chunk estimate, ≈) and the decode rate on what has arrived, docs/metrics.md's formula, so
	// that it ends on the Sample's own figure.
	ttft, rate, toks := dash, dash, dash
	if pr := &p.progress; pr.Chunks > 0 {
		mark := ""
		if pr.Estimated {
			mark = "≈"
		}
		if d, ok := pr.TTFT(sample.TTFTFirstToken); ok {
			ttft = durMs(d) + "ms"
		}
		if r, ok := pr.DecodeRate(); ok {
			rate = mark + num(r)
		}
		toks = mark + itoa(int(math.Round(pr.Tokens)))
	}
	return figureFit(w,
		L("ttft ")+V(ttft)+L(" · ")+V(rate)+L(" tok/s · ")+V(toks)+L(" tok so far"),
		L("ttft ")+V(ttft)+L(" · ")+V(rate)+L(" tok/s · ")+V(toks)+L(" tok"),
		L("ttft ")+V(ttft)+" "+V(rate)+L(" tok/s ")+V(toks)+L(" tok"),
		V(ttft)+L(" ")+V(rate)+L("t/s ")+V(toks)+L("tok"))
}

// paneElapsed is the time since the request was sent: live while streaming, final after.
func (v *streamView) paneElapsed(p *streamPane, now time.Time) string {
	switch {
	case p.done != nil:
		return elapsed(p.done.End)
	case p.started.IsZero():
		return ""
	case v.stopped():
		if p.last.IsZero() {
			return ""
		}
		return elapsed(p.last.Sub(p.started))
	}
	return elapsed(now.Sub(p.started).Truncate(100 * time.Millisecond))
}

// figureFit returns the first candidate that fits w, else the last one truncated.
func figureFit(w int, candidates ...string) string {
	for _, c := range candidates {
		if ansi.StringWidth(c) <= w {
			return c
		}
	}
	return truncate(candidates[len(candidates)-1], w)
}

// tail wraps text to w columns and returns its last h lines.
func tail(text []byte, w, h int) []string {
	if h <= 0 || w <= 0 || len(text) == 0 {
		return nil
	}
	// Only the end can be shown: wrap no more than a few screens of it.
	if budget := w*h*4 + 256; len(text) > budget {
		cut := len(text) - budget
		for cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut++
		}
		text = text[cut:]
	}
	lines := strings.Split(ansi.Wrap(string(text), w, ""), "\n")
	if len(lines) > h {
		lines = lines[len(lines)-h:]
	}
	for i := range lines {
		lines[i] = truncate(lines[i], w)
	}
	return lines
}
