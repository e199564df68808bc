package ui

import (
	"cmp"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"tokscope/config"
	"tokscope/feature"
	"tokscope/metric"
	"tokscope/stats"
)

// column is one figure of the compare table, read from the whole-run window.
type column struct {
	feature.Column
	// pinned: the column shows at every width and on every page of columns.
	pinned bool
}

// width is the column's width: its title and the sort marker, or its widest figure with the
// "*" that marks a best value without colour.
func (col *column) width() int {
	return max(len([]rune(col.Title))+1, 6)
}

// compareColumns in display order: the requests, the registered metrics' columns (Group
// Core, metric.Metric.Compare) with the error rate before tokens/chunk. "max gap" is the longest
// silence between two chunks of a request; a silence past the stall limit is the "stall"
// error, counted in err %.
var compareColumns = slices.Concat(
	[]column{{pinned: true, Column: feature.Column{Title: "reqs", Format: count, Rank: 0, // first: columnsFor keeps it there
		Value: func(es *stats.EndpointStats) (float64, bool) { return float64(es.Requests), true }}}},
	registryColumns(func(id metric.ID) bool { return metric.Get(id).Group == metric.Core && id < metric.TokensPerChunk }),
	[]column{{pinned: true, Column: feature.Column{Title: "err %", Format: pct, Better: -1, Rank: 1,
		Value: func(es *stats.EndpointStats) (float64, bool) {
			if es.Requests == 0 {
				return 0, false
			}
			return 100 * float64(es.Errors) / float64(es.Requests), true
		}}}},
	registryColumns(func(id metric.ID) bool { return metric.Get(id).Group == metric.Core && id >= metric.TokensPerChunk }),
)

// workloadColumns join the compare table after the client-side figures: the registered
// metrics of Group Workload.
var workloadColumns = registryColumns(func(id metric.ID) bool { return metric.Get(id).Group == metric.Workload })

// registryColumns are the compare columns of the registered metrics that keep, in registry
// order.
func registryColumns(keep func(metric.ID) bool) []column {
	return columnsOf(feature.RegistryColumns(keep))
}

// columnsOf are a feature's compare columns as the table keeps them.
func columnsOf(cols []feature.Column) []column {
	out := make([]column, len(cols))
	for i, c := range cols {
		out[i] = column{Column: c}
	}
	return out
}

// The columns the bars below the table draw.
var (
	colTTFTp50   = columnTitled("ttft p50")
	colDecodeP50 = columnTitled("dec p50")
)

func columnTitled(title string) *column {
	for i := range compareColumns {
		if compareColumns[i].Title == title {
			return &compareColumns[i]
		}
	}
	panic("no compare column " + title)
}

// compareFeature is a feature's columns in the compare table: they join it when some endpoint
// has the feature, right after the requests when the user asked for them (the objectives, the
// cost), else after the workload's; legend is what the legend adds for them ("" nothing).
// columnsFor is the compare table's columns for eps, and what the legend adds for them.
func columnsFor(eps []config.Endpoint) ([]column, string) {
	var first, rest []column
	var legend string
	for _, f := range feature.All() {
		c := f.Compare
		if c == nil || c.Has == nil || !slices.ContainsFunc(eps, func(e config.Endpoint) bool { return c.Has(&e) }) {
			continue
		}
		if c.First {
			first = append(first, columnsOf(c.Columns())...)
		} else {
			rest = append(rest, columnsOf(c.Columns())...)
		}
		if c.Legend != "" {
			legend += " · " + c.Legend
		}
	}
	cols := append([]column{compareColumns[0]}, first...) // the requests; then what the user asked for
	cols = append(cols, compareColumns[1:]...)
	cols = append(cols, workloadColumns...)
	return append(cols, rest...), legend
}

// Sort keys beyond the numeric columns.
const (
	sortConfig = -2 // configuration order
	sortName   = -1
)

// compareView is one row per endpoint over the whole run, sortable by any column, with
// horizontal bars of decode tok/s and TTFT and the best value of each column highlighted.
type compareView struct {
	common
	n int

	cols []column // compareColumns with the features' columns (columnsFor)
	// legendExtra is what the legend says of the features' columns (columnsFor).
	legendExtra string
	// joined are the features whose columns joined cols once an endpoint had them
	// (feature.Compare.Joins: the server's own clock, once a server reported it), by name.
	joined     map[string]bool
	sortCol    int  // sortConfig, sortName, a column index, or len(cols) for the source
	reverse    bool // S: reverse the column's natural (best first) order
	page       int  // which page of columns shows (←/→); page 0 holds the most important
	pages      int  // pages of columns at the last render's width
	perPage    int  // unpinned columns per page at the last render's width
	order      []int
	key        compareKey
	body       string
	headToHead *headToHead // filled by the Model (headtohead.go); nil shows no section
}

// compareKey is what the table was drawn from; equal keys mean nothing to redraw.
type compareKey struct {
	w, h, sel, sortCol, page int
	reverse                  bool
	snap, headToHead         uint64
}

// newCompareView builds the table of eps, with the head-to-head rows of headToHead.
func newCompareView(c common, eps []config.Endpoint, headToHead *headToHead) *compareView {
	n := len(eps)
	v := &compareView{common: c, n: n, sortCol: sortConfig, headToHead: headToHead}
	v.cols, v.legendExtra = columnsFor(eps)
	v.order = make([]int, n)
	for i := range v.order {
		v.order[i] = i
	}
	return v
}

func (c *compareView) Name() string { return "Compare" }

func (c *compareView) ShortHelp() []key.Binding {
	k := c.keys
	return []key.Binding{k.Help, k.Sort, k.SortReverse, k.Left, k.Enter, k.Quit}
}

// CycleSort moves to the next sort key (s), or reverses the current one (S), and turns to
// the page of columns that shows it.
func (c *compareView) CycleSort(reverse bool) {
	if reverse {
		c.reverse = !c.reverse
		return
	}
	c.reverse = false
	c.sortCol++
	if c.sortCol > len(c.cols) {
		c.sortCol = sortConfig
	}
	if c.sortCol >= 0 && c.sortCol < len(c.cols) && c.perPage > 0 && !c.cols[c.sortCol].pinned {
		c.page = pageOf(c.cols, c.sortCol, c.perPage)
	}
}

// Scroll turns the pages of columns by dx.
func (c *compareView) Scroll(dx int) {
	c.page = clamp(c.page+dx, 0, max(c.pages, 1)-1)
}

// Move moves the selection dy rows in the displayed order; dx scrolls the columns instead.
func (c *compareView) Move(sel, dx, dy int) int {
	if dx != 0 {
		c.Scroll(dx)
		return sel
	}
	pos := slices.Index(c.order, sel)
	if pos < 0 {
		return sel
	}
	return c.order[clamp(pos+dy, 0, len(c.order)-1)]
}

func (c *compareView) sortName() string {
	switch {
	case c.sortCol == sortName:
		return "name"
	case c.sortCol == len(c.cols):
		return "tok src"
	}
	return c.cols[c.sortCol].Title
}

// Info is the footer's sort and page indicator; it says what the header's ▲ means.
func (c *compareView) Info() string {
	var info string
	switch {
	case c.sortCol == sortConfig:
		info = "config order"
	case c.sortCol < 0 || c.sortCol == len(c.cols) || c.cols[c.sortCol].Better == 0:
		info = c.sortName() + " ▲ ascending"
		if c.reverse {
			info = c.sortName() + " ▼ descending"
		}
	default:
		info = c.sortName() + " ▲ best first"
		if c.reverse {
			info = c.sortName() + " ▼ worst first"
		}
	}
	if c.pages > 1 {
		info += " · cols " + itoa(c.page+1) + "/" + itoa(c.pages) + " ←→"
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
		case c.sortCol == len(c.cols):
			return dir * strings.Compare(ea.TokenSource, eb.TokenSource)
		}
		col := c.cols[c.sortCol]
		va, oka := col.Value(ea)
		vb, okb := col.Value(eb)
		switch {
		case !oka && !okb:
			return 0
		case !oka:
			return 1
		case !okb:
			return -1
		}
		natural := cmp.Compare(va, vb)
		if col.Better > 0 {
			natural = -natural
		}
		return dir * natural
	})
}

// Render draws the table and, as far as there is room below it, the head-to-head section
// and the bars.
func (c *compareView) Render(f *frame) string {
	var headToHeadVersion uint64
	if c.headToHead != nil {
		headToHeadVersion = c.headToHead.version
	}
	k := compareKey{c.w, c.h, f.sel, c.sortCol, c.page, c.reverse, f.snapVersion, headToHeadVersion}
	if k == c.key && c.body != "" {
		return c.body
	}
	c.key = k
	eps := f.snap.Endpoints
	c.joinColumns(eps)
	c.sortOrder(eps)

	wd := compareWidths{name: nameColumnWidth(eps, c.w), src: 8, api: apiColumnWidth(eps)}
	var cols []int
	cols, c.perPage, c.pages = visibleColumns(c.cols, c.w, wd, c.page)
	c.page = min(c.page, c.pages-1)
	shown := make([]column, len(cols))
	for j, ci := range cols {
		shown[j] = c.cols[ci]
	}
	best := bestRows(shown, eps)

	lines := []string{c.headerRow(cols, wd)}
	room := max(1, c.h-2)
	first := firstRow(c.order, f.sel, room)
	for _, i := range c.order[first:min(len(c.order), first+room)] {
		lines = append(lines, c.row(&eps[i], i, i == f.sel, cols, best, wd))
	}
	lines = append(lines, c.styles.Muted.Render(c.legend()))

	if headToHead := c.h2hTable(eps, c.order, c.h-len(lines)-3, c.w); len(headToHead) > 0 {
		lines = append(lines, "")
		lines = append(lines, headToHead...)
	}
	if bars := c.bars(eps, c.h-len(lines)-1, wd.name); bars != "" {
		lines = append(lines, "", bars)
	}
	c.body = fit(strings.Join(lines, "\n"), c.w, c.h)
	return c.body
}

// compareWidths are the widths of the table's fixed columns: the endpoint names (with the
// "▶ " marker), the token source, and the API after it (0: not shown, every endpoint speaks chat).
type compareWidths struct{ name, src, api int }

// nameColumnWidth fits the longest name, at least 8 columns, plus the "▶ " marker, in a
// table width wide: a name may take up to a quarter of the width (18 columns below 72) before
// it is cut in the middle, so a wider terminal shows longer names whole (30 columns at 120)
// and an 80-column one still has room for three figures beside them.
func nameColumnWidth(eps []stats.EndpointStats, width int) int {
	w := 8
	for i := range eps {
		w = max(w, ansi.StringWidth(eps[i].Name))
	}
	return min(w, max(18, width/4)) + 2
}

// byRank is the indices of the unpinned columns of cols, most important first.
func byRank(cols []column) []int {
	var idx []int
	for i := range cols {
		if !cols[i].pinned {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(cols[a].Rank, cols[b].Rank) })
	return idx
}

// visibleColumns chooses which of cols show in width w on page (clamped): the pinned ones,
// and as many unpinned ones as fit, page 0 the most important by rank, page 1 the next
// ones…; as indices into cols, in display order. perPage is how many unpinned columns a page
// holds (at least one).
func visibleColumns(cols []column, w int, wd compareWidths, page int) (shown []int, perPage, pages int) {
	room := w - wd.name - 1 - wd.src
	if wd.api > 0 {
		room -= 1 + wd.api
	}
	for i := range cols {
		if cols[i].pinned {
			room -= 1 + cols[i].width()
		}
	}
	ranked := byRank(cols)
	widest := 0
	for _, i := range ranked {
		widest = max(widest, cols[i].width())
	}
	perPage = max(1, room/(1+widest)) // every page fits, whichever columns it holds
	pages = (len(ranked) + perPage - 1) / perPage
	page = clamp(page, 0, pages-1)
	onPage := ranked[page*perPage : min(len(ranked), (page+1)*perPage)]
	for i := range cols {
		if cols[i].pinned || slices.Contains(onPage, i) {
			shown = append(shown, i)
		}
	}
	return shown, perPage, pages
}

// pageOf is the page that shows column i of cols when pages hold perPage unpinned columns.
func pageOf(cols []column, i, perPage int) int {
	return slices.Index(byRank(cols), i) / perPage
}

// bestRows is, per column, the endpoint with the best value; -1 where the column has no
// better direction or fewer than two endpoints have a value. Ties go to the first endpoint.
func bestRows(cols []column, eps []stats.EndpointStats) []int {
	best := make([]int, len(cols))
	for j, col := range cols {
		best[j] = -1
		if col.Better == 0 {
			continue
		}
		var bv float64
		have := 0
		for i := range eps {
			v, ok := col.Value(&eps[i])
			if !ok {
				continue
			}
			have++
			if best[j] < 0 || (col.Better < 0 && v < bv) || (col.Better > 0 && v > bv) {
				best[j], bv = i, v
			}
		}
		if have < 2 {
			best[j] = -1
		}
	}
	return best
}

// firstRow is the first of order's rows to show in room rows so that sel is visible.
func firstRow(order []int, sel, room int) int {
	if pos := slices.Index(order, sel); pos >= room {
		return pos - room + 1
	}
	return 0
}

// headerRow is the titles of the endpoint column, cols and the source column; the sort
// column is marked with its direction, in the room each column keeps for it.
func (c *compareView) headerRow(cols []int, wd compareWidths) string {
	var b strings.Builder
	b.WriteString(c.headerCell("endpoint", wd.name, sortName, true))
	for _, ci := range cols {
		b.WriteString(" " + c.headerCell(c.cols[ci].Title, c.cols[ci].width(), ci, false))
	}
	b.WriteString(" " + c.headerCell("tok src", wd.src, len(c.cols), true))
	if wd.api > 0 {
		b.WriteString(" " + c.styles.TableHeader.Render(padRight("api", wd.api)))
	}
	return b.String()
}

func (c *compareView) headerCell(title string, w, sortKey int, left bool) string {
	s := c.styles
	style := s.TableHeader
	mark := " "
	if c.sortCol == sortKey {
		style = s.TableSorted
		mark = "▲"
		if c.reverse {
			mark = "▼"
		}
	}
	if left {
		return style.Render(padRight(title+mark, w))
	}
	return style.Render(padLeft(title+mark, w))
}

// row is endpoint i's line of the table: its name (marked when selected), its figures in
// cols (the best of each column highlighted) and its token source.
func (c *compareView) row(es *stats.EndpointStats, i int, selected bool, cols []int, best []int, wd compareWidths) string {
	s := c.styles
	var b strings.Builder
	name := "  " + truncateName(es.Name, wd.name-2)
	nameStyle := s.Title
	if selected {
		name = "▶ " + truncateName(es.Name, wd.name-2)
		nameStyle = nameStyle.Inherit(s.TableSelected)
	}
	b.WriteString(nameStyle.Render(padRight(name, wd.name)))
	for j, ci := range cols {
		col := &c.cols[ci]
		text := dash
		if v, ok := col.Value(es); ok {
			text = col.Format(v)
			if col.Tokens {
				text = approx(es.TokenSource) + text
			}
		}
		// The last place is the "*" of a best value without colour, else blank, so that
		// figures line up under their titles (whose last place is the sort marker).
		style := s.Value.UnsetBold()
		mark := " "
		if best[j] == i {
			style = s.Best
			if s.Plain {
				mark = "*"
			}
		}
		b.WriteString(" " + style.Render(padLeft(text+mark, col.width())))
	}
	b.WriteString(" " + s.Muted.Render(padRight(sourceLabel(es.TokenSource), wd.src)))
	if wd.api > 0 { // last, so the figures keep following the name for readers of the table
		b.WriteString(" " + s.Muted.Render(padRight(es.API, wd.api)))
	}
	return b.String()
}

// legend explains units and markers, as long as the width allows.
func (c *compareView) legend() string {
	best := ""
	if c.styles.Plain {
		best = " · * best"
	}
	extra := c.legendExtra
	for _, l := range []string{
		"whole run · ttft/ttfa/tpot/itl/max gap in ms · dec/e2e/prefill in tok/s · prompt/cached/out len in tokens · ≈ estimated tokens" + extra + best,
		"whole run · ttft/ttfa/itl/max gap in ms · dec/e2e in tok/s · ≈ estimated tokens" + extra + best,
		"whole run · ttft/ttfa/itl/max gap in ms · dec/e2e in tok/s · ≈ estimated tokens" + best,
		"whole run · ms: ttft ttfa itl gap · tok/s: dec e2e · ≈ estimate" + best,
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
	// Side by side when each half still has a readable bar; names shrink first, to what
	// leaves a bar of 20 columns (a third of a half in narrow terminals).
	half := (c.w - 3) / 2
	nameW = min(nameW, max(9, half/3, half-29))
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
			out = append(out, padRight(truncateName(es.Name, nameW-1), nameW)+
				style.Render(padRight(bar(v, top, barW), max(barW, 0)))+" "+padLeft(text, 7))
		}
		return fit(strings.Join(out, "\n"), gw, rows+1)
	}
	dec := group("decode tok/s p50, whole run", s.BarDecode, colDecodeP50.Value, num, true)
	ttft := group("TTFT p50 (ms), whole run", s.BarTTFT, colTTFTp50.Value, ms, false)
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

// joinColumns appends the columns of the features that join the table once an endpoint's
// figures have them (feature.Compare.Joins), the first time one does; they stay.
func (c *compareView) joinColumns(eps []stats.EndpointStats) {
	for _, f := range feature.All() {
		j := f.Compare
		if j == nil || j.Joins == nil || c.joined[f.Name] || !slices.ContainsFunc(eps, func(e stats.EndpointStats) bool { return j.Joins(&e) }) {
			continue
		}
		if c.joined == nil {
			c.joined = map[string]bool{}
		}
		c.cols, c.joined[f.Name] = append(c.cols, columnsOf(j.Columns())...), true
	}
}
