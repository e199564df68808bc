package ui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"tokscope/feature"
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
		if sp.style == nil {
			b.WriteString(sp.text)
			continue
		}
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
	}
	if c := featureCard(l); c != nil {
		return styledForms(s, c.Forms(es))
	}
	return nil
}

// The features' card lines (package feature says whether a card has each and how it reads;
// the card's layout here says which row it takes and when it gets one).

// featureCardPlace is the row of feature name's card line and the fact cardPriority places
// it by; -1 for a feature the layout has no row for (TestEveryCardFeatureHasAPlace).
func featureCardPlace(name string) (line int, fact func(f *cardFacts) *bool) {
	switch name {
	case "slo":
		return lineSLO, func(f *cardFacts) *bool { return &f.slo }
	case "server":
		return lineServer, func(f *cardFacts) *bool { return &f.server }
	case "gpu":
		return lineGPU, func(f *cardFacts) *bool { return &f.gpu }
	case "server timing":
		return lineSrvTime, func(f *cardFacts) *bool { return &f.srvTime }
	case "turns":
		return lineTurns, func(f *cardFacts) *bool { return &f.turns }
	}
	return -1, nil
}

// featureCards are the features' card lines as the card lays them out.
func featureCards() []cardFeature {
	var out []cardFeature
	for _, f := range feature.All() {
		if f.Card == nil {
			continue
		}
		c := f.Card
		line, fact := featureCardPlace(f.Name)
		cf := cardFeature{line: line, fact: fact, has: func(_ *panel, es *stats.EndpointStats) bool { return c.Has(es) },
			draw: func(p *panel, es *stats.EndpointStats, w int) string {
				return fitSpans(w, styledForms(p.styles, c.Forms(es))...)
			}}
		if c.Shared {
			cf.draw = func(p *panel, es *stats.EndpointStats, w int) string { return p.sharedLine(line, es, w) }
		}
		out = append(out, cf)
	}
	return out
}

// featureCard is the feature's card line at row l; nil when no feature's line is there.
func featureCard(l int) *feature.Card {
	for _, f := range feature.All() {
		if line, _ := featureCardPlace(f.Name); f.Card != nil && line == l {
			return f.Card
		}
	}
	return nil
}

// featureLine is feature name's card line for es at width w; "" when no feature of that name
// has one.
func featureLine(s *Styles, name string, es *stats.EndpointStats, w int) string {
	for _, f := range feature.All() {
		if f.Name == name && f.Card != nil {
			return fitSpans(w, styledForms(s, f.Card.Forms(es))...)
		}
	}
	return ""
}

// styledForms are a feature's forms in the card's styles.
func styledForms(s *Styles, forms []feature.Form) [][]span {
	out := make([][]span, len(forms))
	for i, f := range forms {
		out[i] = make([]span, len(f))
		for j, sp := range f {
			out[i][j] = span{roleStyle(s, sp.Role), sp.Text}
		}
	}
	return out
}

// roleStyle is the style of a piece of a feature's line; nil (no style) for feature.Plain.
func roleStyle(s *Styles, r feature.Role) *lipgloss.Style {
	switch r {
	case feature.Label:
		return &s.Label
	case feature.Value:
		return &s.Value
	case feature.Unit:
		return &s.Unit
	case feature.Faint:
		return &s.Faint
	case feature.Muted:
		return &s.Muted
	case feature.Warn:
		return &s.Warn
	case feature.Title:
		return &s.Title
	case feature.Good:
		return &s.Good
	case feature.Bad:
		return &s.Bad
	}
	return nil
}

// lineForms is, by card line, the index of the form a card draws at the least.
type lineForms [nLines]int

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
