package ui

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"tokscope/stats"
)

// headToHead holds the compare view's head-to-head rows (stats.HeadToHeads: each endpoint
// against the best, with a bootstrap CI). Bootstrapping costs up to ~20 ms per comparison,
// so it runs in a Cmd, never in Update or View, and only when the compared values changed;
// one computation is in flight at a time, and a change meanwhile starts the next one when
// it returns. A slow computation (many endpoints, 1000 values each: a few hundred ms) is
// followed by a pause of four times its length, so that it takes at most a fifth of a core
// however fast requests finish; the 1 Hz clock asks again.
type headToHead struct {
	gen      uint64 // bumped by reset: results computed before it are dropped
	asked    uint64 // fingerprint of the values last sent for computation; 0 none
	inFlight bool
	computed bool // rows hold a result (possibly with no rows: no data yet)
	rows     []stats.HeadToHead
	version  uint64 // bumped whenever rows change; part of the compare view's cache key
	lastDone time.Time
	pause    time.Duration // before the next computation
}

// h2hSlow is the computation time above which the next one waits (see headToHead).
const h2hSlow = 50 * time.Millisecond

// headToHeadMsg carries a finished computation.
type headToHeadMsg struct {
	gen  uint64
	rows []stats.HeadToHead
	took time.Duration
}

// want returns the Cmd that computes the rows of snap, or nil when they are computed
// already, or being computed (done then asks again).
func (h *headToHead) want(snap *stats.Snapshot) tea.Cmd {
	fp := h2hFingerprint(snap)
	if fp == h.asked || h.inFlight || time.Since(h.lastDone) < h.pause {
		return nil
	}
	h.asked, h.inFlight = fp, true
	// The Snapshot's slices are fresh copies that nothing writes: sharing them is safe.
	s, gen := *snap, h.gen
	return func() tea.Msg {
		start := time.Now() // the real clock: this is CPU time, not the UI's (pinnable) clock
		rows := stats.HeadToHeads(&s)
		return headToHeadMsg{gen: gen, rows: rows, took: time.Since(start)}
	}
}

// done takes a result; it reports whether the rows changed.
func (h *headToHead) done(msg headToHeadMsg) bool {
	h.inFlight = false
	h.lastDone, h.pause = time.Now(), 0
	if msg.took > h2hSlow {
		h.pause = 4 * msg.took
	}
	if msg.gen != h.gen {
		return false
	}
	h.rows, h.computed = msg.rows, true
	h.version++
	return true
}

func (h *headToHead) reset() {
	h.gen++
	h.asked, h.rows, h.computed = 0, nil, false
	h.version++
}

// h2hFingerprint identifies the values HeadToHeads compares: per endpoint how many there
// are and the newest of each (the retained values only ever change by appending, or reset).
func h2hFingerprint(snap *stats.Snapshot) uint64 {
	f := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		f.Write(b[:])
	}
	for i := range snap.Endpoints {
		e := &snap.Endpoints[i]
		for _, v := range [][]float64{e.LastTTFT, e.LastDecodeTPS} {
			put(uint64(len(v)))
			if len(v) > 0 {
				put(math.Float64bits(v[len(v)-1]))
			}
		}
		put(uint64(e.Requests))
	}
	if fp := f.Sum64(); fp != 0 {
		return fp
	}
	return 1
}

// refreshHeadToHead starts a computation if the compare view shows and the values changed.
func (m *Model) refreshHeadToHead() tea.Cmd {
	if m.view != viewCompare || len(m.eps) < 2 {
		return nil
	}
	return m.headToHead.want(&m.snap)
}

// handleHeadToHead takes a result, redraws the compare view, and asks again if the values
// changed while it was computed.
func (m *Model) handleHeadToHead(msg headToHeadMsg) tea.Cmd {
	if m.headToHead.done(msg) && m.view == viewCompare {
		m.renderBody()
	}
	return m.refreshHeadToHead()
}

// h2hCell is one metric's comparison in the compare view.
type h2hCell struct {
	diff, ci string
	n        string // values compared: "12/30" (this endpoint / the best), "30" on the best
	verdict  string // in words; why it is undecided when a side has too few values
	short    string // the verdict for narrow terminals
	style    int    // -1 worse, +1 better, 0 undecided / best / no data
}

// h2hHeads are the titles of each metric's columns: difference, interval, verdict, values.
var h2hHeads = [2][4]string{{"Δttft ms", "95% CI", "ttft verdict", "n"}, {"Δdec t/s", "95% CI", "decode verdict", "n"}}

// h2hGap separates the two metrics' groups of columns.
const h2hGap = "  "

// h2hShortHeads are the verdict titles when verdicts are abbreviated.
var h2hShortHeads = [2]string{"ttft", "decode"}

// h2hTable draws the head-to-head section for the endpoints of order (display order), at
// most rows of them, in width w; nil when there is nothing to show. Columns are as wide as
// their contents; the long verdicts, then the CI, go when the width is short.
func (c *compareView) h2hTable(eps []stats.EndpointStats, order []int, rows, w int) []string {
	h := c.headToHead
	if h == nil || !h.computed || len(eps) < 2 || rows < 1 {
		return nil
	}
	s := c.styles
	title := "head-to-head vs best · Δ median, 95% CI, last ≤1000 ok requests"
	if len(h.rows) == 0 {
		return []string{s.Label.Render(truncate(title, w)), s.Muted.Render(truncate(dash+" no ok requests yet", w))}
	}
	order = order[:min(rows, len(order))]
	cells, best := h2hCells(h.rows)
	wd := measureH2H(cells, eps, order)
	l := wd.choose(w)
	if !l.long {
		title = "head-to-head vs best · Δ median · last ≤1000 ok · n.d. = not distinguishable yet"
	}
	out := []string{s.Label.Render(truncate(title, w)), s.TableHeader.Render(truncate(wd.header(l), w))}
	for _, i := range order {
		out = append(out, truncate(c.h2hRow(eps[i].Name, i, cells, best, wd, l), w))
	}
	return out
}

// header is the section's column titles, each over its column: the differences and n
// right-aligned like their figures, the intervals and verdicts left-aligned like theirs.
func (wd h2hWidths) header(l h2hLayout) string {
	vw := wd.verdicts(!l.long)
	var b strings.Builder
	b.WriteString(padRight("", wd.name))
	for mi := range h2hHeads {
		if mi > 0 {
			b.WriteString(h2hGap)
		}
		b.WriteString(" " + padLeft(h2hHeads[mi][0], wd.diff[mi]))
		if l.ci {
			b.WriteString(" " + padRight(h2hHeads[mi][1], wd.ci[mi]))
		}
		verdict := h2hHeads[mi][2]
		if !l.long {
			verdict = h2hShortHeads[mi]
		}
		b.WriteString(" " + padRight(verdict, vw[mi]))
		if l.n {
			b.WriteString(" " + padLeft(h2hHeads[mi][3], wd.n[mi]))
		}
	}
	return b.String()
}

// h2hRow is endpoint i's line of the section: its name, then per metric its difference to
// the best, the CI, the verdict and the values compared.
func (c *compareView) h2hRow(name string, i int, cells [2]map[int]h2hCell, best [2]int, wd h2hWidths, l h2hLayout) string {
	s := c.styles
	vw := wd.verdicts(!l.long)
	var b strings.Builder
	b.WriteString(s.Title.UnsetBold().Render(padRight("  "+truncateName(name, wd.name-2), wd.name)))
	for mi := range cells {
		cell, ok := cells[mi][i]
		if !ok {
			cell = h2hCell{diff: dash}
		}
		if mi > 0 {
			b.WriteString(h2hGap)
		}
		style := c.h2hStyle(cell, i == best[mi])
		b.WriteString(" " + style.Render(padLeft(cell.diff, wd.diff[mi])))
		if l.ci {
			b.WriteString(" " + s.Muted.Render(padRight(cell.ci, wd.ci[mi])))
		}
		verdict := cell.verdict
		if !l.long {
			verdict = cell.short
		}
		b.WriteString(" " + style.Render(padRight(verdict, vw[mi])))
		if l.n {
			b.WriteString(" " + s.Muted.Render(padLeft(cell.n, wd.n[mi])))
		}
	}
	return b.String()
}

// h2hStyle colours a cell: worse red, better green, the best endpoint's own cell as best.
func (c *compareView) h2hStyle(cell h2hCell, best bool) lipgloss.Style {
	s := c.styles
	switch {
	case cell.style < 0:
		return s.Bad
	case cell.style > 0:
		return s.Good
	case best:
		return s.Best
	}
	return s.Muted
}

// tooFewWords is the verdict when a side has fewer values than a verdict needs.
var tooFewWords = "n<" + itoa(stats.H2HMinSamples)

// h2hCells are the cells of rows by metric (0 TTFT, 1 decode tok/s) and endpoint, and the
// endpoint each metric compares against (-1 none), whose cell reads "best".
func h2hCells(rows []stats.HeadToHead) (cells [2]map[int]h2hCell, best [2]int) {
	best = [2]int{-1, -1}
	var bestN [2]int
	for mi := range cells {
		cells[mi] = map[int]h2hCell{}
	}
	for _, r := range rows {
		mi, format := 0, ms
		if r.Metric == stats.H2HDecode {
			mi, format = 1, num
		}
		best[mi], bestN[mi] = r.Versus, r.VersusN
		cell := h2hCell{diff: dash, n: itoa(r.N) + "/" + itoa(r.VersusN),
			verdict: string(r.Verdict), short: string(r.Verdict)}
		if r.OK {
			cell.diff = signedFig(r.Diff, format)
			cell.ci = "[" + signedFig(r.Lo, format) + "," + signedFig(r.Hi, format) + "]"
		}
		switch {
		case r.Verdict == stats.VerdictSlower:
			cell.style = -1
		case r.Verdict == stats.VerdictFaster:
			cell.style = 1
		case r.TooFew():
			cell.verdict, cell.short = "too few: "+tooFewWords, tooFewWords
		default:
			cell.short = "n.d. yet"
		}
		cells[mi][r.Endpoint] = cell
	}
	for mi := range cells {
		if best[mi] >= 0 {
			cells[mi][best[mi]] = h2hCell{diff: "best", n: itoa(bestN[mi])}
		}
	}
	return cells, best
}

// h2hWidths are the widths of the head-to-head columns: the names (with a 2-column indent),
// and per metric the difference, the CI, the verdict in long and short words, and n.
type h2hWidths struct {
	name                        int
	diff, ci, verdict, short, n [2]int
}

// measureH2H sizes the columns to the cells of the endpoints of order and to their titles.
func measureH2H(cells [2]map[int]h2hCell, eps []stats.EndpointStats, order []int) h2hWidths {
	wd := h2hWidths{name: 4}
	w := func(s string) int { return len([]rune(s)) }
	for mi := range cells {
		wd.diff[mi], wd.ci[mi], wd.verdict[mi], wd.n[mi] = w(h2hHeads[mi][0]), w(h2hHeads[mi][1]), w(h2hHeads[mi][2]), w(h2hHeads[mi][3])
		wd.short[mi] = w(h2hShortHeads[mi])
	}
	for _, i := range order {
		wd.name = max(wd.name, min(w(eps[i].Name), 18))
		for mi := range cells {
			cell, ok := cells[mi][i]
			if !ok {
				continue
			}
			wd.diff[mi] = max(wd.diff[mi], w(cell.diff))
			wd.ci[mi] = max(wd.ci[mi], w(cell.ci))
			wd.verdict[mi] = max(wd.verdict[mi], w(cell.verdict))
			wd.short[mi] = max(wd.short[mi], w(cell.short))
			wd.n[mi] = max(wd.n[mi], w(cell.n))
		}
	}
	wd.name += 2
	return wd
}

// verdicts are the verdict columns' widths, in long or short words.
func (wd h2hWidths) verdicts(short bool) [2]int {
	if short {
		return wd.short
	}
	return wd.verdict
}

// h2hLayout is what the section shows at a width: the CIs, the long verdicts, the values
// compared (n).
type h2hLayout struct{ ci, long, n bool }

// total is the section's width in layout l.
func (wd h2hWidths) total(l h2hLayout) int {
	total := wd.name + len(h2hGap)
	for mi := range wd.diff {
		total += 1 + wd.diff[mi]
		if l.ci {
			total += 1 + wd.ci[mi]
		}
		total += 1 + wd.verdicts(!l.long)[mi]
		if l.n {
			total += 1 + wd.n[mi]
		}
	}
	return total
}

// choose is the fullest layout that fits in w: the long verdicts give way first, then n
// (the short verdict still says "n<5"), then the CI.
func (wd h2hWidths) choose(w int) h2hLayout {
	for _, l := range []h2hLayout{{true, true, true}, {true, false, true}, {true, false, false}, {false, false, true}} {
		if wd.total(l) <= w {
			return l
		}
	}
	return h2hLayout{}
}

// signedFig formats v with format and an explicit sign: "+95", "−12.3".
func signedFig(v float64, format func(float64) string) string {
	switch {
	case v > 0:
		return "+" + format(v)
	case v < 0:
		return "−" + format(-v)
	}
	return "0"
}
