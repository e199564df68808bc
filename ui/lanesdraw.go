package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"tokscope/sample"
	"tokscope/workload"
)

// Drawing the Lanes view (lanes.go): the rows, the in-flight strip and the breakdown.

// laneLabel is the width of a row's label: "▸ 12├1 ".
const laneLabel = 8

// Render draws the selected endpoint's lanes over the last lanesWindow.
func (v *lanesView) Render(f *frame) string {
	if f.sel < 0 || f.sel >= len(v.eps) {
		return fit("", v.w, v.h)
	}
	ep := f.sel
	v.drawn = f.now
	var b strings.Builder
	rows := v.rowsOf(ep, f.now)
	if len(rows) == 0 {
		b.WriteString(strings.Join(v.header(f, ep), "\n") + "\n")
		msg := "no agent session here: --sessions FILE replays one per lane (-n)"
		if len(v.eps[ep].lanes) > 0 {
			msg = "no turn in the last minute"
		}
		b.WriteString(v.styles.Muted.Render(msg))
		return fit(b.String(), v.w, v.h)
	}
	cur, curLane := v.shown(ep)
	if cur == nil {
		v.selOn = false
		cur, curLane = v.shown(ep)
	}
	width := max(v.w-laneLabel, 10)
	from := f.now.Add(-lanesWindow)
	col := func(t time.Time) int { return int(float64(t.Sub(from)) / float64(lanesWindow) * float64(width)) }
	var detail []string
	if cur != nil {
		text := cur.text
		if text == "" {
			text = flyingBreakdown(cur, f.now)
		}
		detail = wrapLines(text, max(v.w-10, 10))
	}
	head := v.header(f, ep)
	budget := max(v.h-len(head)-2-len(detail), 1) // the header, the strip and its axis, the breakdown
	first := 0
	if at := slices.IndexFunc(rows, func(r laneRowRef) bool { return cur != nil && r.l == curLane && r.row == cur.row }); at >= budget {
		first = at - budget + 1
	}
	last := min(first+budget, len(rows))
	if first > 0 || last < len(rows) { // the rows that fit, the shown turn's among them
		head = v.header(f, ep, fmt.Sprintf("rows %d–%d of %d", first+1, last, len(rows)))
	}
	b.WriteString(strings.Join(head, "\n") + "\n")
	for _, r := range rows[first:last] {
		mark := "  "
		if cur != nil && r.l == curLane && r.row == cur.row {
			mark = "▸ "
		}
		name := fmt.Sprintf("%s%3d   ", mark, r.l.num)
		if r.row > 0 {
			name = fmt.Sprintf("%s%3d├%d ", mark, r.l.num, r.l.depthOf(r.row))
		}
		b.WriteString(v.styles.Label.Render(name) + v.drawRow(r, cur, width, col, f.now) + "\n")
	}
	strip, peak, now := v.inFlight(ep, width, col, f.now)
	b.WriteString(v.styles.Label.Render(padRight("  flight", laneLabel)) + v.styles.Muted.Render(strip) + "\n")
	b.WriteString(v.styles.Muted.Render(strings.Repeat(" ", laneLabel)+axisText(width, peak, now)) + "\n")
	for i, l := range detail {
		head := "          "
		if i == 0 {
			head = "last turn "
			if v.selOn {
				head = "selected  "
			}
		}
		b.WriteString(v.styles.Label.Render(head) + l + "\n")
	}
	return fit(b.String(), v.w, v.h)
}

// Cell kinds of a row.
const (
	cellBlank = iota
	cellSpan  // a sub-agent between its turns, its fork and its join
	cellQueue // the server's queue, where it reports one
	cellWait  // t0 (or the queue's end) to the first token
	cellDecode
	cellFailed
)

// drawRow draws one row into width columns; the turn cur is highlighted.
func (v *lanesView) drawRow(r laneRowRef, cur *laneTurn, width int, col func(time.Time) int, now time.Time) string {
	cells := make([]rune, width)
	kind := make([]int, width)
	sel := make([]bool, width)
	for i := range cells {
		cells[i] = ' '
	}
	put := func(c int, ch rune, k int) {
		if c >= 0 && c < width {
			cells[c], kind[c] = ch, k
		}
	}
	if r.row > 0 {
		for _, sp := range r.l.spans {
			if sp.row != r.row {
				continue
			}
			to := sp.to
			if !sp.joined {
				to = now
			}
			for c := max(col(sp.from), 0); c <= min(col(to), width-1); c++ {
				put(c, '─', cellSpan)
			}
			put(col(sp.from)-1, '╭', cellSpan)
			if sp.joined {
				put(col(sp.to)+1, '╯', cellSpan)
			}
		}
	}
	for _, t := range r.l.onRow(r.row) {
		end := t.end
		if end.IsZero() {
			end = now
		}
		first := t.first
		if first.IsZero() || first.After(end) {
			first = end
		}
		for c := max(col(t.start), 0); c <= min(col(end), width-1); c++ {
			switch {
			case t.failed:
				put(c, v.failedGlyph(c >= col(first)), cellFailed)
			case c >= col(first):
				put(c, '█', cellDecode)
			case !t.queued.IsZero() && c < col(t.queued):
				put(c, '▁', cellQueue)
			default:
				put(c, '░', cellWait)
			}
			sel[c] = t == cur
		}
	}
	return v.paint(cells, kind, sel)
}

// failedGlyph is a failed turn's cell: its shape in the error colour, × without colour.
func (v *lanesView) failedGlyph(decode bool) rune {
	switch {
	case v.styles.Plain:
		return '×'
	case decode:
		return '█'
	}
	return '░'
}

func (v *lanesView) paint(cells []rune, kind []int, sel []bool) string {
	var b strings.Builder
	for i, r := range cells {
		st := v.styles.App
		switch kind[i] {
		case cellSpan:
			st = v.styles.Faint
		case cellQueue:
			st = v.styles.Warn
		case cellWait:
			st = v.styles.SparkTTFT
		case cellDecode:
			st = v.styles.SparkDecode
		case cellFailed:
			st = v.styles.Bad
		}
		if sel[i] {
			st = st.Reverse(true)
		}
		if kind[i] == cellBlank && !sel[i] {
			b.WriteRune(r)
			continue
		}
		b.WriteString(st.Render(string(r)))
	}
	return b.String()
}

// inFlight draws, per column, the most requests of the endpoint in flight at once during
// the column's time (every request it started: session turns, warm-ups, streams); it returns
// the strip, the window's peak and the number in flight now.
func (v *lanesView) inFlight(ep int, width int, col func(time.Time) int, now time.Time) (string, int, int) {
	el := v.eps[ep]
	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	add := func(from, to time.Time) {
		if to.Before(now.Add(-lanesWindow)) {
			return
		}
		edges = append(edges, edge{from, 1}, edge{to, -1})
	}
	for _, iv := range el.closed {
		add(iv.from, iv.to)
	}
	for _, at := range el.open {
		add(at, now)
	}
	// Starts before ends at one instant: a turn that begins as another ends counts both.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return b.d - a.d
	})
	most := make([]int, width)
	n := 0
	for _, e := range edges {
		n += e.d
		if c := col(e.at); e.d > 0 && c >= 0 && c < width {
			most[c] = max(most[c], n)
		}
	}
	// A column with no edge holds what was in flight at its start.
	n = 0
	level := make([]int, width)
	i := 0
	for c := range width {
		for i < len(edges) && col(edges[i].at) < c {
			n += edges[i].d
			i++
		}
		level[c] = max(most[c], n)
	}
	peak := slices.Max(append(level, 0))
	return sparkOf(level, max(peak, 1)), peak, len(el.open)
}

// sparkOf draws counts as eighth blocks of top; 0 is blank.
func sparkOf(counts []int, top int) string {
	levels := []rune(" ▁▂▃▄▅▆▇█")
	var b strings.Builder
	for _, n := range counts {
		b.WriteRune(levels[(n*(len(levels)-1)+top-1)/top])
	}
	return b.String()
}

// laneLegend names the rows' glyphs, an item at a time so the header wraps between them.
var laneLegend = []string{"▁ server queue", "░ to first token", "█ decode", "blank, ─: tool time", "╭╯ fork, join"}

// header is the title (with more, the rows shown), the header's figures (the ideal and served
// cache hits, the sessions done) and the glyphs' legend, wrapped between items to the width:
// one line when it all fits, else the legend on lines of its own; never an item cut but one
// wider than the view.
func (v *lanesView) header(f *frame, ep int, more ...string) []string {
	items := []string{strings.Join(append([]string{"Lanes: " + v.names[ep]}, more...), " ")}
	if f.snap != nil && ep < len(f.snap.Endpoints) && f.snap.Endpoints[ep].Sessions != nil {
		s := f.snap.Endpoints[ep].Sessions
		pct := func(p *float64) string {
			if p == nil {
				return "—"
			}
			return fmt.Sprintf("%.1f%%", *p*100)
		}
		items = append(items, "cache hit ideal "+pct(s.IdealHitRate)+"  served "+pct(s.ServedHitRate),
			plural(s.Completed, "session", "sessions")+" done, "+plural(s.Turns, "turn", "turns"))
	}
	lines := packItems(items, v.w)
	if legend := strings.Join(laneLegend, "  "); len(lines) == 1 && ansi.StringWidth(lines[0])+2+ansi.StringWidth(legend) <= v.w {
		lines[0] += "  " + legend
	} else { // the legend on lines of its own
		lines = append(lines, packItems(laneLegend, v.w)...)
	}
	for i, l := range lines {
		l = truncate(l, v.w)
		if rest, ok := strings.CutPrefix(l, items[0]); i == 0 && ok {
			lines[i] = v.styles.Title.Render(items[0]) + v.styles.Muted.Render(rest)
			continue
		}
		lines[i] = v.styles.Muted.Render(l)
	}
	return lines
}

// packItems puts items on lines of width w, two spaces apart, breaking only between them.
func packItems(items []string, w int) []string {
	var lines []string
	cur := ""
	for _, it := range items {
		switch {
		case cur == "":
			cur = it
		case ansi.StringWidth(cur)+2+ansi.StringWidth(it) <= w:
			cur += "  " + it
		default:
			lines, cur = append(lines, cur), it
		}
	}
	return append(lines, cur)
}

// plural is n and the noun, singular for 1.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// axisText marks the window's start and now, and between them the strip's figures.
func axisText(width, peak, now int) string {
	left := fmt.Sprintf("-%ds", int(lanesWindow.Seconds()))
	mid := fmt.Sprintf("in flight: %d now, peak %d", now, peak)
	gap := width - len(left) - 3 - len([]rune(mid))
	if gap < 2 {
		return left + strings.Repeat(" ", max(width-len(left)-3, 1)) + "now"
	}
	return left + strings.Repeat(" ", gap/2) + mid + strings.Repeat(" ", gap-gap/2) + "now"
}

// flyingBreakdown is what is known of a turn in flight at now: where it runs and when, the
// tool or think time before it, how long it has run, its first token if it came.
func flyingBreakdown(t *laneTurn, now time.Time) string {
	st := &t.session
	out := turnPlace(st, t.start) + " · in flight " + fmtDur(max(now.Sub(t.start), 0)) + "\n"
	if t.first.IsZero() {
		out += "no first token yet"
	} else {
		out += "first token after " + fmtDur(t.first.Sub(t.start)) + " · decoding"
	}
	return out + "\n" + fmt.Sprintf("prompt %d (offline), %d blocks · cache ideal %d", st.PromptTokens, st.Blocks, st.IdealCached)
}

// turnPlace is where and when a turn runs: its lane (and sub-agent), its number, its start
// and the tool or think time before it.
func turnPlace(st *workload.SessionTurn, start time.Time) string {
	out := fmt.Sprintf("lane %d", st.Lane)
	if st.Depth > 0 {
		out += fmt.Sprintf(" sub-agent %d (depth %d)", st.ID, st.Depth)
	}
	out += fmt.Sprintf(" turn %d · at %s", st.Turn, start.Format("15:04:05"))
	if st.Turn > 1 || st.Gap > 0 {
		what := "think time"
		if st.Tool {
			what = "tool time"
		}
		out += " · " + what + " before it " + fmtDur(st.Gap)
	}
	return out
}

// turnBreakdown is a finished turn's figures: where it ran and when, the tool or think time
// before it; its connection, the wait to the response headers, to its first token (under
// from) and its decode; the server's queue and prefill where it reports them; its tokens and
// the cache: blocks, ideal and served. missed: it succeeded but missed the objectives.
func turnBreakdown(s *sample.Sample, from sample.TTFTFrom, missed bool) string {
	out := turnPlace(s.Session, s.Start)
	switch {
	case s.Outcome != sample.OutcomeOK:
		out += " · " + string(s.Outcome) + " " + s.ErrorKind
		if msg := oneLine(s.ErrorMessage); msg != "" { // why: e.g. the prompt over the context
			out += "\n" + truncate(msg, maxTurnError)
		}
	case missed:
		out += " · missed its objectives (--slo)"
	}
	return out + "\n" + clientPhases(s, from) + serverPhases(s) + cacheLine(s)
}

// maxTurnError is how much of a failed turn's error message its breakdown shows (the view
// wraps it): enough for a server's reason, such as llama-server's "request (26301 tokens)
// exceeds the available context size (2048 tokens), try increasing it".
const maxTurnError = 240

// clientPhases: the client's side of a turn, as far as it got.
func clientPhases(s *sample.Sample, from sample.TTFTFrom) string {
	var parts []string
	if s.Queue > 0 {
		parts = append(parts, "client queue "+fmtDur(s.Queue))
	}
	switch {
	case s.Reused:
		parts = append(parts, "connection reused")
	case s.Connect >= 0:
		conn := s.Connect + max(s.DNS, 0) + max(s.TLS, 0)
		parts = append(parts, "connection "+fmtDur(conn))
	}
	sent := max(s.Wrote, 0)
	switch { // always said, so the line keeps its shape
	case s.Headers < 0:
		parts = append(parts, "headers —")
	case s.Headers < sent: // the response began before the request was all written
		parts = append(parts, "headers before sent")
	default:
		parts = append(parts, "headers "+fmtDur(s.Headers-sent))
	}
	ttft, ok := from.TTFT(s)
	if ok {
		after := max(s.Headers, 0)
		parts = append(parts, "to "+strings.ReplaceAll(from.Name(), "-", " ")+" "+fmtDur(max(ttft-after, 0))+" (ttft "+fmtDur(ttft)+")")
		if s.LastToken >= ttft {
			parts = append(parts, "decode "+fmtDur(s.LastToken-ttft))
		}
	}
	parts = append(parts, fmt.Sprintf("%d tok out", s.Tokens))
	return strings.Join(parts, " · ") + "\n"
}

// serverPhases: the server's own clock for the turn (queue where it reports one), if any.
func serverPhases(s *sample.Sample) string {
	if l := serverBreakdown([]*sample.Sample{s}); l != "" {
		return l + "\n"
	}
	return ""
}

// cacheLine is the turn's prompt and cache: the prompt and the ideal in tokscope's offline
// tokens, what the server served in its own, of its own count of the prompt when it gave one
// (the two tokenizers differ on a real server, so the counts are not subtracted).
func cacheLine(s *sample.Sample) string {
	st := s.Session
	out := fmt.Sprintf("prompt %d (offline), %d blocks · cache ideal %d", st.PromptTokens, st.Blocks, st.IdealCached)
	switch {
	case s.CachedTokens >= 0 && s.PromptTokens > 0:
		out += fmt.Sprintf(" · served %d of the server's %d", s.CachedTokens, s.PromptTokens)
	case s.CachedTokens >= 0:
		out += fmt.Sprintf(" · served %d", s.CachedTokens)
	}
	return out
}

// fmtDur is a duration to the millisecond, in seconds from 1 s.
func fmtDur(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}
