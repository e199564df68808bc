package ui

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/linechart"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"

	"tokscope/sweep"
)

// The sweep view (--sweep): line charts of aggregate tok/s and TTFT p50 against concurrency,
// one line per endpoint, filled in as steps finish, and the selected endpoint's step table.

// Sizes of the sweep view.
const (
	sweepChartMinW  = 24 // a chart narrower than this has no room for its axis labels
	sweepChartMinH  = 6  // title + 3 graph rows + axis + labels
	sweepChartMaxH  = 18
	sweepSideBySide = 70 // from this body width the two charts sit side by side
)

// sweepView draws a sweep's progress, charts and step table. The charts are redrawn only
// when the results or the size change.
type sweepView struct {
	common
	board  *Board         // the run's statistics, with the sweep's steps when a sweep runs
	search capacitySearch // the capacity search being run; nil without --find-max
	names  []string       // the endpoints' names, for the charts' legend

	tput, ttft *sweepChart
}

// newSweepView builds the view of the sweep on board (none: the view says how to start one)
// over the endpoints named names.
func newSweepView(c common, board *Board, search capacitySearch, names []string) *sweepView {
	st := c.styles
	return &sweepView{common: c, board: board, search: search, names: names,
		tput: &sweepChart{styles: st, style: st.SparkDecode},
		ttft: &sweepChart{styles: st, style: st.SparkTTFT}}
}

func (v *sweepView) Name() string { return "Sweep" }

// InTabs: the view is in the header and the Tab cycle only while a sweep runs.
func (v *sweepView) InTabs() bool { return v.board.sweeping() || v.search != nil }

// Info is empty: the status line says where the sweep stands.
func (v *sweepView) Info() string { return "" }

func (v *sweepView) ShortHelp() []key.Binding {
	k := v.keys
	return []key.Binding{k.Help, k.NextView, k.Left, k.Right, k.Back, k.Quit}
}

// Render draws the sweep's status, charts and the selected endpoint's steps.
func (v *sweepView) Render(f *frame) string {
	s, names := v.styles, v.names
	if v.search != nil {
		return renderSearch(s, v.search, names, f.sel, f.now, v.w, v.h)
	}
	if !v.board.sweeping() {
		msg := s.Title.Render("no sweep") + "\n\n" + s.Muted.Render(
			"Run tokscope --sweep 1,2,4,8,16 [--step-duration 30s] to step every endpoint's\n"+
				"concurrency and chart aggregate tok/s and TTFT against it, step by step.")
		return fit(msg, v.w, v.h)
	}
	prog, results, plan := v.board.sweepState()

	lines := []string{sweepStatus(s, plan, prog)}
	room := v.h - 1
	steps := len(plan.Concurrency)
	tableH := steps + 2 // endpoint title, header, one row per step
	// Charts (plus a legend line) first, as tall as the table leaves them; with little room,
	// the smallest charts and the latest table rows.
	side := v.w >= sweepSideBySide
	need, most := sweepChartMinH+1, sweepChartMaxH+1
	if !side {
		need, most = 2*sweepChartMinH+1, 2*sweepChartMaxH+1
	}
	chartsH := 0
	switch {
	case v.w < sweepChartMinW || len(names) == 0:
	case room >= tableH+need:
		chartsH = min(room-tableH, most)
	case room >= need+3:
		chartsH = need
	}
	if chartsH > 0 {
		labels := make([]string, steps)
		for i, c := range plan.Concurrency {
			labels[i] = itoa(c)
		}
		tput, ttft := sweepSeries(results, len(names), steps)
		legendH := 1
		graphH := chartsH - legendH
		if side {
			lw := v.w / 2
			v.tput.Set("aggregate tok/s by concurrency", labels, tput, lw-1, graphH)
			v.ttft.Set("TTFT p50 ms by concurrency", labels, ttft, v.w-lw, graphH)
			lines = append(lines, lipgloss.JoinHorizontal(lipgloss.Top, v.tput.View(), " ", v.ttft.View()))
		} else {
			hh := graphH / 2
			v.tput.Set("aggregate tok/s by concurrency", labels, tput, v.w, hh)
			v.ttft.Set("TTFT p50 ms by concurrency", labels, ttft, v.w, graphH-hh)
			lines = append(lines, v.tput.View(), v.ttft.View())
		}
		lines = append(lines, sweepLegend(s, names, clamp(f.sel, 0, len(names)-1), v.w))
		room -= chartsH
	}
	lines = append(lines, v.table(f, results, plan, prog, room, chartsH == 0)...)
	return fit(strings.Join(lines, "\n"), v.w, v.h)
}

// sweepStatus is the first line: the plan and where the sweep stands.
func sweepStatus(s *Styles, plan sweep.Plan, p sweep.Progress) string {
	levels := make([]string, len(plan.Concurrency))
	for i, c := range plan.Concurrency {
		levels[i] = itoa(c)
	}
	head := s.Title.Render("sweep") + " " + s.Muted.Render("c "+strings.Join(levels, "→")+" · "+plan.StepDuration.String()+" steps") + "  "
	var state string
	switch {
	case p.Complete:
		state = s.Good.Render("complete: " + itoa(p.Steps) + " steps")
	case p.Interrupted:
		state = s.Bad.Render("interrupted after " + itoa(p.Finished) + " of " + itoa(p.Steps) + " steps")
	case p.Draining:
		state = s.Warn.Render("last step over: its requests are finishing")
	case p.Step < 0:
		state = s.Muted.Render("waiting for the warm-ups")
	default:
		left := p.Left.Round(time.Second)
		state = s.Value.Render("step "+itoa(p.Step+1)+"/"+itoa(p.Steps)) + " " +
			s.Muted.Render("c"+itoa(p.Concurrency)+" · "+left.String()+" left")
	}
	return head + state
}

// sweepMarkers name the endpoints in the charts: colour is not enough (NO_COLOR, Ascii).
const sweepMarkers = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

func sweepMarker(ep int) rune {
	if ep < len(sweepMarkers) {
		return rune(sweepMarkers[ep])
	}
	return '*'
}

// sweepLegend names the charts' markers and is the table's title: the selected endpoint,
// whose steps the table lists, marked ▸ (and ←/→ to choose another when there is one).
func sweepLegend(s *Styles, names []string, sel, w int) string {
	parts := make([]string, len(names))
	for i, n := range names {
		if i == sel {
			parts[i] = s.Title.Render("▸" + string(sweepMarker(i)) + " " + n)
			continue
		}
		parts[i] = s.Value.Render(string(sweepMarker(i))) + " " + s.Muted.Render(n)
	}
	line := strings.Join(parts, "  ")
	if len(names) > 1 {
		line += s.Muted.Render("  ←/→ endpoint")
	}
	return truncate(line, w)
}

// sweepSeries are the charts' values: [endpoint][step], NaN where the step has no figure.
func sweepSeries(results []sweep.Result, endpoints, steps int) (tput, ttft [][]float64) {
	tput, ttft = make([][]float64, endpoints), make([][]float64, endpoints)
	for e := range endpoints {
		tput[e], ttft[e] = make([]float64, steps), make([]float64, steps)
		for i := range steps {
			tput[e][i], ttft[e][i] = math.NaN(), math.NaN()
		}
	}
	for i, r := range results {
		e, st := i%endpoints, r.Step-1
		if st < 0 || st >= steps {
			continue
		}
		if r.Requests > 0 {
			tput[e][st] = r.AggregateTPS
		}
		if r.TTFT.Count > 0 {
			ttft[e][st] = r.TTFT.P50
		}
	}
	return tput, ttft
}

// table is the selected endpoint's steps: finished ones with their figures, the running one
// marked, the rest pending. It keeps the latest rows when they do not all fit. Its title names
// the endpoint when titled: under the charts, their legend does (sweepLegend).
func (v *sweepView) table(f *frame, results []sweep.Result, plan sweep.Plan, p sweep.Progress, room int, titled bool) []string {
	s := v.styles
	if room <= 0 || len(f.snap.Endpoints) == 0 {
		return nil
	}
	sel := clamp(f.sel, 0, len(f.snap.Endpoints)-1)
	n := len(f.snap.Endpoints)
	title := s.Title.Render(string(sweepMarker(sel)) + " " + f.snap.Endpoints[sel].Name)
	if n > 1 {
		title += s.Muted.Render("  ←/→ endpoint")
	}
	cols := []struct {
		title string
		width int
	}{{"step", 4}, {"conc", 5}, {"req", 5}, {"err %", 6}, {"agg tok/s", 10}, {"dec p50", 8}, {"ttft p50", 9}, {"ttft p99", 9}}
	row := func(cells []string) string {
		var b strings.Builder
		for i, c := range cells {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strings.Repeat(" ", max(0, cols[i].width-lipgloss.Width(c))) + c)
		}
		return b.String()
	}
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.title
	}
	rows := []string{s.TableHeader.Render(row(head))}
	if titled {
		rows = append([]string{title}, rows...)
	}
	var body []string
	for i, conc := range plan.Concurrency {
		cells := []string{itoa(i + 1), itoa(conc)}
		k := i*n + sel
		switch {
		case k < len(results):
			r := &results[k]
			mark := approx(r.TokenSource)
			errText := dash
			if pc, ok := r.ErrorPct(); ok {
				errText = pct(pc)
			}
			aggText := dash
			if r.Requests > 0 {
				aggText = mark + num(r.AggregateTPS)
			}
			dec := pick(r.DecodeTPS, p50, num)
			if r.DecodeTPS.Count > 0 {
				dec = mark + dec
			}
			cells = append(cells, itoa(r.Requests), errText, aggText, dec, pick(r.TTFT, p50, ms), pick(r.TTFT, p99, ms))
			body = append(body, row(cells))
		case i == p.Step && !p.Interrupted:
			body = append(body, row(cells)+s.Muted.Render("  running"))
		case i < p.Step || p.Draining:
			body = append(body, row(cells)+s.Muted.Render("  finishing its requests"))
		default:
			body = append(body, s.Faint.Render(row(cells)))
		}
	}
	if over := len(rows) + len(body) - room; over > 0 {
		body = body[min(over, len(body)):]
	}
	return append(rows, body...)
}

// sweepChart is a titled ntcharts line chart of one figure against the sweep's steps (evenly
// spaced, labelled with their concurrency), one line per endpoint with its marker at every
// point. It redraws only when its inputs change.
type sweepChart struct {
	styles *Styles
	style  lipgloss.Style
	w, h   int
	title  string
	labels []string
	series [][]float64
	view   string
}

// Set draws title over a w×(h-1) chart.
func (c *sweepChart) Set(title string, labels []string, series [][]float64, w, h int) {
	if c.view != "" && w == c.w && h == c.h && title == c.title && slices.Equal(labels, c.labels) && slices.EqualFunc(series, c.series, sameSeries) {
		return
	}
	c.w, c.h, c.title, c.labels, c.series = w, h, title, labels, series
	c.view = c.draw()
}

func (c *sweepChart) View() string { return c.view }

func (c *sweepChart) draw() string {
	w, h := c.w, c.h
	if w <= 0 || h <= 0 {
		return ""
	}
	head := truncate(c.styles.Label.Render(c.title), w)
	peak, have := c.peak()
	switch {
	case !have:
		return fit(head+"\n"+c.styles.Muted.Render(dash+" no step finished yet"), w, h)
	case w < sweepChartMinW || h < sweepChartMinH:
		return fit(head+"\n"+c.styles.Muted.Render("(no room for the chart)"), w, h)
	}
	ch := h - 1
	gh := ch - 2 // graph rows above the X axis
	// ntcharts draws a value v on row 1 + round(v·(gh−1)/top) above the axis (row 0), lines
	// likewise, but labels row r with r·top/gh: its labels would overstate every point by
	// about one row. So the Y labels are ours, on the rows where values land: 0 on row 1,
	// then every other row, each a round number.
	perLabel := niceCeil(peak * 1.05 / (float64(gh-1) / 2)) // value between labelled rows
	top := perLabel * float64(gh-1) / 2
	yLabel := func(r int, _ float64) string {
		if r < 1 || (r-1)%2 != 0 {
			return ""
		}
		return strconv.FormatFloat(float64(r-1)/2*perLabel, 'f', -1, 64)
	}
	maxX := float64(max(len(c.labels)-1, 1))
	lc := linechart.New(w, ch, 0, maxX, 0, top,
		linechart.WithXYSteps(1, 1),
		linechart.WithStyles(c.styles.ChartAxis, c.styles.ChartLabel, c.style),
		linechart.WithXLabelFormatter(func(int, float64) string { return "" }),
		linechart.WithYLabelFormatter(yLabel),
	)
	lc.DrawXYAxisAndLabel()
	c.drawLines(&lc, gh, top)
	c.drawMarkers(&lc)
	c.drawXLabels(&lc, maxX)
	return fit(head+"\n"+lc.View(), w, h)
}

// peak is the highest finite value of every series; have=false when there is none.
func (c *sweepChart) peak() (peak float64, have bool) {
	for _, s := range c.series {
		for _, v := range s {
			if finite(v) {
				peak, have = max(peak, v), true
			}
		}
	}
	return peak, have
}

// drawLines joins each series' points. Braille dots land on cell floor(y·(4gh−1)/4top),
// markers on round(v·(gh−1)/top): lines are drawn at the y that puts each point's dots in
// its marker's cell.
func (c *sweepChart) drawLines(lc *linechart.Model, gh int, top float64) {
	brailleY := func(v float64) float64 {
		return (v*float64(gh-1)/top + 0.5) * 4 * top / float64(4*gh-1)
	}
	for _, s := range c.series {
		prev := -1
		for i, v := range s {
			if !finite(v) {
				continue
			}
			if prev >= 0 {
				lc.DrawBrailleLine(canvas.Float64Point{X: float64(prev), Y: brailleY(s[prev])}, canvas.Float64Point{X: float64(i), Y: brailleY(v)})
			}
			prev = i
		}
	}
}

// drawMarkers puts an endpoint's letter on each of its points. Endpoints with (nearly) the
// same figure at a step would land on one cell, the later letter hiding the earlier: each
// takes the nearest free cell of its row instead, so every letter shows.
func (c *sweepChart) drawMarkers(lc *linechart.Model) {
	taken := map[canvas.Point]bool{}
	for e, s := range c.series {
		for i, v := range s {
			if !finite(v) {
				continue
			}
			p := markerCell(lc, canvas.Float64Point{X: float64(i), Y: v})
			for _, dx := range []int{0, 1, -1, 2, -2, 3, -3} {
				q := canvas.Point{X: p.X + dx, Y: p.Y}
				if !taken[q] && q.X > lc.Origin().X && q.X < c.w {
					p = q
					break
				}
			}
			taken[p] = true
			lc.Canvas.SetCell(p, canvas.NewCellWithStyle(sweepMarker(e), c.styles.Value))
		}
	}
}

// drawXLabels writes each step's concurrency under its column, when there is room.
func (c *sweepChart) drawXLabels(lc *linechart.Model, maxX float64) {
	origin, gw := lc.Origin(), lc.GraphWidth()
	next := origin.X + 1
	for i, l := range c.labels {
		col := origin.X + 1 + int(math.Round(float64(i)/maxX*float64(gw-1)))
		col = max(col-len(l)/2, next)
		if col+len(l) > c.w {
			break
		}
		lc.Canvas.SetStringWithStyle(canvas.Point{X: col, Y: origin.Y + 1}, l, c.styles.ChartLabel)
		next = col + len(l) + 1
	}
}

// markerCell is the canvas cell linechart's DrawRuneWithStyle would draw f on (the graph
// area is right of the Y axis and above the X axis).
func markerCell(lc *linechart.Model, f canvas.Float64Point) canvas.Point {
	p := canvas.CanvasPointFromFloat64Point(lc.Origin(), lc.ScaleFloat64Point(f))
	return canvas.Point{X: p.X + 1, Y: p.Y - 1}
}

// sameSeries: equal values, NaN (no figure) equal to NaN.
func sameSeries(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
}
