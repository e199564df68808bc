package ui

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/linechart/timeserieslinechart"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"tokscope/feature"
	"tokscope/sample"
	"tokscope/servermetrics"
	"tokscope/stats"
)

// detailSpan is how far back the detail charts reach.
const detailSpan = 15 * time.Minute

// detailView is one endpoint in depth: time series of TTFT and decode tok/s, the TTFT
// breakdown of recent requests, the ITL distribution, the reasoning/answer split and recent
// errors.
type detailView struct {
	common
	ttft, decode *timeChart
	waiting, kv  *timeChart // the server's own queue and KV cache (servermetrics)
	key          detailKey
	body         string
}

type detailKey struct {
	w, h, sel int
	snap      uint64
	state     uint64
	status    string
}

func newDetailView(c common) *detailView {
	return &detailView{
		common:  c,
		ttft:    newTimeChart(c.styles, c.styles.SparkTTFT),
		decode:  newTimeChart(c.styles, c.styles.SparkDecode),
		waiting: newTimeChart(c.styles, c.styles.SparkTTFT),
		kv:      &timeChart{styles: c.styles, style: c.styles.SparkDecode, limit: 100},
	}
}

func (d *detailView) Name() string { return "Detail" }

// Info is empty: the title line names the endpoint.
func (d *detailView) Info() string { return "" }

func (d *detailView) ShortHelp() []key.Binding {
	k := d.keys
	return []key.Binding{k.Help, k.Back, k.Left, k.Right, k.Pause, k.Reset, k.Quit}
}

// Render draws the selected endpoint, redrawing only when its data or the size changed.
func (d *detailView) Render(f *frame) string {
	es, st := &f.snap.Endpoints[f.sel], f.states[f.sel]
	status, kind := st.status(f.now)
	k := detailKey{d.w, d.h, f.sel, f.snapVersion, st.version, status}
	if k == d.key && d.body != "" {
		return d.body
	}
	d.key = k
	s := d.styles

	// The title gives up the base URL before it is cut: the status and concurrency at its end
	// change, the URL does not.
	tail := "  " + statusStyle(s, kind).Render(status) + s.Muted.Render(" · c"+itoa(st.concurrency))
	lines := []string{figureFit(d.w,
		s.Title.Render(es.Name)+s.Muted.Render(" · "+es.Model+apiTag(es.API)+" · "+es.BaseURL)+tail,
		s.Title.Render(es.Name)+s.Muted.Render(" · "+es.Model+apiTag(es.API))+tail)}
	rest := d.h - 1
	srv := es.Server
	if srv != nil && srv.Scrapes == 0 {
		lines = append(lines, featureLine(s, "server", es, d.w)) // the quiet note
		rest--
	}

	// Charts: side by side when wide enough, else stacked; the server's below the client's
	// when it was scraped and there is room.
	serverH := 0
	if srv != nil && srv.Scrapes > 0 && rest >= 16 {
		serverH = clamp(rest/4, 4, 10)
		rest -= serverH
	}
	chartH := clamp(rest*2/5, 4, 16)
	var ttftPts, decPts []timeserieslinechart.TimePoint
	for _, p := range es.History {
		if f.now.Sub(p.At) > detailSpan {
			continue
		}
		ttftPts = append(ttftPts, timeserieslinechart.TimePoint{Time: p.At, Value: p.TTFT})
		if p.DecodeOK {
			decPts = append(decPts, timeserieslinechart.TimePoint{Time: p.At, Value: p.DecodeTPS})
		}
	}
	// The titles' figures are over the last 60 s (the chart reaches back detailSpan).
	ttftFigs := "p50 " + pick(es.Recent.TTFT, p50, ms) + " p95 " + pick(es.Recent.TTFT, p95, ms)
	decFigs := "p50 " + pick(es.Recent.DecodeTPS, p50, num) + " p10 " + pick(es.Recent.DecodeTPS, p10, num)
	decUnit := "decode " + approx(es.TokenSource) + "tok/s"
	titles := func(w int) (string, string) {
		return figureFit(w, "TTFT ms"+s.Muted.Render(" · last 60 s: "+ttftFigs), "TTFT ms"+s.Muted.Render(" 60 s: "+ttftFigs)),
			figureFit(w, decUnit+s.Muted.Render(" · last 60 s: "+decFigs), decUnit+s.Muted.Render(" 60 s: "+decFigs))
	}
	if d.w >= 70 {
		cw := (d.w - 1) / 2
		ttftTitle, decTitle := titles(min(cw, d.w-1-cw))
		d.ttft.Set(ttftTitle, ttftPts, cw, chartH)
		d.decode.Set(decTitle, decPts, d.w-1-cw, chartH)
		lines = append(lines, lipgloss.JoinHorizontal(lipgloss.Top, d.ttft.View(), " ", d.decode.View()))
	} else {
		ch := max(3, chartH/2+1)
		chartH = 2 * ch
		ttftTitle, decTitle := titles(d.w)
		d.ttft.Set(ttftTitle, ttftPts, d.w, ch)
		d.decode.Set(decTitle, decPts, d.w, ch)
		lines = append(lines, d.ttft.View(), d.decode.View())
	}
	rest -= chartH
	if serverH > 0 {
		lines = append(lines, d.serverCharts(es, f.now, serverH))
	}

	if rest > 0 {
		lines = append(lines, d.lower(es, st, f.itl(f.sel), rest)...)
	}
	d.body = fit(strings.Join(lines, "\n"), d.w, d.h)
	return d.body
}

// lower is the bottom of the view, rest rows: the breakdown of recent requests beside (or
// above) the ITL bars (itl: the recent gaps counted by itlBuckets), the reasoning split and
// the errors.
func (d *detailView) lower(es *stats.EndpointStats, st *endpointState, itl []int, rest int) []string {
	switch {
	case d.w >= 78:
		lw := breakdownWidth
		left := fit(d.breakdown(st, lw, rest), lw, rest)
		right := fit(d.side(es, st, itl, d.w-lw-2, rest), d.w-lw-2, rest)
		return []string{lipgloss.JoinHorizontal(lipgloss.Top, left, "  ", right)}
	case rest >= 8:
		bh := max(3, min(rest/2, len(st.samples)+2))
		return []string{fit(d.breakdown(st, d.w, bh), d.w, bh), d.side(es, st, itl, d.w, rest-bh)}
	}
	return []string{d.breakdown(st, d.w, rest)}
}

// serverCharts are the server's requests waiting (under TTFT: a queue building up is what a
// rising TTFT is made of) and its KV-cache usage (under decode), h rows, with the latest
// figures and the server's generation rate beside the client's aggregate in their titles.
func (d *detailView) serverCharts(es *stats.EndpointStats, now time.Time, h int) string {
	s, srv := d.styles, es.Server
	var waitPts, kvPts []timeserieslinechart.TimePoint
	for _, p := range srv.History {
		if now.Sub(p.At) > detailSpan {
			continue
		}
		if p.Waiting.OK {
			waitPts = append(waitPts, timeserieslinechart.TimePoint{Time: p.At, Value: p.Waiting.V})
		}
		if p.KVCacheUsage.OK {
			kvPts = append(kvPts, timeserieslinechart.TimePoint{Time: p.At, Value: 100 * p.KVCacheUsage.V})
		}
	}
	r := &srv.Latest
	figure := func(v servermetrics.Value, f func(float64) string) string {
		if !v.OK {
			return dash
		}
		return f(v.V)
	}
	count := func(v float64) string { return itoa(int(v + 0.5)) }
	run, wait, gen := figure(r.Running, count), figure(r.Waiting, count), figure(r.GenTPS, num)
	// Each title is said shorter until it fits its chart, never cut (docs/live-view.md).
	waitTitles := func(w int) string {
		return figureFit(w,
			"server waiting"+s.Muted.Render("  run "+run+" · wait "+wait+" ("+string(srv.Kind)+")"),
			"server waiting"+s.Muted.Render("  run "+run+" · wait "+wait),
			"waiting"+s.Muted.Render("  run "+run+" · wait "+wait))
	}
	kvTitles := func(w int) string {
		if len(kvPts) == 0 {
			return figureFit(w,
				"server KV %"+s.Muted.Render(" (not exposed) · gen "+gen+" tok/s"),
				"KV %"+s.Muted.Render(" not exposed · gen "+gen+" tok/s"))
		}
		agg := approx(es.TokenSource) + num(es.AggregateTPS)
		return figureFit(w,
			"server KV %"+s.Muted.Render("  gen "+gen+" tok/s · client agg "+agg),
			"server KV %"+s.Muted.Render("  gen "+gen+" · client agg "+agg+" tok/s"),
			"server KV %"+s.Muted.Render("  gen "+gen+" tok/s"),
			"KV %"+s.Muted.Render("  gen "+gen+" tok/s"))
	}
	if d.w >= 70 {
		cw := (d.w - 1) / 2
		d.waiting.Set(waitTitles(cw), waitPts, cw, h)
		d.kv.Set(kvTitles(d.w-1-cw), kvPts, d.w-1-cw, h)
		return lipgloss.JoinHorizontal(lipgloss.Top, d.waiting.View(), " ", d.kv.View())
	}
	hh := max(2, h/2)
	d.waiting.Set(waitTitles(d.w), waitPts, d.w, hh)
	d.kv.Set(kvTitles(d.w), kvPts, d.w, h-hh)
	return d.waiting.View() + "\n" + d.kv.View()
}

// breakdownWidth is the width of the breakdown table: time 8, three cells of 5, two of 7,
// one of 6.
const breakdownWidth = 8 + 3*(1+5) + 2*(1+7) + (1 + 6)

// breakdown is the TTFT of recent requests split into its phases, newest first: dns,
// connect and tls (on a new connection only), then the wait from the request sent to the
// response headers, then from the headers to the first token.
func (d *detailView) breakdown(st *endpointState, w, h int) string {
	s := d.styles
	out := []string{s.Label.Render("TTFT breakdown, recent requests (ms)")}
	if st.connPerRequest {
		// Connect time is then part of every TTFT on this endpoint: say why the conn column is full.
		out = append(out, truncate(s.Notice.Render("server closes every connection:"), w),
			truncate(s.Notice.Render("a new one per request, conn is in every TTFT"), w))
	}
	// The notes wrap rather than lose their end: at the table's width, "outside 8019.7 ms
	// (llamacpp)" was cut to "outside 8019.7 ms (llam…".
	if h >= 6 {
		for _, l := range wrapLines("headers: sent→headers · 1st tok: headers→token", w) {
			out = append(out, s.Muted.Render(l))
		}
	}
	if l := serverBreakdown(st.samples); l != "" && h >= 5 {
		for _, l := range wrapLines(l, w) {
			out = append(out, s.Value.Render(l))
		}
	}
	cols := []string{"time", "dns", "conn", "tls", "headers", "1st tok", "ttft"}
	widths := []int{8, 5, 5, 5, 7, 7, 6}
	var b strings.Builder
	for i, c := range cols {
		if i == 0 {
			b.WriteString(padRight(c, widths[i]))
		} else {
			b.WriteString(" " + padLeft(c, widths[i]))
		}
	}
	out = append(out, s.TableHeader.Render(b.String()))
	if len(st.samples) == 0 {
		out = append(out, s.Muted.Render(dash+" no finished requests yet"))
	}
	for i := len(st.samples) - 1; i >= 0 && len(out) < h; i-- {
		sm := st.samples[i]
		wait, toTok := sample.Absent, sample.Absent
		if sm.Wrote >= 0 && sm.Headers >= sm.Wrote {
			wait = sm.Headers - sm.Wrote
		}
		if sm.Headers >= 0 && sm.FirstToken >= sm.Headers {
			toTok = sm.FirstToken - sm.Headers
		}
		cells := []string{sm.Start.Format("15:04:05"), durMs(sm.DNS), durMs(sm.Connect), durMs(sm.TLS),
			durMs(wait), durMs(toTok), durMs(sm.FirstToken)}
		b.Reset()
		for j, c := range cells {
			if j == 0 {
				b.WriteString(s.Muted.Render(padRight(c, widths[j])))
			} else if j == len(cells)-1 {
				b.WriteString(" " + s.Value.Render(padLeft(c, widths[j])))
			} else {
				b.WriteString(" " + padLeft(c, widths[j]))
			}
		}
		out = append(out, b.String())
	}
	return strings.Join(out, "\n")
}

// detailFeatures are the lines under the reasoning split and above the recent errors, in
// this order: the prompt and the prefix cache, then the features' (package feature) at
// feature.DetailMid (the SLO, the cost), then at feature.DetailLast (the rate limits).
func detailFeatures(s *Styles, es *stats.EndpointStats, w int) []string {
	lines := promptLines(s, es, w)
	for _, at := range []feature.DetailSlot{feature.DetailMid, feature.DetailLast} {
		for _, f := range feature.All() {
			if f.Detail != nil && f.DetailAt == at {
				for _, l := range f.Detail(es) {
					lines = append(lines, detailLine(s, &l, w)...)
				}
			}
		}
	}
	return lines
}

// detailLine draws one of a feature's detail lines in a column of w: the first form that fits
// (else the last cut), or its text wrapped, never cut, with its Then after it.
func detailLine(s *Styles, l *feature.DetailLine, w int) []string {
	if l.Wrap == nil {
		return []string{fitSpans(w, styledForms(s, l.Forms)...)}
	}
	style := roleStyle(s, l.Wrap.Role)
	lines := wrapLines(l.Wrap.Text, w)
	for i := range lines {
		lines[i] = style.Render(lines[i])
	}
	if l.Then == nil {
		return lines
	}
	then := roleStyle(s, l.Then.Role).Render(l.Then.Text)
	if last := len(lines) - 1; ansi.StringWidth(lines[last])+1+ansi.StringWidth(l.Then.Text) <= w {
		lines[last] += " " + then
		return lines
	}
	return append(lines, then)
}

// itlBuckets are the upper bounds (ms) of the ITL histogram rows.
var itlBuckets = []float64{1, 1.5, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000, 2000, 5000, 1e18}

// side is the ITL distribution, the reasoning/answer split and the recent errors.
func (d *detailView) side(es *stats.EndpointStats, st *endpointState, itl []int, w, h int) string {
	s := d.styles
	if h <= 0 {
		return ""
	}
	var phases []string
	if r, a := es.Recent.ReasoningTPS, es.Recent.AnswerTPS; r.Count > 0 || hasReasoning(st) {
		rv, av := approx(es.TokenSource)+pick(r, p50, num), approx(es.TokenSource)+pick(a, p50, num)
		phases = append(phases, figureFit(w,
			s.Label.Render("reasoning ")+rv+s.Unit.Render(" tok/s")+s.Label.Render("  answer ")+av+s.Unit.Render(" tok/s"),
			s.Label.Render("think ")+rv+s.Label.Render(" answer ")+av+s.Unit.Render(" tok/s")))
		if last := lastReasoning(st); last != nil {
			if p, ok := last.PhaseSplit(); ok {
				phases = append(phases, figureFit(w,
					s.Muted.Render("last: "+itoa(p.ReasoningTokens)+" reasoning + "+itoa(p.AnswerTokens)+" answer tok"),
					s.Muted.Render("last: "+itoa(p.ReasoningTokens)+" think + "+itoa(p.AnswerTokens)+" tok")))
			}
		}
	}
	phases = append(phases, detailFeatures(s, es, w)...)
	var errs []string
	if len(es.RecentErrors) > 0 {
		errs = append(errs, s.Label.Render("recent errors"))
		for i := len(es.RecentErrors) - 1; i >= 0; i-- {
			e := es.RecentErrors[i]
			errs = append(errs, s.Muted.Render(e.At.Format("15:04:05"))+" "+s.Bad.Render(e.Kind)+" "+oneLine(e.Message))
		}
	}
	itlH := h - len(phases)
	if len(errs) > 0 {
		itlH -= min(len(errs), max(3, h/3)) + 1
	}
	out := []string{}
	if itlH >= 3 {
		out = append(out, strings.Split(d.itl(es, itl, w, itlH), "\n")...)
	}
	if len(phases) > 0 {
		out = append(out, phases...)
	}
	if len(errs) > 0 {
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, errs...)
	}
	for i := range out {
		out[i] = truncate(out[i], w)
	}
	return strings.Join(out, "\n")
}

// itl draws the distribution of the recent inter-chunk gaps (counts: per itlBuckets, from
// the statistics, the same gaps as the title's figures) as horizontal bars.
func (d *detailView) itl(es *stats.EndpointStats, counts []int, w, h int) string {
	s := d.styles
	q := "p50 " + pick(es.Recent.ITL, p50, ms) + " p99 " + pick(es.Recent.ITL, p99, ms)
	longest := pick(es.Recent.MaxStall, dmax, ms)
	short := s.Label.Render("ITL ms") + s.Muted.Render(" 60 s: "+q+" max gap "+longest)
	title := figureFit(w, s.Label.Render("ITL ms")+s.Muted.Render(" · last 60 s: "+q+" max gap "+longest), short)
	if ansi.StringWidth(short) > w {
		// Narrow: the window on the title line, the figures under it.
		title = s.Label.Render("ITL ms") + s.Muted.Render(" · last 60 s") + "\n" +
			s.Muted.Render(truncate(q+" max gap "+longest, w))
		h--
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	if total == 0 {
		return title + "\n" + s.Muted.Render(dash+" no gaps yet")
	}
	rows := itlRows(counts, max(1, h-1))
	top := 0
	for _, r := range rows {
		top = max(top, r.count)
	}
	out := []string{title}
	for _, r := range rows {
		label := "≤" + ms(r.upper)
		if r.upper >= 1e18 {
			label = ">" + ms(itlBuckets[len(itlBuckets)-2])
		}
		share := 100 * float64(r.count) / float64(total)
		shareText := pct(share) + "%"
		if share > 0 && share < 0.1 {
			shareText = "<0.1%"
		}
		barW := max(1, w-7-7)
		out = append(out, padLeft(label, 6)+" "+s.BarITL.Render(padRight(bar(float64(r.count), float64(top), barW), barW))+
			padLeft(shareText, 7))
	}
	return strings.Join(out, "\n")
}

// itlRow is one bar of the ITL distribution: the gaps up to upper ms.
type itlRow struct {
	upper float64
	count int
}

// itlRows are the bars from the first to the last non-empty bucket of counts, neighbours
// merged pairwise until at most n remain.
func itlRows(counts []int, n int) []itlRow {
	lo, hi := 0, len(counts)-1
	for lo < hi && counts[lo] == 0 {
		lo++
	}
	for hi > lo && counts[hi] == 0 {
		hi--
	}
	var rows []itlRow
	for i := lo; i <= hi; i++ {
		rows = append(rows, itlRow{itlBuckets[i], counts[i]})
	}
	for len(rows) > n {
		merged := rows[:0:0]
		for i := 0; i < len(rows); i += 2 {
			r := rows[i]
			if i+1 < len(rows) {
				r = itlRow{rows[i+1].upper, r.count + rows[i+1].count}
			}
			merged = append(merged, r)
		}
		rows = merged
	}
	return rows
}

func hasReasoning(st *endpointState) bool { return lastReasoning(st) != nil }

func lastReasoning(st *endpointState) *sample.Sample {
	for i := len(st.samples) - 1; i >= 0; i-- {
		if st.samples[i].ReasoningTokens > 0 {
			return st.samples[i]
		}
	}
	return nil
}

// timeChart is a titled ntcharts time-series line chart, rebuilt from its points only when
// they or its size change (which also prunes points that left the span).
type timeChart struct {
	styles *Styles
	style  lipgloss.Style
	drawn[timeserieslinechart.TimePoint]
	title string
	small *spark  // stands in for the chart when there is no room for axes
	limit float64 // when > 0, the Y axis never goes above it (a percentage: 100)
}

func newTimeChart(st *Styles, style lipgloss.Style) *timeChart {
	return &timeChart{styles: st, style: style}
}

// Set draws title over a w×(h-1) chart of pts (oldest first).
func (c *timeChart) Set(title string, pts []timeserieslinechart.TimePoint, w, h int) {
	if !c.stale(pts, w, h) && title == c.title {
		return
	}
	c.title = title
	head := truncate(title, w)
	ch := h - 1
	if len(pts) == 0 {
		c.view = fit(head+"\n"+c.styles.Muted.Render(dash+" no data yet"), w, h)
		return
	}
	if ch < 4 || w < 16 {
		// Too small for axes: a sparkline of the same points.
		vals := make([]float64, len(pts))
		for i, p := range pts {
			vals[i] = p.Value
		}
		if c.small == nil {
			c.small = newSpark(c.style)
		}
		c.small.Set(vals, w, max(ch, 0))
		c.view = fit(head+"\n"+c.small.View(), w, h)
		return
	}
	lo, hi := pts[0].Time, pts[len(pts)-1].Time
	if hi.Sub(lo) < 10*time.Second {
		hi = lo.Add(10 * time.Second)
	}
	yr := newYRows(pts, ch-2, c.limit)
	chart := timeserieslinechart.New(w, ch,
		timeserieslinechart.WithXLabelFormatter(clockLabel),
		timeserieslinechart.WithYLabelFormatter(yr.label),
		timeserieslinechart.WithXYSteps(2, 1),
		timeserieslinechart.WithStyle(c.style),
		timeserieslinechart.WithAxesStyles(c.styles.ChartAxis, c.styles.ChartLabel),
		timeserieslinechart.WithTimeRange(lo, hi),
		timeserieslinechart.WithYRange(yr.min, yr.max),
	)
	chart.SetViewTimeAndYRange(lo, hi, yr.min, yr.max)
	for _, p := range pts {
		if finite(p.Value) {
			chart.Push(p)
		}
	}
	chart.DrawBraille()
	c.view = fit(head+"\n"+chart.View(), w, h)
}

func (c *timeChart) View() string { return c.view }

// yRows is the Y scale of a time chart whose graph has rows rows above the X axis. ntcharts
// draws row i (1 = just above the axis) with the values [min+(i−1)·inc, min+i·inc) but
// labels it with min+i·inc, the top of that range: a value of 75 sat on the row labelled 100.
// So the range starts half a row below 0 (row i is centred on (i−1)·inc, row 1 on 0), and
// every other row is labelled with the value at its centre, in round steps of 2·inc.
type yRows struct {
	min, max, inc float64
	every         int // rows between labels: 2, or 1 on a chart too short for that
}

// newYRows scales rows to pts; a limit > 0 (a percentage: 100) caps the scale when the
// values stay under it.
func newYRows(pts []timeserieslinechart.TimePoint, rows int, limit float64) yRows {
	peak := 0.0
	for _, p := range pts {
		if finite(p.Value) {
			peak = max(peak, p.Value)
		}
	}
	rows = max(rows, 2)
	// The top row's centre, (rows−1)·inc, reaches 5 % above the peak; the labels, every
	// other row (every row of a short chart), are round numbers.
	top := peak * 1.05
	if limit > 0 && peak <= limit {
		top = min(top, limit)
	}
	every := 2
	if rows < 5 {
		every = 1
	}
	inc := niceCeil(float64(every)*top/float64(rows-1)) / float64(every)
	return yRows{min: -inc / 2, max: -inc/2 + float64(rows)*inc, inc: inc, every: every}
}

// label is the Y axis label of row i (0 is the axis itself): the value at the centre of
// every other row from the first (0, 2·inc, 4·inc, …), nothing elsewhere.
func (y yRows) label(i int, _ float64) string {
	if i < 1 || (i-1)%y.every != 0 {
		return ""
	}
	step := float64(y.every) * y.inc // labels are multiples of it
	decimals := max(0, int(math.Ceil(-math.Log10(step)-1e-9)))
	return strconv.FormatFloat(float64(i-1)*y.inc, 'f', decimals, 64)
}

// clockLabel formats an X axis value (Unix seconds) as a local wall-clock time.
func clockLabel(_ int, v float64) string {
	return time.Unix(int64(v), 0).Format("15:04:05")
}

// niceCeil rounds up to 1, 2 or 5 times a power of ten, for readable axis tops.
func niceCeil(v float64) float64 {
	if v <= 0 || !finite(v) {
		return 1
	}
	p := 1.0
	for p*10 <= v {
		p *= 10
	}
	for p > v {
		p /= 10
	}
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}
