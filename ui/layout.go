package ui

import (
	"math"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Layout constants. Every view is drawn inside the body (terminal minus header and footer)
// and below minWidth×minHeight only the "terminal too small" notice is shown.
const (
	headerHeight = 1
	footerHeight = 1

	minWidth  = 40
	minHeight = 10

	cardMinWidth  = 30 // border 2 + padding 2 + 26 columns of content
	cardMinHeight = 7  // border 2 + 5 lines: title, decode, spark, ttft, spark
	cardAspect    = 3.5

	paneMinWidth  = 24
	paneMinHeight = 6
)

// tooSmall reports whether the terminal is below the minimum the views are laid out for.
func tooSmall(w, h int) bool { return w < minWidth || h < minHeight }

// bodySize is the room left for a view between the header and the footer.
func bodySize(w, h int) (int, int) {
	return max(0, w), max(0, h-headerHeight-footerHeight)
}

// grid is how cards (or stream panes) tile the body: Cols×Rows per page.
type grid struct {
	Cols, Rows int
	Widths     []int // per column, summing to the body width
	Heights    []int // per row, summing to the body height
}

// PerPage is how many cards fit on one page.
func (g grid) PerPage() int { return g.Cols * g.Rows }

// Pages is how many pages n cards need.
func (g grid) Pages(n int) int {
	if g.PerPage() == 0 {
		return 1
	}
	return max(1, (n+g.PerPage()-1)/g.PerPage())
}

// tile chooses the grid for n cards of at least minW×minH in w×h: the fewest pages first,
// then the fewest empty slots, then cards closest to the aspect ratio (width/height in
// cells). A zero grid means not even one card fits.
func tile(n, w, h, minW, minH int, aspect float64) grid {
	maxCols, maxRows := w/minW, h/minH
	if n <= 0 || maxCols == 0 || maxRows == 0 {
		return grid{}
	}
	best, bestScore := grid{}, [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	for cols := 1; cols <= min(maxCols, n); cols++ {
		rows := min(maxRows, (n+cols-1)/cols)
		shown := min(n, cols*rows)
		cw, ch := float64(w)/float64(cols), float64(h)/float64(rows)
		score := [3]float64{
			-float64(shown),
			float64(cols*rows - shown),
			math.Abs(math.Log((cw / ch) / aspect)),
		}
		if slices.Compare(score[:], bestScore[:]) < 0 {
			best, bestScore = grid{Cols: cols, Rows: rows}, score
		}
	}
	best.Widths = split(w, best.Cols)
	best.Heights = split(h, best.Rows)
	return best
}

// split divides total into parts as evenly as possible, the remainder going to the first.
func split(total, parts int) []int {
	if parts <= 0 {
		return nil
	}
	out := make([]int, parts)
	for i := range out {
		out[i] = total / parts
		if i < total%parts {
			out[i]++
		}
	}
	return out
}

// fit makes s exactly w columns by h lines: longer lines are truncated ANSI-aware (never
// wrapped, which would break the height budget), shorter ones padded, extra lines dropped.
func fit(s string, w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	var b strings.Builder
	b.Grow((w + 1) * h)
	for i := 0; i < h; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		line := ""
		if i < len(lines) {
			line = lines[i]
		}
		b.WriteString(fitLine(line, w))
	}
	return b.String()
}

// fitLine truncates or pads one line to exactly w columns.
func fitLine(line string, w int) string {
	lw := ansi.StringWidth(line)
	if lw > w {
		line = ansi.Truncate(line, w, "…")
		lw = ansi.StringWidth(line)
	}
	if lw < w {
		line += strings.Repeat(" ", w-lw)
	}
	return line
}

// truncate cuts s to at most w columns, marking the cut with "…".
func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// wrapLines wraps plain text to lines of at most w columns, at spaces where it can. A " · "
// separator stays at the end of its line ("prefill 31.3 ·" / "outside 14.2 ms"), never
// starts one.
func wrapLines(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	const nbsp = "\u00a0"
	s = strings.ReplaceAll(s, " · ", nbsp+"· ")
	lines := strings.Split(ansi.Wrap(s, w, ""), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(strings.ReplaceAll(lines[i], nbsp, " "), " ")
	}
	return lines
}

// spread puts left and right on one line of width w, right-aligned, truncating left first.
func spread(left, right string, w int) string {
	rw := ansi.StringWidth(right)
	if rw >= w {
		return truncate(right, w)
	}
	left = truncate(left, w-rw-1)
	gap := w - ansi.StringWidth(left) - rw
	return left + strings.Repeat(" ", gap) + right
}

// tooSmallView is the whole screen below the minimum size, itself fitted to the terminal.
func tooSmallView(w, h int) string {
	one := "terminal too small (need " + itoa(minWidth) + "×" + itoa(minHeight) + ", have " + itoa(w) + "×" + itoa(h) + ") · q quits"
	if ansi.StringWidth(one) <= w && h >= 1 {
		return one
	}
	msg := []string{
		"terminal too small",
		"need " + itoa(minWidth) + "×" + itoa(minHeight),
		"have " + itoa(w) + "×" + itoa(h),
		"q quits",
	}
	if h < len(msg) {
		msg = msg[:max(h, 0)]
	}
	for i := range msg {
		msg[i] = truncate(msg[i], w)
	}
	return strings.Join(msg, "\n")
}
