package ui

import (
	"cmp"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"tokscope/stats"
)

// column is one figure of the compare table, read from the whole-run window.
type column struct {
	title  string
	value  func(es *stats.EndpointStats) (float64, bool)
	format func(float64) string
	better int  // -1 lower is better, +1 higher is better, 0 neither (no highlight)
	tokens bool // derived from token counts: marked ≈ for estimates
}

func distCol(title string, d func(w *stats.Window) stats.Dist, q func(stats.Dist) float64, f func(float64) string, better int, tokens bool) column {
	return column{title: title, format: f, better: better, tokens: tokens,
		value: func(es *stats.EndpointStats) (float64, bool) {
			dd := d(&es.Whole)
			return q(dd), dd.Count > 0
		}}
}

var compareColumns = []column{
	distCol("ttft p50", func(w *stats.Window) stats.Dist { return w.TTFT }, p50, ms, -1, false),
	distCol("ttft p90", func(w *stats.Window) stats.Dist { return w.TTFT }, p90, ms, -1, false),
	distCol("ttft p99", func(w *stats.Window) stats.Dist { return w.TTFT }, p99, ms, -1, false),
	distCol("ttfa p50", func(w *stats.Window) stats.Dist { return w.TTFA }, p50, ms, -1, false),
	distCol("dec p50", func(w *stats.Window) stats.Dist { return w.DecodeTPS }, p50, num, +1, true),
	distCol("dec p10", func(w *stats.Window) stats.Dist { return w.DecodeTPS }, p10, num, +1, true),
	distCol("e2e p50", func(w *stats.Window) stats.Dist { return w.E2ETPS }, p50, num, +1, true),
	distCol("itl p99", func(w *stats.Window) stats.Dist { return w.ITL }, p99, ms, -1, false),
	distCol("stall", func(w *stats.Window) stats.Dist { return w.MaxStall }, dmax, ms, -1, false),
	{title: "err %", format: pct, better: -1,
		value: func(es *stats.EndpointStats) (float64, bool) {
			if es.Requests == 0 {
				return 0, false
			}
			return 100 * float64(es.Errors) / float64(es.Requests), true
		}},
	distCol("tok/chk", func(w *stats.Window) stats.Dist { return w.TokensPerChunk }, p50, num, 0, true),
}

// Sort keys beyond the numeric columns.
const (
	sortConfig = -2 // configuration order
	sortName   = -1
)

// compareView is one row per endpoint over the whole run, sortable by any column, with
// horizontal bars of decode tok/s and TTFT and the best value of each column highlighted.
type compareView struct {
	styles *Styles
	w, h   int
	n      int

	sortCol int  // sortConfig, sortName, a column index, or len(compareColumns) for the source
	reverse bool // S: reverse the column's natural (best first) order
	offset  int  // first numeric column shown (←/→ scroll)
	shown   int  // numeric columns shown at the last render
	order   []int
	key     compareKey
	body    string
	h2h     *headToHead // shared with the Model, which fills it; nil shows no section
}

// compareKey is what the table was drawn from; equal keys mean nothing to redraw.
type compareKey struct {
	w, h, sel, sortCol, offset int
	reverse                    bool
	snap, h2h                  uint64
}

func newCompareView(st *Styles, n int) *compareView {
	c := &compareView{styles: st, n: n, sortCol: sortConfig}
	c.order = make([]int, n)
	for i := range c.order {
		c.order[i] = i
	}
	return c
}

func (c *compareView) SetSize(w, h int) { c.w, c.h = w, h }

// CycleSort moves to the next sort key (s), or reverses the current one (S).
func (c *compareView) CycleSort(reverse bool) {
	if reverse {
		c.reverse = !c.reverse
		return
	}
	c.reverse = false
	c.sortCol++
	if c.sortCol > len(compareColumns) {
		c.sortCol = sortConfig
	}
	if c.sortCol >= 0 && c.sortCol < len(compareColumns) {
		if c.sortCol < c.offset {
			c.offset = c.sortCol
		} else if c.shown > 0 && c.sortCol >= c.offset+c.shown {
			c.offset = c.sortCol - c.shown + 1
		}
	}
}

// Scroll moves the visible columns by dx.
func (c *compareView) Scroll(dx int) {
	c.offset = clamp(c.offset+dx, 0, len(compareColumns)-max(c.shown, 1))
}

// Move moves the selection dy rows in the displayed order.
func (c *compareView) Move(sel, dy int) int {
	pos := slices.Index(c.order, sel)
	if pos < 0 {
		return sel
	}
	return c.order[clamp(pos+dy, 0, len(c.order)-1)]
}

func (c *compareView) sortName() string {
	switch {
	case c.sortCol == sortConfig:
		return "config order"
	case c.sortCol == sortName:
		return "name"
	case c.sortCol == len(compareColumns):
		return "tok src"
	}
	return compareColumns[c.sortCol].title
}

// Info is the footer's sort and scroll indicator.
func (c *compareView) Info() string {
	dir := "▲"
	if c.reverse {
		dir = "▼"
	}
	info := "sort " + c.sortName() + " " + dir
	if c.shown < len(compareColumns) {
		info += " · cols " + itoa(c.offset+1) + "-" + itoa(c.offset+c.shown) + "/" + itoa(len(compareColumns)) + " ←→"
	}
	return info
}

// sortOrder orders endpoints by the sort key, best first; missing figures always last.
func (c *compareView) sortOrder(eps []stats.EndpointStats) {
	c.order = c.order[:0]
	for i := range eps {
		c.order = append(c.order, i)
	}
	dir := 1
	if c.reverse {
		dir = -1
	}
	slices.SortStableFunc(c.order, func(a, b int) int {
		ea, eb := &eps[a], &eps[b]
		switch {
		case c.sortCol == sortConfig:
			return dir * cmp.Compare(a, b)
		case c.sortCol == sortName:
			return dir * strings.Compare(ea.Name, eb.Name)
		case c.sortCol == len(compareColumns):
			return dir * strings.Compare(ea.TokenSource, eb.TokenSource)
		}
		col := compareColumns[c.sortCol]
		va, oka := col.value(ea)
		vb, okb := col.value(eb)
		switch {
		case !oka && !okb:
			return 0
		case !oka:
			return 1
		case !okb:
			return -1
		}
		natural := cmp.Compare(va, vb)
		if col.better > 0 {
			natural = -natural
		}
		return dir * natural
	})
}

// Render draws the table and, when there is room, the bars.
func (c *compareView) Render(f *frame) string {
	var h2hVer uint64
	if c.h2h != nil {
		h2hVer = c.h2h.version
	}
	k := compareKey{c.w, c.h, f.sel, c.sortCol, c.offset, c.reverse, f.snapVer, h2hVer}
	if k == c.key && c.body != "" {
		return c.body
	}
	c.key = k
	s := c.styles
	eps := f.snap.Endpoints
	c.sortOrder(eps)

	nameW := 8
	for i := range eps {
		nameW = max(nameW, len([]rune(eps[i].Name)))
	}
	nameW = min(nameW, 18) + 2 // "▶ " marker
	srcW := 8
	mark := 0
	if s.Plain {
		mark = 1 // room for the "*" that marks a best value without colour
	}
	colW := 8 + mark

	c.shown = max(1, min(len(compareColumns)-c.offset, (c.w-nameW-srcW-1)/(colW+1)))
	c.offset = clamp(c.offset, 0, len(compareColumns)-c.shown)
	cols := compareColumns[c.offset : c.offset+c.shown]

	// Best value per column among endpoints that have one (only with two or more).
	best := make([]int, len(cols))
	for j, col := range cols {
		best[j] = -1
		if col.better == 0 {
			continue
		}
		var bv float64
		have := 0
		for i := range eps {
			v, ok := col.value(&eps[i])
			if !ok {
				continue
			}
			have++
			if best[j] < 0 || (col.better < 0 && v < bv) || (col.better > 0 && v > bv) {
				best[j], bv = i, v
			}
		}
		if have < 2 {
			best[j] = -1
		}
	}

	// Header.
	hdr := func(title string, w int, sortKey int, left bool) string {
		t := title
		style := s.TableHeader
		if c.sortCol == sortKey {
			style = s.TableSorted
			if c.reverse {
				t += "▼"
			} else {
				t += "▲"
			}
		}
		if left {
			return style.Render(padRight(t, w))
		}
		return style.Render(padLeft(t, w))
	}
	var b strings.Builder
	b.WriteString(hdr("endpoint", nameW, sortName, true))
	for j, col := range cols {
		b.WriteString(" " + hdr(col.title, colW, c.offset+j, false))
	}
	b.WriteString(" " + hdr("tok src", srcW, len(compareColumns), true))
	lines := []string{b.String()}

	// Rows, scrolled so that the selection is visible.
	rowsRoom := max(1, c.h-2)
	first := 0
	if pos := slices.Index(c.order, f.sel); pos >= rowsRoom {
		first = pos - rowsRoom + 1
	}
	for _, i := range c.order[first:min(len(c.order), first+rowsRoom)] {
		es := &eps[i]
		b.Reset()
		name := "  " + truncate(es.Name, nameW-2)
		if i == f.sel {
			name = "▶ " + truncate(es.Name, nameW-2)
		}
		nameStyle := s.Title
		if i == f.sel {
			nameStyle = nameStyle.Inherit(s.TableSelected)
		}
		b.WriteString(nameStyle.Render(padRight(name, nameW)))
		for j, col := range cols {
			text := dash
			if v, ok := col.value(es); ok {
				text = col.format(v)
				if col.tokens {
					text = approx(es.TokenSource) + text
				}
			}
			style := s.Value.UnsetBold()
			if best[j] == i {
				style = s.Best
				if s.Plain {
					text += "*"
				}
			} else if s.Plain {
				text += " "
			}
			b.WriteString(" " + style.Render(padLeft(text, colW)))
		}
		b.WriteString(" " + s.Muted.Render(padRight(sourceLabel(es.TokenSource), srcW)))
		lines = append(lines, b.String())
	}
	lines = append(lines, s.Muted.Render(c.legend()))

	// Head-to-head against the best, then bars, as far as there is room below the table.
	if h2h := c.h2hTable(eps, c.order, c.h-len(lines)-3, c.w); len(h2h) > 0 {
		lines = append(lines, "")
		lines = append(lines, h2h...)
	}
	room := c.h - len(lines) - 1
	if bars := c.bars(eps, room, nameW); bars != "" {
		lines = append(lines, "", bars)
	}
	c.body = fit(strings.Join(lines, "\n"), c.w, c.h)
	return c.body
}

// legend explains units and markers, as long as the width allows.
func (c *compareView) legend() string {
	best := ""
	if c.styles.Plain {
		best = " · * best"
	}
	for _, l := range []string{
		"whole run · ttft/ttfa/itl/stall in ms · dec/e2e in tok/s · ≈ estimated tokens" + best,
		"whole run · ms: ttft ttfa itl stall · tok/s: dec e2e · ≈ estimate" + best,
		"whole run · ms / tok/s · ≈ estimate" + best,
	} {
		if len([]rune(l)) <= c.w {
			return l
		}
	}
	return truncate("whole run", c.w)
}

// bars draws decode tok/s p50 and TTFT p50 as horizontal bars, side by side when wide.
func (c *compareView) bars(eps []stats.EndpointStats, room, nameW int) string {
	s := c.styles
	n := len(c.order)
	// Side by side when each half still has a readable bar; names shrink first.
	nameW = min(nameW, max(9, (c.w-3)/2/3))
	sideBySide := (c.w-3)/2 >= nameW+8+10
	need := n + 1
	if !sideBySide {
		need = 2 * (n + 1)
	}
	rows := n
	if room < need {
		if sideBySide {
			rows = room - 1
		} else {
			rows = room/2 - 1
		}
	}
	if rows < 1 {
		return ""
	}
	gw := c.w
	if sideBySide {
		gw = (c.w - 3) / 2
	}
	group := func(title string, style lipgloss.Style, value func(*stats.EndpointStats) (float64, bool), f func(float64) string, mark bool) string {
		top := 0.0
		for i := range eps {
			if v, ok := value(&eps[i]); ok && v > top {
				top = v
			}
		}
		barW := gw - nameW - 9
		out := []string{s.Label.Render(title)}
		for _, i := range c.order[:rows] {
			es := &eps[i]
			v, ok := value(es)
			text := dash
			if ok {
				text = f(v)
				if mark {
					text = approx(es.TokenSource) + text
				}
			}
			out = append(out, padRight(truncate(es.Name, nameW-1), nameW)+
				style.Render(padRight(bar(v, top, barW), max(barW, 0)))+" "+padLeft(text, 7))
		}
		return fit(strings.Join(out, "\n"), gw, rows+1)
	}
	dec := group("decode tok/s p50", s.BarDecode, compareColumns[4].value, num, true)
	ttft := group("TTFT p50 (ms)", s.BarTTFT, compareColumns[0].value, ms, false)
	if sideBySide {
		return lipgloss.JoinHorizontal(lipgloss.Top, dec, "   ", ttft)
	}
	return dec + "\n" + ttft
}

func padRight(s string, w int) string {
	return fitLine(s, w)
}

func padLeft(s string, w int) string {
	sw := lipgloss.Width(s)
	if sw >= w {
		return truncate(s, w)
	}
	return strings.Repeat(" ", w-sw) + s
}
