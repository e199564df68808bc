package ui

import (
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"tokscope/stats"
)

// A time chart is one column per second, the newest at the right, drawn with block elements
// (eighth-cell resolution) over h rows and scaled to the largest value it shows. A second with
// no data is a blank column — a gap, never drawn as 0 — a true 0 is the lowest mark "▁", and
// any value above 0 is at least "▂", so that it never reads as 0. ntcharts' sparkline draws
// 0 and "no data" alike, which is what this chart is for.

// chartPoint is one second of a time chart.
type chartPoint struct {
	v  float64
	ok bool // false: no data (a gap)
}

// partialSecond is how much of the current second must be over before its tok/s is charted:
// a rate over less would jump with every Progress.
const partialSecond = 500 * time.Millisecond

// secondsChart is a time chart redrawn only when its points or size change.
type secondsChart struct {
	style lipgloss.Style
	drawn[chartPoint]
}

func newSecondsChart(style lipgloss.Style) *secondsChart { return &secondsChart{style: style} }

// Set draws pts (oldest first; the newest w) in w×h.
func (c *secondsChart) Set(pts []chartPoint, w, h int) {
	if len(pts) > w {
		pts = pts[len(pts)-w:]
	}
	if !c.stale(pts, w, h) {
		return
	}
	c.view = drawTimeChart(c.style, pts, w, h)
}

// View is the drawn chart, exactly w×h.
func (c *secondsChart) View() string { return c.view }

// drawTimeChart draws pts right-aligned in w columns of h rows.
func drawTimeChart(style lipgloss.Style, pts []chartPoint, w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	top := 0.0
	for _, p := range pts {
		if p.ok && finite(p.v) {
			top = max(top, p.v)
		}
	}
	levels := make([]int, w) // eighths of a cell, from the bottom; -1 = gap
	for i := range levels {
		levels[i] = -1
	}
	off := w - len(pts)
	for i, p := range pts {
		switch {
		case !p.ok || !finite(p.v) || p.v < 0:
		case p.v == 0 || top == 0:
			levels[off+i] = 1
		default:
			levels[off+i] = 2 + int(math.Round(p.v/top*float64(h*8-2)))
		}
	}
	glyphs := []string{" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"}
	rows := make([]string, h)
	var b strings.Builder
	for r := range h {
		b.Reset()
		floor := (h - 1 - r) * 8 // eighths below this row
		for _, lv := range levels {
			switch {
			case lv < 0 || lv <= floor:
				b.WriteByte(' ')
			case lv >= floor+8:
				b.WriteString(glyphs[8])
			default:
				b.WriteString(glyphs[lv-floor])
			}
		}
		rows[r] = style.Render(b.String())
	}
	return strings.Join(rows, "\n")
}

// chartSeconds are the seconds a chart w columns wide shows: the newest w, the current one
// only once partialSecond of it is over.
func chartSeconds(secs []stats.Second, w int) []stats.Second {
	if n := len(secs); n > 0 && secs[n-1].Span < partialSecond {
		secs = secs[:n-1]
	}
	if len(secs) > w {
		secs = secs[len(secs)-w:]
	}
	return secs
}

// tpsPoints are the aggregate tok/s of each second: a gap where no request was in flight.
func tpsPoints(secs []stats.Second) []chartPoint {
	pts := make([]chartPoint, len(secs))
	for i, s := range secs {
		if s.Active || s.Tokens > 0 {
			pts[i] = chartPoint{s.Tokens / s.Span.Seconds(), true}
		}
	}
	return pts
}

// ttftPoints are the mean TTFT of the requests whose first token came in each second: a gap
// where none did.
func ttftPoints(secs []stats.Second) []chartPoint {
	pts := make([]chartPoint, len(secs))
	for i, s := range secs {
		if s.TTFTs > 0 {
			pts[i] = chartPoint{s.TTFT, true}
		}
	}
	return pts
}

// timeAxis labels a chart of n seconds ending now in w columns: "now" under the newest
// column, "−36s" under the oldest and a middle mark, each only where it does not crowd the
// others.
func timeAxis(n, w int) string {
	if n <= 0 || w <= 0 {
		return ""
	}
	line := []rune(strings.Repeat("┈", w))
	right := []rune("now")
	if len(right) > w {
		return string(line)
	}
	copy(line[w-len(right):], right)
	free := w - len(right) - 1 // columns left of "now", one kept blank before it
	left := []rune("−" + itoa(n) + "s")
	start := max(w-n, 0) // the chart is right-aligned: its oldest column
	if start+len(left) > free {
		start = 0
	}
	if start+len(left) > free {
		return string(line)
	}
	copy(line[start:], left)
	mid := []rune("−" + itoa(n/2) + "s")
	at := w - 1 - n/2 - len(mid)/2
	if n >= 16 && at > start+len(left) && at+len(mid) < free {
		copy(line[at:], mid)
	}
	return string(line)
}
