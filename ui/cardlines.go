package ui

import (
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"tokscope/metric"
	"tokscope/sample"
	"tokscope/stats"
)

// The figure lines of a card. Every figure says what it is where it stands — "last", "live",
// "p50" with its window — and each line has shorter forms for narrow cards that drop a
// figure before they drop a label or a unit: tok/s and ms stay at 80 columns.

// span is a piece of a figure line in its style. A line's candidates are measured as plain
// text and only the chosen one is styled: styling every candidate was most of a card's cost.
type span struct {
	style *lipgloss.Style
	text  string
}

// spans builds the pieces of one style.
type spans func(text string) span

func styled(st *lipgloss.Style) spans { return func(t string) span { return span{st, t} } }

// line joins spans and runs of spans into one candidate.
func line(parts ...any) []span {
	var out []span
	for _, p := range parts {
		switch p := p.(type) {
		case span:
			out = append(out, p)
		case []span:
			out = append(out, p...)
		}
	}
	return out
}

// fitSpans draws the first candidate whose text fits w, else the last one cut to w.
func fitSpans(w int, cands ...[]span) string { return fitFrom(w, 0, cands) }

// fitFrom draws the first candidate from index from on whose text fits w, else the last one
// cut to w.
func fitFrom(w, from int, cands [][]span) string {
	pick := cands[len(cands)-1]
	for _, c := range cands[min(from, len(cands)-1):] {
		if spansWidth(c) <= w {
			pick = c
			break
		}
	}
	var b strings.Builder
	for _, sp := range pick {
		b.WriteString(sp.style.Render(sp.text))
	}
	return truncate(b.String(), w)
}

// formIndex is the index of the first candidate whose text fits w (the last when none does).
func formIndex(w int, cands [][]span) int {
	for i, c := range cands {
		if spansWidth(c) <= w {
			return i
		}
	}
	return len(cands) - 1
}

func spansWidth(c []span) int {
	n := 0
	for _, sp := range c {
		n += ansi.StringWidth(sp.text)
	}
	return n
}

// sharedLines are the figure lines whose wording all the cards of one width in a frame
// share: each card's line takes the shortest form that any of them needs (sharedForms), so
// two cards side by side never word the same figure two ways because one value has a digit
// more.
var sharedLines = [...]int{lineDecode, lineTPS, lineTTFT, lineSrvTime}

// figureForms are the candidate forms of shared line l of endpoint es, longest first.
func figureForms(l int, s *Styles, es *stats.EndpointStats) [][]span {
	switch l {
	case lineDecode:
		return decodeForms(s, es)
	case lineTPS:
		return tpsForms(s, es)
	case lineTTFT:
		return ttftForms(s, es)
	case lineSrvTime:
		return srvTimeForms(s, es)
	}
	return nil
}

// lineForms is, by card line, the index of the form a card draws at the least.
type lineForms [nLines]int

// cardMs formats milliseconds for a line whose unit is ms: whole ms from 10 on, however
// large (ms() would switch to seconds and contradict the unit).
func cardMs(v float64) string {
	switch {
	case !finite(v):
		return dash
	case v >= 10:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// streamsText is "1 stream" or "4 streams".
func streamsText(n int) string {
	if n == 1 {
		return "1 stream"
	}
	return itoa(n) + " streams"
}

// modelLine is the model and its API when not chat, the cache mode (cacheLabel, when there is
// one) and the concurrency:
// "llama-3.1-8b-instruct · anthropic    cache bust · 2 streams". The right side shortens
// ("bust · 2 streams", "bust · c2", then "c2" alone: the cache mode is also in the detail
// view and the compare table) before the model is cut: the model is what the line names.
// An empty model (the card's name is the model) leaves the API, if any, on the left.
func modelLine(s *Styles, model, api, cache string, concurrency, w int) string {
	if model == "" {
		model, api = strings.TrimPrefix(api, " · "), ""
	}
	rights := []string{streamsText(concurrency), "c" + itoa(concurrency)}
	if cache != "" {
		rights = []string{"cache " + cache + " · " + rights[0], cache + " · " + rights[0], cache + " · " + rights[1], rights[1]}
	}
	right := rights[len(rights)-1]
	for _, r := range rights {
		if ansi.StringWidth(model)+ansi.StringWidth(api)+1+ansi.StringWidth(r) <= w {
			right = r
			break
		}
	}
	// The API (apiTag: " · anthropic", "" for chat) stays whole; a long model name gives way.
	if tw := ansi.StringWidth(api); api != "" && w-ansi.StringWidth(right)-1-tw >= 8 {
		model = truncate(model, w-ansi.StringWidth(right)-1-tw) + api
	} else {
		model += api
	}
	return spread(s.Muted.Render(model), s.Muted.Render(right), w)
}

// liveLine is the counted requests in flight that have a first token: how many, their
// tokens so far of max_tokens and the median of their decode rates so far,
// "1 in flight · ≈45/160 tok · ≈141 tok/s"; before any, a warm-up in flight (warmupLive),
// so labelled; with none, the newest finished decode rate (before a counted one, a finished
// warm-up's, so labelled), and how many of the started requests (in flight at the same
// snapshot as the card's status word) have no token yet.
func liveLine(s *Styles, es *stats.EndpointStats, warmup *sample.Progress, warmupLive bool, started, w int) string {
	L, V, U, F, M := styled(&s.Label), styled(&s.Value), styled(&s.Unit), styled(&s.Faint), styled(&s.Muted)
	in := es.InFlight
	if in.Requests == 0 && warmupLive && warmup.Chunks > 0 && !es.Latest.DecodeOK {
		in = stats.InFlight{Requests: 1, TokensMin: warmup.Tokens, TokensMax: warmup.Tokens,
			MaxTokens: warmup.MaxTokens, Estimated: warmup.Estimated}
		in.DecodeTPS, in.DecodeOK = warmup.DecodeRate()
		return inFlightLine(s, in, "warm-up", "warm-up", w)
	}
	if in.Requests == 0 {
		rate, label := dash, "last "
		if es.Latest.DecodeOK {
			rate = approx(es.TokenSource) + num(es.Latest.DecodeTPS)
		} else if tps, ok := warmup.DecodeRate(); ok && warmup.Chunks > 0 {
			rate, label = num(tps), "warm-up "
			if warmup.Estimated {
				rate = "≈" + rate
			}
		}
		last := line(L(label), V(rate), U(" tok/s"))
		if started > 0 { // sent, no token yet: in flight all the same
			n := itoa(started)
			return fitSpans(w,
				line(M(n+" in flight"), F(" · "), M("no token yet"), F(" · "), last),
				line(M(n+" in flight"), F(" · "), M("no token"), F(" · "), last),
				line(M(n+" live"), F(" · "), M("no token"), F(" · "), last),
				line(M(n+" live, no token yet")))
		}
		return fitSpans(w,
			line(M("none in flight"), F(" · "), last),
			line(M("0 live"), F(" · "), last))
	}
	n := itoa(in.Requests)
	return inFlightLine(s, in, n+" in flight", n+" live", w)
}

// inFlightLine is "1 in flight · ≈45/160 tok · ≈141 tok/s", long or short the label.
func inFlightLine(s *Styles, in stats.InFlight, long, short string, w int) string {
	L, V, U, F := styled(&s.Label), styled(&s.Value), styled(&s.Unit), styled(&s.Faint)
	mark := ""
	if in.Estimated {
		mark = "≈"
	}
	toks := mark + itoa(int(in.TokensMax))
	if in.Requests > 1 && int(in.TokensMin) != int(in.TokensMax) {
		toks = mark + itoa(int(in.TokensMin)) + "–" + itoa(int(in.TokensMax))
	}
	if in.MaxTokens > 0 {
		toks += "/" + itoa(in.MaxTokens)
	}
	rate := dash
	if in.DecodeOK {
		rate = mark + num(in.DecodeTPS)
	}
	return fitSpans(w,
		line(L(long), F(" · "), V(toks), U(" tok"), F(" · "), V(rate), U(" tok/s")),
		line(L(long+" "), V(toks), U(" tok "), V(rate), U(" tok/s")),
		line(L(short), F(" · "), V(toks), U(" tok"), F(" · "), V(rate), U(" tok/s")),
		line(L(short+" "), V(toks), U(" tok "), V(rate), U(" tok/s")),
		line(L(short+" "), V(rate), U(" tok/s")))
}

// decodeForms are the forms of decode tok/s of the requests that finished in the last 60 s:
// the median and the slow tail (p10, the rate that 90% beat), "decode tok/s · 60s p50 140 ·
// slow tail p10 131".
func decodeForms(s *Styles, es *stats.EndpointStats) [][]span {
	L, V, U, F := styled(&s.Label), styled(&s.Value), styled(&s.Unit), styled(&s.Faint)
	d := es.Recent.DecodeTPS
	mark := ""
	if d.Count > 0 {
		mark = approx(es.TokenSource)
	}
	q50, q10 := mark+pick(d, p50, num), mark+pick(d, p10, num)
	return [][]span{
		line(L("decode "), U("tok/s"), F(" · "), L("60s p50 "), V(q50), F(" · "), L("slow tail p10 "), V(q10)),
		line(L("decode "), U("tok/s"), F(" · "), L("60s p50 "), V(q50), F(" · "), L("p10 "), V(q10)),
		line(L("decode "), U("tok/s"), L(" 60s p50 "), V(q50), L(" p10 "), V(q10)),
		line(L("dec "), U("tok/s"), L(" 60s p50 "), V(q50), L(" p10 "), V(q10)),
		line(L("dec "), U("tok/s"), L(" p50 "), V(q50), L(" p10 "), V(q10)), // narrower than 80 columns
	}
}

// tpsLine is aggregate tok/s over the last 10 s (the chart below has it per second), the
// requests and where token counts come from: "agg ≈412 tok/s 10s · 30 req · tokens: usage".
func tpsForms(s *Styles, es *stats.EndpointStats) [][]span {
	L, V, U, F, M := styled(&s.Label), styled(&s.Value), styled(&s.Unit), styled(&s.Faint), styled(&s.Muted)
	mark := approx(es.TokenSource)
	if es.InFlight.Estimated {
		mark = "≈"
	}
	agg := []span{V(mark + num(es.AggregateTPS)), U(" tok/s")}
	if es.Requests == 0 && es.InFlight.Requests == 0 {
		agg = []span{V(dash), U(" tok/s")} // nothing counted yet: no rate, not 0
	}
	req := []span{V(itoa(es.Requests)), L(" req")}
	src := []span{L("tokens: "), M(sourceLabel(es.TokenSource))}
	return [][]span{
		line(L("agg "), agg, L(" (10s)"), F(" · "), req, F(" · "), src),
		line(L("agg "), agg, L(" 10s"), F(" · "), req, F(" · "), src),
		line(L("agg "), agg, L(" 10s"), F(" · "), req),
		line(L("agg "), agg, L(" 10s")),
	}
}

// ttftForms are the forms of the newest TTFT (in flight or finished) and the TTFT of the
// requests that finished in the last 60 s: "ttft 62 ms last · 60s p50 61 · p95 80".
func ttftForms(s *Styles, es *stats.EndpointStats) [][]span {
	L, V, U, F := styled(&s.Label), styled(&s.Value), styled(&s.Unit), styled(&s.Faint)
	last := dash
	if es.Latest.TTFTOK {
		last = cardMs(es.Latest.TTFT)
	}
	d := es.Recent.TTFT
	q50, q95 := pick(d, p50, cardMs), pick(d, p95, cardMs)
	return [][]span{
		line(L("ttft "), V(last), U(" ms"), L(" last"), F(" · "), L("60s p50 "), V(q50), F(" · "), L("p95 "), V(q95)),
		line(L("ttft "), V(last), U(" ms"), L(" last"), F(" · "), L("60s p50 "), V(q50), L(" p95 "), V(q95)),
		line(L("ttft "), U("ms "), V(last), L(" last 60s p50 "), V(q50), L(" p95 "), V(q95)),
		line(L("ttft "), V(last), U(" ms"), L(" last"), F(" · "), L("60s p50 "), V(q50)),
		line(L("ttft "), V(last), U(" ms"), L(" last")),
	}
}

// gpuCard is the card's GPU line, with --gpu-metrics.
func gpuCard() cardFeature {
	return cardFeature{
		line: lineGPU,
		fact: func(f *cardFacts) *bool { return &f.gpu },
		has:  func(_ *panel, es *stats.EndpointStats) bool { return es.GPU != nil },
		draw: func(p *panel, es *stats.EndpointStats, w int) string { return gpuLine(p.styles, es.GPU, w) },
	}
}

// srvTimeCard is the card's line of the server's own clock, once a response carried it; a
// shared line (sharedLines).
func srvTimeCard() cardFeature {
	return cardFeature{
		line: lineSrvTime,
		fact: func(f *cardFacts) *bool { return &f.srvTime },
		has:  func(_ *panel, es *stats.EndpointStats) bool { return es.ServerTiming.Source != "" },
		draw: func(p *panel, es *stats.EndpointStats, w int) string { return p.sharedLine(lineSrvTime, es, w) },
	}
}

// gpuLine is the card's line of its GPUs (--gpu-metrics): watts and utilisation of the latest
// scrape and tokens per joule over the run, "gpu 612 W · util 97% · 1.52 tok/J", shortened
// until it fits, or its quiet note when there is no reading.
func gpuLine(s *Styles, g *stats.GPUStats, w int) string {
	if g.Scrapes == 0 || g.State != 0 && g.Note != "" {
		note := g.Note
		if note == "" {
			note = "waiting for the first scrape"
		}
		return truncate(s.Faint.Render("gpu metrics: "+oneLine(note)), w)
	}
	L, V, U, F := styled(&s.Label), styled(&s.Value), styled(&s.Unit), styled(&s.Faint)
	watts, util, tpj := dash, dash, dash
	if r := g.Latest; r.PowerW.OK {
		watts = strconv.FormatFloat(r.PowerW.V, 'f', 0, 64)
	}
	if r := g.Latest; r.Util.OK {
		util = strconv.FormatFloat(r.Util.V, 'f', 0, 64) + "%"
	}
	if g.TokensPerJoule.OK {
		tpj = perJoule(g.TokensPerJoule.V)
	}
	return fitSpans(w,
		line(L("gpu "), V(watts), U(" W"), F(" · "), L("util "), V(util), F(" · "), V(tpj), U(" tok/J")),
		line(L("gpu "), V(watts), U(" W "), V(util), L(" "), V(tpj), U(" tok/J")),
		line(L("gpu "), V(watts), U(" W "), V(tpj), U(" tok/J")))
}

// perJoule is tokens per joule with three significant figures down to 0.01.
func perJoule(v float64) string {
	switch {
	case !finite(v):
		return dash
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 0.01:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// srvTimeLine is what the server said of its own clock over the last 60 s (the whole run
// before any finished in it): the medians of its TTFT, of outside (client TTFT − server TTFT)
// and of its decode rate, "srv ttft 212 ms · outside 14 ms · srv 47.9 tok/s".
func srvTimeForms(s *Styles, es *stats.EndpointStats) [][]span {
	L, V, U, F := styled(&s.Label), styled(&s.Value), styled(&s.Unit), styled(&s.Faint)
	win := &es.Recent
	if win.Of(metric.ServerTTFT).Count == 0 && win.Of(metric.ServerDecodeTPS).Count == 0 {
		win = &es.Whole
	}
	ttft, out := pick(win.Of(metric.ServerTTFT), p50, cardMs), pick(win.Of(metric.Outside), p50, cardMs)
	dec := pick(win.Of(metric.ServerDecodeTPS), p50, num)
	return [][]span{
		line(L("srv ttft "), V(ttft), U(" ms"), F(" · "), L("outside "), V(out), U(" ms"), F(" · "), L("srv "), V(dec), U(" tok/s")),
		line(L("srv ttft "), V(ttft), U(" ms"), L(" out "), V(out), U(" ms"), L(" srv "), V(dec), U(" tok/s")),
		line(L("srv ttft "), V(ttft), U(" ms"), L(" out "), V(out), U(" ms")),
		line(L("srv ttft "), V(ttft), U(" ms")),
	}
}
