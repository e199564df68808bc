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
	return m.h2h.want(&m.snap)
}

// handleHeadToHead takes a result, redraws the compare view, and asks again if the values
// changed while it was computed.
func (m *Model) handleHeadToHead(msg headToHeadMsg) tea.Cmd {
	if m.h2h.done(msg) && m.view == viewCompare {
		m.renderBody()
	}
	return m.refreshHeadToHead()
}

// h2hCell is one metric's comparison in the compare view.
type h2hCell struct {
	diff, ci string
	verdict  stats.Verdict
	style    int // -1 worse, +1 better, 0 undecided / best / no data
}

// h2hHeads are the titles of the two metrics' columns: 0 TTFT, 1 decode tok/s.
var h2hHeads = [2]string{"Δttft ms", "Δdec t/s"}

// h2hTable draws the head-to-head section for the endpoints of order (display order), at
// most rows of them, in width w; nil when there is nothing to show. Columns are as wide as
// their contents; the CI, then the long verdicts, go when the width is short.
func (c *compareView) h2hTable(eps []stats.EndpointStats, order []int, rows, w int) []string {
	h := c.h2h
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
	showCI, short := wd.choose(w)
	if short && wd.short != wd.verdict {
		title = "head-to-head vs best · Δ median · n.d. = not distinguishable yet"
	}
	out := []string{s.Label.Render(truncate(title, w)), s.TableHeader.Render(truncate(wd.header(showCI, short), w))}
	for _, i := range order {
		out = append(out, truncate(c.h2hRow(eps[i].Name, i, cells, best, wd, showCI, short), w))
	}
	return out
}

// header is the section's column titles.
func (wd h2hWidths) header(showCI, short bool) string {
	vw := wd.verdicts(short)
	var b strings.Builder
	b.WriteString(padRight("", wd.name))
	for mi := range h2hHeads {
		b.WriteString(" " + padLeft(h2hHeads[mi], wd.diff[mi]))
		if showCI {
			b.WriteString(" " + padLeft("95% CI", wd.ci[mi]))
		}
		b.WriteString(" " + padRight("", vw[mi]))
	}
	return b.String()
}

// h2hRow is endpoint i's line of the section: its name, then per metric its difference to
// the best, the CI and the verdict.
func (c *compareView) h2hRow(name string, i int, cells [2]map[int]h2hCell, best [2]int, wd h2hWidths, showCI, short bool) string {
	s := c.styles
	vw := wd.verdicts(short)
	var b strings.Builder
	b.WriteString(s.Title.UnsetBold().Render(padRight("  "+truncate(name, wd.name-2), wd.name)))
	for mi := range cells {
		cell, ok := cells[mi][i]
		if !ok {
			cell = h2hCell{diff: dash}
		}
		style := c.h2hStyle(cell, i == best[mi])
		b.WriteString(" " + style.Render(padLeft(cell.diff, wd.diff[mi])))
		if showCI {
			b.WriteString(" " + s.Muted.Render(padLeft(cell.ci, wd.ci[mi])))
		}
		b.WriteString(" " + style.Render(padRight(verdictText(cell.verdict, short), vw[mi])))
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

// h2hCells are the cells of rows by metric (0 TTFT, 1 decode tok/s) and endpoint, and the
// endpoint each metric compares against (-1 none), whose cell reads "best".
func h2hCells(rows []stats.HeadToHead) (cells [2]map[int]h2hCell, best [2]int) {
	best = [2]int{-1, -1}
	for mi := range cells {
		cells[mi] = map[int]h2hCell{}
	}
	for _, r := range rows {
		mi, format := 0, ms
		if r.Metric == stats.H2HDecode {
			mi, format = 1, num
		}
		best[mi] = r.Versus
		cell := h2hCell{diff: dash, verdict: r.Verdict}
		if r.OK {
			cell.diff = signedFig(r.Diff, format)
			cell.ci = "[" + signedFig(r.Lo, format) + "," + signedFig(r.Hi, format) + "]"
		}
		switch r.Verdict {
		case stats.VerdictSlower:
			cell.style = -1
		case stats.VerdictFaster:
			cell.style = 1
		}
		cells[mi][r.Endpoint] = cell
	}
	for mi := range cells {
		if best[mi] >= 0 {
			cells[mi][best[mi]] = h2hCell{diff: "best"}
		}
	}
	return cells, best
}

// h2hWidths are the widths of the head-to-head columns: the names (with a 2-column indent),
// and per metric the difference, the CI, and the verdict in long and short words.
type h2hWidths struct {
	name                     int
	diff, ci, verdict, short [2]int
}

// measureH2H sizes the columns to the cells of the endpoints of order.
func measureH2H(cells [2]map[int]h2hCell, eps []stats.EndpointStats, order []int) h2hWidths {
	wd := h2hWidths{name: 4}
	for _, i := range order {
		wd.name = max(wd.name, min(len([]rune(eps[i].Name)), 18))
		for mi := range cells {
			cell, ok := cells[mi][i]
			if !ok {
				continue
			}
			wd.diff[mi] = max(wd.diff[mi], len([]rune(h2hHeads[mi])), len([]rune(cell.diff)))
			wd.ci[mi] = max(wd.ci[mi], len("95% CI"), len([]rune(cell.ci)))
			wd.verdict[mi] = max(wd.verdict[mi], len([]rune(verdictText(cell.verdict, false))))
			wd.short[mi] = max(wd.short[mi], len([]rune(verdictText(cell.verdict, true))))
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

// total is the section's width with or without the CI, with long or short verdicts.
func (wd h2hWidths) total(ci, short bool) int {
	total := wd.name
	for mi := range wd.diff {
		total += 1 + wd.diff[mi]
		if ci {
			total += 1 + wd.ci[mi]
		}
		total += 1 + wd.verdicts(short)[mi]
	}
	return total
}

// choose is what fits in w: the CI and the long verdicts, else short verdicts, else
// neither the CI.
func (wd h2hWidths) choose(w int) (showCI, short bool) {
	switch {
	case wd.total(true, false) <= w:
		return true, false
	case wd.total(true, true) <= w:
		return true, true
	}
	return false, true
}

// verdictText is the verdict in words, abbreviated when short.
func verdictText(v stats.Verdict, short bool) string {
	if short && v == stats.VerdictUndecided {
		return "n.d. yet"
	}
	return string(v)
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
