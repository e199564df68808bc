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
	open         bool   // open-loop run: show the client queue line (load.go)
	content      string // inner content, exactly (w-4)×(h-2)
	key          panelKey
	framed       [2][2]string // bordered content by [selected][inError]
}

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
	p.framed = [2][2]string{}
	p.content = p.draw(es, st, now)
}

// View is the card, border included, exactly w×h.
func (p *panel) View(selected, inError bool) string {
	si, ei := b2i(selected), b2i(inError)
	if p.framed[si][ei] == "" {
		style := p.styles.Card
		switch {
		case selected && inError:
			style = p.styles.CardErrorSelected
		case selected:
			style = p.styles.CardSelected
		case inError:
			style = p.styles.CardError
		}
		p.framed[si][ei] = style.Render(p.content)
	}
	return p.framed[si][ei]
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
	lineQueue // open-loop runs only
	lineErrors
	lineLastError
	nLines
)

func (p *panel) draw(es *stats.EndpointStats, st *endpointState, now time.Time) string {
	s := p.styles
	w, h := p.w-4, p.h-2
	if w <= 0 || h <= 0 {
		return ""
	}

	// Which lines fit: the five essentials, then by priority.
	show := [nLines]bool{lineTitle: true, lineDecode: true, lineDecodeSpark: true, lineTTFT: true, lineTTFTSpark: true}
	room := h - 5
	tlsInTitle := false // no spare row: the marker joins the status on the title line
	if st.tlsUnverified {
		if room > 0 {
			show[lineTLS] = true
			room--
		} else {
			tlsInTitle = true
		}
	}
	priority := []int{lineTotals, lineErrors, lineModel, lineLastError}
	if es.Errors > 0 {
		priority = []int{lineErrors, lineTotals, lineLastError, lineModel}
	}
	if p.open {
		priority = slices.Insert(priority, slices.Index(priority, lineTotals)+1, lineQueue)
	}
	for _, l := range priority {
		if room == 0 {
			break
		}
		if l == lineLastError && es.LastError == nil {
			continue
		}
		show[l] = true
		room--
	}
	// Spare rows make the sparklines taller, up to a third of the card each.
	sparkH := 1 + min(room/2, max(0, h/3-1))

	var decodeVals, ttftVals []float64
	hist := es.History
	if len(hist) > w {
		hist = hist[len(hist)-w:]
	}
	for _, pt := range hist {
		if pt.DecodeOK {
			decodeVals = append(decodeVals, pt.DecodeTPS)
		} else {
			decodeVals = append(decodeVals, 0)
		}
		ttftVals = append(ttftVals, pt.TTFT)
	}
	p.decode.Set(decodeVals, w, sparkH)
	p.ttft.Set(ttftVals, w, sparkH)

	lines := make([]string, 0, h)
	for l := 0; l < nLines; l++ {
		if !show[l] {
			continue
		}
		switch l {
		case lineTitle:
			status, kind := st.status(now)
			right := statusStyle(s, kind).Render(status)
			if tlsInTitle {
				right = s.Warn.Render("⚠ TLS") + " " + right
			}
			lines = append(lines, spread(s.Title.Render(es.Name), right, w))
		case lineTLS:
			lines = append(lines, truncate(s.Warn.Render("⚠ TLS unverified (insecure_skip_verify)"), w))
		case lineModel:
			right := "c" + itoa(st.concurrency)
			if st.inflight > 0 {
				right += " · " + itoa(st.inflight) + " live"
			}
			lines = append(lines, spread(s.Muted.Render(es.Model), s.Muted.Render(right), w))
		case lineDecode:
			cur, ok := lastDecode(es.History)
			lines = append(lines, figureLine(s, w, "decode", "dec", approx(es.TokenSource), cur, ok, "tok/s", es.Recent.DecodeTPS, num))
		case lineDecodeSpark:
			lines = append(lines, p.decode.View())
		case lineTTFT:
			cur, ok := lastTTFT(es.History)
			lines = append(lines, figureLine(s, w, "ttft", "ttft", "", cur, ok, "ms", es.Recent.TTFT, ms))
		case lineTTFTSpark:
			lines = append(lines, p.ttft.View())
		case lineTotals:
			lines = append(lines, totalsLine(s, es, w))
		case lineQueue:
			lines = append(lines, queueLine(s, es, w))
		case lineErrors:
			lines = append(lines, errorsLine(s, es, w))
		case lineLastError:
			e := es.LastError
			lines = append(lines, truncate(s.Bad.Render(oneLine(e.Kind+": "+e.Message)), w))
		}
	}
	return fit(strings.Join(lines, "\n"), w, h)
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
