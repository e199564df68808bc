package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"tokscope/watch"
)

// View draws the fleet table, or the drill-down of one row.
func (m *watchModel) View() string {
	var body []string
	if m.drill != "" {
		body = m.drillView()
	} else {
		body = m.tableView()
	}
	footer := m.footer()
	room := max(m.height-len(footer), 1)
	if len(body) > room {
		body = body[:room]
	}
	for len(body) < room {
		body = append(body, "")
	}
	lines := append(body, footer...)
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "")
	}
	return strings.Join(lines, "\n")
}

func (m *watchModel) title() string {
	s := fmt.Sprintf("tokscope watch · %d servers · rates and percentiles over %s", len(m.fleet.Targets()), m.fleet.Window())
	if m.opts.Replay != nil {
		s += " · replay"
	}
	if m.ended {
		s += " · " + m.styles.Stopped.Render("stopped")
	}
	return m.styles.Header.Render(s)
}

// fleetColumns are the columns that fit width: first the figure columns no row has a value
// in go, then the optional ones, widest-optional first.
func fleetColumns(rows []watch.Row, widths []int, width int) []int {
	shown := make([]int, len(watch.Columns))
	for i := range shown {
		shown[i] = i
	}
	total := func(idx []int) int {
		w := 0
		for _, i := range idx {
			w += widths[i] + 2
		}
		return w + 2 // the selection gutter
	}
	drop := func(gone func(c watch.Column) bool) {
		var keep []int
		for _, i := range shown {
			if !gone(watch.Columns[i]) {
				keep = append(keep, i)
			}
		}
		shown = keep
	}
	if total(shown) > width {
		drop(func(c watch.Column) bool { return c.Value != nil && !anyValue(rows, c) })
	}
	for level := 3; level >= 1 && total(shown) > width; level-- {
		drop(func(c watch.Column) bool { return c.Wide == level })
	}
	return shown
}

func anyValue(rows []watch.Row, c watch.Column) bool {
	for _, r := range rows {
		if _, ok := c.Value(r); ok {
			return true
		}
	}
	return false
}

// tableView is the fleet table: a header, one line per row, scrolled to keep the cursor on
// screen.
func (m *watchModel) tableView() []string {
	cells := make([][]string, len(m.rows))
	widths := make([]int, len(watch.Columns))
	for i, c := range watch.Columns {
		widths[i] = ansi.StringWidth(c.Header) + 1 // room for the sort arrow
	}
	for r, row := range m.rows {
		cells[r] = make([]string, len(watch.Columns))
		for i, c := range watch.Columns {
			cells[r][i] = c.Text(row)
			limit := 60
			if c.Key == "server" {
				limit = 28
			}
			widths[i] = max(widths[i], min(ansi.StringWidth(cells[r][i]), limit))
		}
	}
	shown := fleetColumns(m.rows, widths, m.width)
	lines := []string{m.title(), m.filterLine(), m.headerLine(shown, widths)}
	room := max(m.height-len(lines)-3, 1)
	first := max(0, m.cursor-room+1)
	for r := first; r < len(m.rows) && r < first+room; r++ {
		lines = append(lines, m.rowLine(r, cells[r], shown, widths))
	}
	if len(m.rows) == 0 {
		lines = append(lines, m.styles.Muted.Render("  no server matches"+m.filterNote()))
	}
	return lines
}

func (m *watchModel) filterLine() string {
	switch {
	case m.filtering:
		return "filter: " + m.filter + "▏"
	case m.filter != "":
		return m.styles.Muted.Render("filter: " + m.filter + " (esc clears)")
	}
	return ""
}

func (m *watchModel) filterNote() string {
	if m.filter == "" {
		return ""
	}
	return fmt.Sprintf(" %q", m.filter)
}

func (m *watchModel) headerLine(shown, widths []int) string {
	var b strings.Builder
	b.WriteString("  ")
	for _, i := range shown {
		h := watch.Columns[i].Header
		style := m.styles.TableHeader
		if i == m.sortCol {
			h += map[bool]string{true: "↓", false: "↑"}[m.descending]
			style = m.styles.TableSorted
		}
		b.WriteString(style.Render(pad(h, widths[i], watch.Columns[i].Value != nil)) + "  ")
	}
	return b.String()
}

func (m *watchModel) rowLine(r int, cells []string, shown, widths []int) string {
	var b strings.Builder
	for _, i := range shown {
		cell := pad(truncateName(cells[i], widths[i]), widths[i], watch.Columns[i].Value != nil)
		if watch.Columns[i].Key == "badges" {
			cell = m.badgeStyle(m.rows[r]).Render(cell)
		}
		b.WriteString(cell + "  ")
	}
	line := b.String()
	if r == m.cursor { // a marker in the gutter, and reversed where there is colour
		if m.styles.Plain {
			return "▸ " + line
		}
		return m.styles.TableSelected.Render("▸ " + ansi.Strip(line))
	}
	return "  " + line
}

func (m *watchModel) badgeStyle(r watch.Row) lipgloss.Style {
	switch {
	case hasBadge(r.Badges, watch.BadgeStale):
		return m.styles.Bad
	case hasBadge(r.Badges, watch.BadgeRestarted), hasBadge(r.Badges, watch.BadgeLoading):
		return m.styles.Warn
	}
	return m.styles.Muted
}

// pad right-aligns (numbers) or left-aligns s in w cells.
func pad(s string, w int, right bool) string {
	gap := w - ansi.StringWidth(s)
	if gap <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", gap) + s
	}
	return s + strings.Repeat(" ", gap)
}

func hasBadge(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (m *watchModel) footer() []string {
	legend := m.styles.Footer.Render("~ estimated within the server's histogram buckets · " + watch.Unknown + " not exported · no inference request is sent")
	keys := []string{"↑↓ select", "enter drill down", "s sort", "S reverse", "/ filter", "q quit"}
	if m.drill != "" {
		keys = []string{"esc back", "q quit"}
		if m.opts.Canary != nil {
			keys = append([]string{"c send one canary request"}, keys...)
		}
	}
	last := m.styles.Footer.Render(strings.Join(keys, " · "))
	if m.notice != "" {
		last = m.styles.Notice.Render(m.notice)
	}
	return []string{legend, last}
}

// drillView is one row in depth: its figures, its charts over time, llama.cpp's slots,
// Ollama's models, and the canary.
func (m *watchModel) drillView() []string {
	r, ok := m.drilled()
	if !ok {
		return []string{m.title(), "", m.styles.Muted.Render("  this server is no longer watched (esc: back)")}
	}
	lines := []string{m.title(), m.drillHeader(r)}
	if r.LastError != nil {
		lines = append(lines, m.styles.Bad.Render("  last scrape failed: "+*r.LastError))
	}
	lines = append(lines, m.figureLines(r)...)
	tail := append(m.slotLines(r), m.ollamaLines(r)...)
	tail = append(tail, m.canaryLines(r)...)
	room := m.height - len(lines) - len(tail) - 2
	lines = append(lines, m.charts(r, room)...)
	return append(lines, tail...)
}

func (m *watchModel) drillHeader(r watch.Row) string {
	name := r.Server
	if r.Model != "" {
		name += " · " + r.Model
	}
	kind := string(r.Kind)
	if r.Version != nil {
		kind += " " + *r.Version
	}
	s := m.styles.Title.Render(name) + "  " + m.styles.Muted.Render(kind+" · "+r.URL)
	if len(r.Badges) > 0 {
		s += "  " + m.badgeStyle(r).Render(strings.Join(r.Badges, " "))
	}
	return s
}

func (m *watchModel) figureLines(r watch.Row) []string {
	cell := func(key string) string {
		for _, c := range watch.Columns {
			if c.Key == key {
				return c.Text(r)
			}
		}
		return watch.Unknown
	}
	q := func(label string, v *watch.Quantiles) string {
		if v == nil {
			return label + " " + watch.Unknown
		}
		p := func(x *float64) string {
			if x == nil {
				return watch.Unknown
			}
			return watch.Millis(*x)
		}
		return fmt.Sprintf("%s p50 %s p99 %s (n=%.0f)", label, p(v.P50), p(v.P99), v.Count)
	}
	return []string{
		fmt.Sprintf("  running %s · waiting %s · gen %s tok/s · prompt %s tok/s · KV %s · prefix hits %s · preemptions %s · spec %s · GPU %s · tok/J %s",
			cell("running"), cell("waiting"), cell("gen"), cell("prompt"), cell("kv"), cell("hit"), cell("preempt"), cell("spec"), cell("watts"), cell("tokj")),
		"  " + q("TTFT", r.TTFT) + " · " + q("ITL", r.ITL),
		"  " + q("queue", r.Queue) + " · " + q("e2e", r.E2E),
	}
}

// charts draws the row's history in the room left: throughput, waiting requests, KV use and
// TTFT percentiles, each a label and a time chart (a gap where a scrape gave no figure).
func (m *watchModel) charts(r watch.Row, room int) []string {
	hist := m.fleet.History(r.Key, r.Model)
	series := []struct {
		label string
		get   func(watch.Point) *float64
		style lipgloss.Style
	}{
		{"generation tok/s", func(p watch.Point) *float64 { return p.GenTPS }, m.styles.SparkDecode},
		{"requests waiting", func(p watch.Point) *float64 { return p.Waiting }, m.styles.SparkGap},
		{"KV-cache use", func(p watch.Point) *float64 { return p.KV }, m.styles.BarITL},
		{"TTFT p50 (ms, estimate)", func(p watch.Point) *float64 { return p.TTFTp50 }, m.styles.SparkTTFT},
		{"TTFT p99 (ms, estimate)", func(p watch.Point) *float64 { return p.TTFTp99 }, m.styles.SparkTTFT},
	}
	per := room / len(series)
	if per < 2 {
		return nil
	}
	w := max(m.width-4, 10)
	var lines []string
	for _, s := range series {
		pts := make([]chartPoint, len(hist))
		last := watch.Unknown
		for i, p := range hist {
			if v := s.get(p); v != nil {
				pts[i] = chartPoint{v: *v, ok: true}
				last = fmt.Sprintf("%.3g", *v)
			}
		}
		if len(pts) > w {
			pts = pts[len(pts)-w:]
		}
		lines = append(lines, m.styles.ChartLabel.Render(fmt.Sprintf("  %s: %s", s.label, last)))
		for _, l := range strings.Split(drawTimeChart(s.style, pts, w, per-1), "\n") {
			lines = append(lines, "  "+l)
		}
	}
	return lines
}

func (m *watchModel) slotLines(r watch.Row) []string {
	if r.Kind != watch.KindLlamaCpp {
		return nil
	}
	if r.Slots == nil {
		return []string{m.styles.Muted.Render("  slots: – (the server does not serve /slots)")}
	}
	lines := []string{m.styles.TableHeader.Render("  SLOT  TASK  STATE       DECODED  PROMPT   CTX")}
	for _, s := range r.Slots {
		state := "idle"
		if s.Processing {
			state = "processing"
		}
		lines = append(lines, fmt.Sprintf("  %4d  %4d  %-10s  %7.0f  %6.0f  %4d", s.ID, s.Task, state, s.Decoded, s.Prompt, s.Context))
	}
	return lines
}

func (m *watchModel) ollamaLines(r watch.Row) []string {
	if r.Kind != watch.KindOllama {
		return nil
	}
	if len(r.Ollama) == 0 {
		return []string{m.styles.Muted.Render("  no model loaded")}
	}
	lines := []string{m.styles.TableHeader.Render("  MODEL                          SIZE      VRAM   CONTEXT  EXPIRES")}
	for _, o := range r.Ollama {
		exp := "in " + o.ExpiresAt.Sub(m.now()).Round(time.Second).String()
		if o.ExpiresAt.Sub(m.now()) > 24*time.Hour {
			exp = "never (keep-alive)"
		}
		lines = append(lines, fmt.Sprintf("  %-28s  %6s  %8s  %7d  %s", truncateName(o.Name, 28), bytesText(o.Size), bytesText(o.SizeVRAM), o.Context, exp))
	}
	return lines
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0fM", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%dB", n)
}

// canaryLines: the canary's client figures beside the server's own for the same request.
func (m *watchModel) canaryLines(r watch.Row) []string {
	if m.opts.Canary == nil {
		return nil
	}
	if m.canaryRunning == r.Key {
		return []string{m.styles.Notice.Render("  canary: one request in flight…")}
	}
	c, ok := m.canary[r.Key]
	if !ok {
		return []string{m.styles.Muted.Render("  canary: c sends one short request (the only request watch ever sends)")}
	}
	if c.Error != "" {
		return []string{m.styles.Bad.Render("  canary (" + c.Model + "): " + c.Error)}
	}
	f := func(v *float64, format string) string {
		if v == nil {
			return watch.Unknown
		}
		return fmt.Sprintf(format, *v)
	}
	return []string{
		fmt.Sprintf("  canary %s (%d tokens, %s ago)", c.Model, c.Tokens, m.now().Sub(c.At).Round(time.Second)),
		fmt.Sprintf("    what a client gets (tokscope): TTFT %s, decode %s tok/s", f(c.TTFTms, "%.0fms"), f(c.DecodeTPS, "%.1f")),
		fmt.Sprintf("    what the server says:          TTFT %s, decode %s tok/s", f(c.ServerTTFTms, "%.0fms"), f(c.ServerDecodeTPS, "%.1f")),
	}
}
