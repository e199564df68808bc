package ui

import (
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"tokscope/probe"
	"tokscope/stats"
)

// panel is one endpoint's card on the dashboard: name, status, sparklines of decode tok/s
// and TTFT, figures, errors. It caches its content and redraws sparklines only when the
// points they show or its size change.
type panel struct {
	styles *Styles
	w, h   int // outer size, border included

	decode, ttft *spark
	open         bool   // open-loop run: show the client queue line
	content      string // inner content, exactly (w-4)×(h-2)
	key          panelKey
	framed       [2][nCardMarks]string // bordered content by [selected][mark]
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
}

func newPanel(st *Styles) *panel {
	return &panel{styles: st, decode: newSpark(st.SparkDecode), ttft: newSpark(st.SparkTTFT)}
}

// SetSize sets the outer size (border included).
func (p *panel) SetSize(w, h int) { p.w, p.h = w, h }

// Update redraws the content if the statistics (snapshot version snapVer), the endpoint's
// state or the size changed.
func (p *panel) Update(es *stats.EndpointStats, st *endpointState, snapVer uint64, now time.Time) {
	status, _ := st.status(now)
	k := panelKey{p.w, p.h, snapVer, st.version, status, st.concurrency, st.paused}
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
	case es.SLO != nil && es.SLO.Breach:
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
	lineModel
	lineDecode
	lineDecodeSpark
	lineTTFT
	lineTTFTSpark
	lineTotals
	lineQueue  // open-loop runs only
	lineSLO    // with objectives (--slo, slo:)
	lineServer // once the server-metrics scraper reported
	lineErrors
	lineLastError
	nLines
)

// draw is the card's content: the lines that fit, in display order, exactly (w-4)×(h-2).
func (p *panel) draw(es *stats.EndpointStats, st *endpointState, now time.Time) string {
	w, h := p.w-4, p.h-2
	if w <= 0 || h <= 0 {
		return ""
	}
	rows := chooseCardRows(h, cardFacts{
		tls: st.tlsUnverified, errors: es.Errors > 0, lastError: es.LastError != nil, openLoop: p.open,
		slo: es.SLO != nil, breach: es.SLO != nil && es.SLO.Breach, server: es.Server != nil,
	})
	decodeVals, ttftVals := sparkValues(es.History, w)
	p.decode.Set(decodeVals, w, rows.sparkH)
	p.ttft.Set(ttftVals, w, rows.sparkH)

	lines := make([]string, 0, h)
	for l := range nLines {
		if rows.show[l] {
			lines = append(lines, p.line(l, es, st, now, w, rows.tlsInTitle))
		}
	}
	return fit(strings.Join(lines, "\n"), w, h)
}

// cardRows is which of a card's lines show, and how tall its sparklines are.
type cardRows struct {
	show       [nLines]bool
	tlsInTitle bool // no spare row for the TLS line: the marker joins the status on the title line
	sparkH     int
}

// cardFacts are what decides which of a card's lines may show.
type cardFacts struct {
	tls, errors, lastError, openLoop bool
	slo, breach, server              bool // objectives set, breached in the recent window; a scrape reported
}

// chooseCardRows fits a card's lines into h rows: the five essentials, the TLS marker, then
// by priority (errors first once there are some, an SLO breach before them; the queue after
// the totals in an open-loop run; the SLO, then the server, next; the last error only if
// there is one). Spare rows make the sparklines taller, up to a third of the card each.
func chooseCardRows(h int, f cardFacts) cardRows {
	r := cardRows{}
	r.show[lineTitle], r.show[lineDecode], r.show[lineDecodeSpark] = true, true, true
	r.show[lineTTFT], r.show[lineTTFTSpark] = true, true
	room := h - 5
	if f.tls {
		if room > 0 {
			r.show[lineTLS] = true
			room--
		} else {
			r.tlsInTitle = true
		}
	}
	priority := []int{lineTotals, lineErrors, lineModel, lineLastError}
	if f.errors {
		priority = []int{lineErrors, lineTotals, lineLastError, lineModel}
	}
	if f.openLoop {
		priority = slices.Insert(priority, slices.Index(priority, lineTotals)+1, lineQueue)
	}
	if f.server {
		priority = slices.Insert(priority, 1, lineServer)
	}
	switch {
	case f.breach:
		priority = slices.Insert(priority, 0, lineSLO)
	case f.slo:
		priority = slices.Insert(priority, 1, lineSLO)
	}
	for _, l := range priority {
		if room == 0 {
			break
		}
		if l == lineLastError && !f.lastError {
			continue
		}
		r.show[l] = true
		room--
	}
	r.sparkH = 1 + min(room/2, max(0, h/3-1))
	return r
}

// sparkValues are the sparklines' values from the newest w points of hist: decode tok/s (0
// where the decode rate is undefined) and TTFT.
func sparkValues(hist []stats.Point, w int) (decode, ttft []float64) {
	if len(hist) > w {
		hist = hist[len(hist)-w:]
	}
	for _, pt := range hist {
		if pt.DecodeOK {
			decode = append(decode, pt.DecodeTPS)
		} else {
			decode = append(decode, 0)
		}
		ttft = append(ttft, pt.TTFT)
	}
	return decode, ttft
}

// line draws card line l in width w.
func (p *panel) line(l int, es *stats.EndpointStats, st *endpointState, now time.Time, w int, tlsInTitle bool) string {
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
		return truncate(s.Warn.Render("⚠ TLS unverified (insecure_skip_verify)"), w)
	case lineModel:
		right := "c" + itoa(st.concurrency)
		if st.inflight > 0 {
			right += " · " + itoa(st.inflight) + " live"
		}
		if c := cacheLabel(es); c != "" {
			right = c + " · " + right
		}
		return spread(s.Muted.Render(es.Model), s.Muted.Render(right), w)
	case lineDecode:
		cur, ok := lastDecode(es.History)
		return figureLine(s, w, "decode", "dec", approx(es.TokenSource), cur, ok, "tok/s", es.Recent.DecodeTPS, num)
	case lineDecodeSpark:
		return p.decode.View()
	case lineTTFT:
		cur, ok := lastTTFT(es.History)
		return figureLine(s, w, "ttft", "ttft", "", cur, ok, "ms", es.Recent.TTFT, ms)
	case lineTTFTSpark:
		return p.ttft.View()
	case lineTotals:
		return totalsLine(s, es, w)
	case lineQueue:
		return queueLine(s, es, w)
	case lineSLO:
		return sloLine(s, es.SLO, w)
	case lineServer:
		return serverLine(s, es.Server, w)
	case lineErrors:
		return errorsLine(s, es, w)
	case lineLastError:
		e := es.LastError
		return truncate(s.Bad.Render(oneLine(e.Kind+": "+e.Message)), w)
	}
	return ""
}

func statusStyle(s *Styles, kind probe.State) lipgloss.Style {
	switch kind {
	case probe.StateStreaming:
		return s.StatusStreaming
	case probe.StatePaused:
		return s.StatusPaused
	case probe.StateBackoff:
		return s.StatusBackoff
	case probe.StateError:
		return s.StatusError
	case probe.StateStopped:
		return s.StatusStopped
	}
	return s.StatusIdle
}

func lastDecode(h []stats.Point) (float64, bool) {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].DecodeOK {
			return h[i].DecodeTPS, true
		}
	}
	return 0, false
}

func lastTTFT(h []stats.Point) (float64, bool) {
	if len(h) == 0 {
		return 0, false
	}
	return h[len(h)-1].TTFT, true
}

// figureLine is "decode 123 tok/s  p50 120  p95 140", shortened until it fits w.
func figureLine(s *Styles, w int, label, short, mark string, cur float64, ok bool, unit string, d stats.Dist, f func(float64) string) string {
	curText := dash
	if ok {
		curText = mark + f(cur)
	}
	q50 := pick(d, p50, f)
	q95 := pick(d, p95, f)
	if d.Count > 0 {
		q50, q95 = mark+q50, mark+q95
	}
	L, V, U := s.Label.Render, s.Value.Render, s.Unit.Render
	candidates := []struct{ plain, styled string }{
		{label + " " + curText + " " + unit + "  p50 " + q50 + "  p95 " + q95,
			L(label) + " " + V(curText) + " " + U(unit) + "  " + L("p50") + " " + q50 + "  " + L("p95") + " " + q95},
		{label + " " + curText + "  p50 " + q50 + "  p95 " + q95,
			L(label) + " " + V(curText) + "  " + L("p50") + " " + q50 + "  " + L("p95") + " " + q95},
		{short + " " + curText + " p50 " + q50 + " p95 " + q95,
			L(short) + " " + V(curText) + " " + L("p50") + " " + q50 + " " + L("p95") + " " + q95},
	}
	for _, c := range candidates {
		if len([]rune(c.plain)) <= w {
			return c.styled
		}
	}
	return truncate(candidates[len(candidates)-1].styled, w)
}

func totalsLine(s *Styles, es *stats.EndpointStats, w int) string {
	agg := approx(es.TokenSource) + num(es.AggregateTPS)
	src := sourceLabel(es.TokenSource)
	long := s.Label.Render("agg ") + s.Value.Render(agg) + s.Unit.Render(" tok/s") +
		s.Faint.Render(" · ") + s.Value.Render(itoa(es.Requests)) + s.Label.Render(" req") +
		s.Faint.Render(" · ") + s.Label.Render("tok ") + src
	if len([]rune("agg "+agg+" tok/s · "+itoa(es.Requests)+" req · tok "+src)) <= w {
		return long
	}
	return truncate(s.Label.Render("agg ")+s.Value.Render(agg)+" "+itoa(es.Requests)+s.Label.Render("req ")+src, w)
}

func errorsLine(s *Styles, es *stats.EndpointStats, w int) string {
	if es.Errors == 0 {
		line := s.Muted.Render("errors 0")
		if es.Truncated > 0 {
			line += s.Warn.Render(" · truncated " + itoa(es.Truncated))
		}
		return truncate(line, w)
	}
	line := s.Bad.Render("errors "+itoa(es.Errors)) + " " + s.Muted.Render(errorKinds(es.ErrorKinds))
	if es.Truncated > 0 {
		line += s.Warn.Render(" · truncated " + itoa(es.Truncated))
	}
	return truncate(line, w)
}

// queueLine is a card's "queue p50 3.2 p99 41 ms · drop 2", shortened until it fits w: the
// client queue (arrival to t0, never part of TTFT) and the arrivals dropped on a full queue.
func queueLine(s *Styles, es *stats.EndpointStats, w int) string {
	q50, q99 := pick(es.Queue, p50, ms), pick(es.Queue, p99, ms)
	drop := itoa(int(es.DroppedArrivals))
	dropStyle := s.Muted
	if es.DroppedArrivals > 0 {
		dropStyle = s.Warn
	}
	L, V := s.Label.Render, s.Value.Render
	candidates := []struct{ plain, styled string }{
		{"queue p50 " + q50 + " p99 " + q99 + " ms · drop " + drop,
			L("queue") + " " + L("p50") + " " + V(q50) + " " + L("p99") + " " + V(q99) + " " + s.Unit.Render("ms") + s.Faint.Render(" · ") + dropStyle.Render("drop "+drop)},
		{"q p50 " + q50 + " p99 " + q99 + " drop " + drop,
			L("q") + " " + L("p50") + " " + V(q50) + " " + L("p99") + " " + V(q99) + " " + dropStyle.Render("drop "+drop)},
	}
	for _, c := range candidates {
		if len([]rune(c.plain)) <= w {
			return c.styled
		}
	}
	return truncate(strings.TrimSpace(candidates[len(candidates)-1].styled), w)
}
