package ui

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

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
	var cells [2]map[int]h2hCell // by metric (0 TTFT, 1 decode tok/s), then endpoint
	best := [2]int{-1, -1}
	for mi := range cells {
		cells[mi] = map[int]h2hCell{}
	}
	for _, r := range h.rows {
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

	heads := [2]string{"Δttft ms", "Δdec t/s"}
	nameW := 4
	var diffW, ciW, verdictW, shortW [2]int
	for _, i := range order {
		nameW = max(nameW, min(len([]rune(eps[i].Name)), 18))
		for mi := range cells {
			cell, ok := cells[mi][i]
			if !ok {
				continue
			}
			diffW[mi] = max(diffW[mi], len([]rune(heads[mi])), len([]rune(cell.diff)))
			ciW[mi] = max(ciW[mi], len("95% CI"), len([]rune(cell.ci)))
			verdictW[mi] = max(verdictW[mi], len([]rune(verdictText(cell.verdict, false))))
			shortW[mi] = max(shortW[mi], len([]rune(verdictText(cell.verdict, true))))
		}
	}
	nameW += 2
	width := func(ci, short bool) int {
		total := nameW
		for mi := range cells {
			total += 1 + diffW[mi]
			if ci {
				total += 1 + ciW[mi]
			}
			if short {
				total += 1 + shortW[mi]
			} else {
				total += 1 + verdictW[mi]
			}
		}
		return total
	}
	showCI, short := true, false
	switch {
	case width(true, false) <= w:
	case width(true, true) <= w:
		short = true
	default:
		showCI, short = false, true
	}
	if short && shortW != verdictW {
		title = "head-to-head vs best · Δ median · n.d. = not distinguishable yet"
	}
	vw := verdictW
	if short {
		vw = shortW
	}

	out := []string{s.Label.Render(truncate(title, w))}
	var b strings.Builder
	b.WriteString(padRight("", nameW))
	for mi := range cells {
		b.WriteString(" " + padLeft(heads[mi], diffW[mi]))
		if showCI {
			b.WriteString(" " + padLeft("95% CI", ciW[mi]))
		}
		b.WriteString(" " + padRight("", vw[mi]))
	}
	out = append(out, s.TableHeader.Render(truncate(b.String(), w)))
	for _, i := range order {
		b.Reset()
		b.WriteString(s.Title.UnsetBold().Render(padRight("  "+truncate(eps[i].Name, nameW-2), nameW)))
		for mi := range cells {
			cell, ok := cells[mi][i]
			if !ok {
				cell = h2hCell{diff: dash}
			}
			style := s.Muted
			switch {
			case cell.style < 0:
				style = s.Bad
			case cell.style > 0:
				style = s.Good
			case i == best[mi]:
				style = s.Best
			}
			b.WriteString(" " + style.Render(padLeft(cell.diff, diffW[mi])))
			if showCI {
				b.WriteString(" " + s.Muted.Render(padLeft(cell.ci, ciW[mi])))
			}
			b.WriteString(" " + style.Render(padRight(verdictText(cell.verdict, short), vw[mi])))
		}
		out = append(out, truncate(b.String(), w))
	}
	return out
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
