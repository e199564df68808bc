package ui

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"tokscope/feature"
	"tokscope/sample"
	"tokscope/stats"
)

// panel is one endpoint's card on the dashboard: name, status, the requests in flight, decode
// tok/s, and time charts of aggregate tok/s and TTFT over the last seconds with their figures,
// errors. It caches its content and redraws its charts only when the points they show or its
// size change.
type panel struct {
	styles *Styles
	w, h   int // outer size, border included

	tps, ttft *secondsChart
	open      bool   // open-loop run: show the client queue line
	content   string // inner content, exactly (w-4)×(h-2)
	key       panelKey
	framed    [2][nCardMarks]string // bordered content by [selected][mark]
	// forms is the least form index of each shared figure line (sharedLines), set by the
	// dashboard so that the cards of one width word each figure alike.
	forms lineForms
	// chartCap (when not 0) and blanks are set by the dashboard so that the cards of a grid
	// row draw each line on the same row: their charts as tall as the least of them, and a
	// blank for each line above the charts that another card of the row shows and this one
	// does not (rowLayout). Spare rows then stay blank at the card's bottom.
	chartCap int
	blanks   [nLines]bool
}

// cardMark is what a card's border says beyond selection: nothing, an SLO breach in the
// recent window, or an endpoint in error (which wins).
type cardMark int

const (
	markNone cardMark = iota
	markBreach
	markError
	nCardMarks
)

// panelKey is what the content was drawn from; equal keys mean nothing to redraw.
type panelKey struct {
	w, h        int
	snap        uint64
	state       uint64
	status      string
	concurrency int
	paused      bool
	forms       lineForms
	chartCap    int
	blanks      [nLines]bool
}

func newPanel(st *Styles) *panel {
	return &panel{styles: st, tps: newSecondsChart(st.SparkDecode), ttft: newSecondsChart(st.SparkTTFT)}
}

// SetSize sets the outer size (border included).
func (p *panel) SetSize(w, h int) { p.w, p.h = w, h }

// Update redraws the content if the statistics (snapshot version snapVer), the endpoint's
// state or the size changed.
func (p *panel) Update(es *stats.EndpointStats, st *endpointState, snapVersion uint64, now time.Time) {
	status, _ := st.status(now)
	k := panelKey{p.w, p.h, snapVersion, st.version, status, st.concurrency, st.paused, p.forms, p.chartCap, p.blanks}
	if k == p.key && p.content != "" {
		return
	}
	p.key = k
	p.framed = [2][nCardMarks]string{}
	p.content = p.draw(es, st, now)
}

// View is the card, border included, exactly w×h.
func (p *panel) View(selected bool, mark cardMark) string {
	si := b2i(selected)
	if p.framed[si][mark] == "" {
		style := p.styles.Card
		switch {
		case selected && mark == markError:
			style = p.styles.CardErrorSelected
		case selected && mark == markBreach:
			style = p.styles.CardBreachSelected
		case selected:
			style = p.styles.CardSelected
		case mark == markError:
			style = p.styles.CardError
		case mark == markBreach:
			style = p.styles.CardBreach
		}
		p.framed[si][mark] = style.Render(p.content)
	}
	return p.framed[si][mark]
}

// markOf is what endpoint es's card border says.
func markOf(es *stats.EndpointStats, st *endpointState) cardMark {
	switch {
	case st.inError():
		return markError
	case feature.Breached(es):
		return markBreach
	}
	return markNone
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// card line identifiers, in display order.
const (
	lineTitle = iota
	lineTLS   // "⚠ TLS unverified": shown whenever the card has a spare row
	lineModel // the model and the concurrency
	lineLive  // the requests in flight: progress and decode rate so far
	lineDecode
	lineTPS // aggregate tok/s, over the chart below
	lineTPSChart
	lineTTFT // over the chart below
	lineTTFTChart
	lineAxis    // the charts' time axis
	lineQueue   // open-loop runs only
	lineSLO     // with objectives (--slo, slo:)
	lineServer  // once the server-metrics scraper reported
	lineGPU     // with --gpu-metrics (cardlines.go)
	lineSrvTime // once a response carried the server's own clock (cardlines.go)
	lineTurns   // the cache-hit rate and first/later turns (turns.go), when there are figures
	lineErrors
	lineLastError
	nLines
)

// cardFeature is a feature's line on a card: whether the card has it (the fact cardPriority
// places it by) and how it reads. Each feature's entry lives beside its drawing.
type cardFeature struct {
	line int
	fact func(f *cardFacts) *bool
	has  func(p *panel, es *stats.EndpointStats) bool
	draw func(p *panel, es *stats.EndpointStats, w int) string
}

// cardFeatures are the card lines beside the essentials: the client queue's, and the
// features' (featureCards: the SLO, the server's scrapes, the GPUs, the server's own clock,
// turns and cache hits).
func cardFeatures() []cardFeature { return cardLines }

// cardLines are cardFeatures, built once: every card line of every frame walks them.
var cardLines = append([]cardFeature{queueCard()}, featureCards()...)

// queueCard is an open-loop run's queue line (queueLine).
func queueCard() cardFeature {
	return cardFeature{
		line: lineQueue,
		fact: func(f *cardFacts) *bool { return &f.openLoop },
		has:  func(p *panel, _ *stats.EndpointStats) bool { return p.open },
		draw: func(p *panel, es *stats.EndpointStats, w int) string { return queueLine(p.styles, es, w) },
	}
}

// cardEssentials are the lines every card shows: its name and the two charts with the lines
// that say what they are.
var cardEssentials = []int{lineTitle, lineTPS, lineTPSChart, lineTTFT, lineTTFTChart}

// draw is the card's content: the lines that fit, in display order, exactly (w-4)×(h-2).
func (p *panel) draw(es *stats.EndpointStats, st *endpointState, now time.Time) string {
	w, h := p.w-4, p.h-2
	if w <= 0 || h <= 0 {
		return ""
	}
	rows := p.rows(es, st)
	if p.chartCap > 0 {
		rows.chartH = min(rows.chartH, p.chartCap)
	}
	secs := chartSeconds(es.Seconds, w)
	p.tps.Set(tpsPoints(secs), w, rows.chartH)
	p.ttft.Set(ttftPoints(secs), w, rows.chartH)

	lines := make([]string, 0, h)
	for l := range nLines {
		switch {
		case rows.show[l]:
			lines = append(lines, p.line(l, es, st, now, w, rows.tlsInTitle, len(secs)))
		case p.blanks[l]:
			lines = append(lines, "")
		}
	}
	return fit(strings.Join(lines, "\n"), w, h)
}

// rows is which of the card's lines show and its charts' own height, before any cap.
func (p *panel) rows(es *stats.EndpointStats, st *endpointState) cardRows {
	facts := cardFacts{
		tls: st.tlsUnverified, errors: es.Errors > 0, lastError: es.LastError != nil,
		breach: feature.Breached(es), // the SLO's recent window (feature.Card.Breach)
	}
	for _, c := range cardFeatures() {
		*c.fact(&facts) = c.has(p, es)
	}
	return chooseCardRows(p.h-2, facts)
}

// cardRows is which of a card's lines show, and how tall its charts are.
type cardRows struct {
	show       [nLines]bool
	tlsInTitle bool // no spare row for the TLS line: the marker joins the status on the title line
	chartH     int
	spare      int // rows left for the charts beyond one each
}

// cardFacts are what decides which of a card's lines may show.
type cardFacts struct {
	tls, errors, lastError, openLoop bool
	slo, breach, server              bool // objectives set, breached in the recent window; a scrape reported
	gpu                              bool // a GPU exporter reported
	srvTime                          bool // a response carried the server's own clock
	turns                            bool // a cache-hit rate or figures by turn (turns.go)
}

// cardPriority is the order in which a card's optional lines get its spare rows, given the
// facts: errors first once there are some (an SLO breach before them); the requests in
// flight, decode tok/s and the time axis; the queue in an open-loop run; the errors line; the
// SLO, then the server; the model; the last error only if there is one. A new optional line is a constant
// above and a place in this list; a feature's line is also an entry of cardFeatures.
func cardPriority(f cardFacts) []int {
	priority := []int{lineLive, lineDecode, lineAxis, lineErrors, lineModel, lineLastError}
	// The SLO and server lines go after the errors line: "errors 0" is the card's word on
	// health, worth more than either when rows are short (80×24). An open-loop run's queue
	// (with its dropped arrivals) is that run's health, and goes before it.
	after := lineErrors
	if f.errors {
		priority = []int{lineErrors, lineLive, lineDecode, lineAxis, lineLastError, lineModel}
		after = lineAxis
	}
	if f.openLoop {
		priority = slices.Insert(priority, slices.Index(priority, lineAxis)+1, lineQueue)
	}
	if f.server {
		priority = slices.Insert(priority, slices.Index(priority, after)+1, lineServer)
	}
	if f.gpu { // after the server's line, or where it would be
		at := slices.Index(priority, after) + 1
		if f.server {
			at = slices.Index(priority, lineServer) + 1
		}
		priority = slices.Insert(priority, at, lineGPU)
	}
	if f.srvTime { // after the scraper's line: the server's own word on each request
		priority = slices.Insert(priority, slices.Index(priority, after)+1+b2i(f.server), lineSrvTime)
	}
	switch {
	case f.breach:
		priority = slices.Insert(priority, 0, lineSLO)
	case f.slo:
		priority = slices.Insert(priority, slices.Index(priority, after)+1, lineSLO)
	}
	if f.turns { // after the model: a card short of rows keeps its health lines first
		priority = slices.Insert(priority, slices.Index(priority, lineModel)+1, lineTurns)
	}
	if !f.lastError {
		priority = slices.DeleteFunc(priority, func(l int) bool { return l == lineLastError })
	}
	return priority
}

// chooseCardRows fits a card's lines into h rows: the essentials, the TLS marker, then the
// optional lines by cardPriority. Spare rows make the charts taller, up to a third of the
// card each.
func chooseCardRows(h int, f cardFacts) cardRows {
	r := cardRows{}
	for _, l := range cardEssentials {
		r.show[l] = true
	}
	room := h - len(cardEssentials)
	if f.tls {
		if room > 0 {
			r.show[lineTLS] = true
			room--
		} else {
			r.tlsInTitle = true
		}
	}
	for _, l := range cardPriority(f) {
		if room <= 0 {
			break
		}
		r.show[l] = true
		room--
	}
	r.spare = room
	r.chartH = chartHeight(h, room)
	return r
}

// chartHeight is each chart's height in a card of h rows with room spare rows: half of them
// each, up to a third of the card.
func chartHeight(h, room int) int { return 1 + min(max(room, 0)/2, max(0, h/3-1)) }

// upperLines are a card's optional lines above its charts, which the cards of a grid row
// align (rowLayout).
var upperLines = []int{lineTLS, lineModel, lineLive, lineDecode}

// rowLayout is, for cards whose own rows are rs, the lines each must leave blank and the
// charts' height they share: every upper line any of them shows has its row in all, and the
// charts are as tall as the shortest that room leaves. When a card has no spare row for its
// blanks, aligning would cost it a line: no blanks then, and chartH 0 (each card its own).
func rowLayout(h int, rs []cardRows) (blanks [][nLines]bool, chartH int) {
	blanks = make([][nLines]bool, len(rs))
	for _, l := range upperLines {
		any := false
		for _, r := range rs {
			any = any || r.show[l]
		}
		for i, r := range rs {
			blanks[i][l] = any && !r.show[l]
		}
	}
	for i, r := range rs {
		n := 0
		for _, b := range blanks[i] {
			n += b2i(b)
		}
		if n > r.spare {
			return make([][nLines]bool, len(rs)), 0
		}
		if c := chartHeight(h, r.spare-n); i == 0 || c < chartH {
			chartH = c
		}
	}
	return blanks, chartH
}

// line draws card line l in width w; n is how many seconds the charts show.
func (p *panel) line(l int, es *stats.EndpointStats, st *endpointState, now time.Time, w int, tlsInTitle bool, n int) string {
	s := p.styles
	switch l {
	case lineTitle:
		status, kind := st.status(now)
		right := statusStyle(s, kind).Render(status)
		if tlsInTitle {
			right = s.Warn.Render("⚠ TLS") + " " + right
		}
		return spread(s.Title.Render(es.Name), right, w)
	case lineTLS:
		return figureFit(w, s.Warn.Render("⚠ TLS unverified (insecure_skip_verify)"), s.Warn.Render("⚠ TLS unverified"))
	case lineModel:
		model := es.Model
		if model == es.Name { // the title says it already
			model = ""
		}
		return modelLine(s, model, apiTag(es.API), cacheLabel(es), st.concurrency, w)
	case lineLive:
		return liveLine(s, es, &st.warmup, st.drawnWarmupLive, st.drawnInflight, w)
	case lineDecode, lineTPS, lineTTFT:
		return p.sharedLine(l, es, w)
	case lineTPSChart:
		return p.tps.View()
	case lineTTFTChart:
		return p.ttft.View()
	case lineAxis:
		return s.Faint.Render(timeAxis(n, w))
	case lineErrors:
		return errorsLine(s, es, w)
	case lineLastError:
		if st.reason != "" { // backing off after identical permanent errors: say why
			return truncate(s.Bad.Render(oneLine(st.reason)), w)
		}
		e := es.LastError
		// The kind says the status: "http_429: 429 Too Many Requests: Rate limit reached (…)"
		// becomes "http_429: Rate limit reached (…)", then loses its parentheses, where the
		// whole does not fit; the detail view lists recent errors whole.
		msg := oneLine(e.Message)
		bare := statusPrefix.ReplaceAllString(msg, "")
		head, _, _ := strings.Cut(bare, " (") // "Rate limit reached (simulated) (code …)"
		return figureFit(w, s.Bad.Render(e.Kind+": "+msg), s.Bad.Render(e.Kind+": "+bare), s.Bad.Render(e.Kind+": "+head))
	}
	for _, c := range cardFeatures() {
		if c.line == l {
			return c.draw(p, es, w)
		}
	}
	return ""
}

// sharedLine draws shared line l in the form every card of its width draws (sharedLines).
func (p *panel) sharedLine(l int, es *stats.EndpointStats, w int) string {
	return fitFrom(w, p.forms[l], figureForms(l, p.styles, es))
}

// statusPrefix is the "429 Too Many Requests: " an HTTP error's message starts with.
var statusPrefix = regexp.MustCompile(`^\d{3} [^:]{0,40}: `)

func statusStyle(s *Styles, kind sample.State) lipgloss.Style {
	switch kind {
	case sample.StateStreaming:
		return s.StatusStreaming
	case sample.StatePaused:
		return s.StatusPaused
	case sample.StateBackoff:
		return s.StatusBackoff
	case sample.StateError:
		return s.StatusError
	case sample.StateStopped:
		return s.StatusStopped
	}
	return s.StatusIdle
}

func errorsLine(s *Styles, es *stats.EndpointStats, w int) string {
	if es.Errors == 0 {
		line := s.Muted.Render("errors 0")
		if es.Truncated > 0 {
			line += s.Warn.Render(" · truncated " + itoa(es.Truncated))
		}
		return truncate(line, w)
	}
	trunc := ""
	if es.Truncated > 0 {
		trunc = s.Warn.Render(" · truncated " + itoa(es.Truncated))
	}
	// Whole kinds, the most frequent first; those that do not fit are counted, not cut:
	// "errors 9 http_429×7 http_500×1 +2 more".
	kinds := errorKinds(es.ErrorKinds)
	head := s.Bad.Render("errors " + itoa(es.Errors))
	candidates := []string{head + " " + s.Muted.Render(strings.Join(kinds, " ")) + trunc}
	for k := len(kinds) - 1; k >= 0; k-- {
		candidates = append(candidates, head+" "+s.Muted.Render(strings.Join(append(kinds[:k:k], "+"+itoa(len(kinds)-k)+" more"), " "))+trunc)
	}
	return figureFit(w, candidates...)
}

// queueLine is a card's "queue p50 3.2 p99 41 ms · wait 3 · drop 2", shortened until it
// fits w: the client queue (arrival to t0, never part of TTFT; arrivals still waiting count
// with their wait so far), the arrivals waiting now (when some are) and those dropped on a
// full queue.
func queueLine(s *Styles, es *stats.EndpointStats, w int) string {
	q50, q99, unit := queueFigures(es.Queue)
	drop := itoa(int(es.DroppedArrivals))
	dropStyle := s.Muted
	if es.DroppedArrivals > 0 {
		dropStyle = s.Warn
	}
	// Arrivals waiting right now: said only when there are some (a queue building up).
	waitLong, waitShort, waitTiny := "", "", ""
	var waitStyled, waitStyledShort, waitStyledTiny string
	if es.Waiting > 0 {
		wait := itoa(es.Waiting)
		waitLong, waitShort, waitTiny = " · wait "+wait, " wait "+wait, " w"+wait
		waitStyled = s.Faint.Render(" · ") + s.Warn.Render("wait "+wait)
		waitStyledShort, waitStyledTiny = " "+s.Warn.Render("wait "+wait), " "+s.Warn.Render("w"+wait)
	}
	L, V, sep := s.Label.Render, s.Value.Render, s.Faint.Render(" · ")
	candidates := []struct{ plain, styled string }{
		{"queue p50 " + q50 + " p99 " + q99 + " " + unit + waitLong + " · drop " + drop,
			L("queue") + " " + L("p50") + " " + V(q50) + " " + L("p99") + " " + V(q99) + " " + s.Unit.Render(unit) + waitStyled + sep + dropStyle.Render("drop "+drop)},
		{"q p50 " + q50 + " p99 " + q99 + " " + unit + waitShort + " drop " + drop,
			L("q") + " " + L("p50") + " " + V(q50) + " " + L("p99") + " " + V(q99) + " " + s.Unit.Render(unit) + waitStyledShort + " " + dropStyle.Render("drop "+drop)},
		{"q " + q50 + "/" + q99 + unit + waitTiny + " d" + drop,
			L("q") + " " + V(q50+"/"+q99) + s.Unit.Render(unit) + waitStyledTiny + " " + dropStyle.Render("d"+drop)},
	}
	for _, c := range candidates {
		if len([]rune(c.plain)) <= w {
			return c.styled
		}
	}
	return truncate(strings.TrimSpace(candidates[len(candidates)-1].styled), w)
}

// queueFigures are the client queue's p50 and p99 in one unit, the one the larger needs:
// ms below ten seconds, else seconds — never a figure in seconds followed by "ms".
func queueFigures(d stats.Dist) (p50Text, p99Text, unit string) {
	if d.Count == 0 {
		return dash, dash, "ms"
	}
	if d.P99 < 10000 {
		return ms(d.P50), ms(d.P99), "ms"
	}
	sec := func(v float64) string { return strconv.FormatFloat(v/1000, 'f', 1, 64) }
	return sec(d.P50), sec(d.P99), "s"
}
