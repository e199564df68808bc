package ui

import (
	"strconv"
	"strings"

	"tokscope/servermetrics"
	"tokscope/stats"
)

// The card's SLO and server lines, and the formats the compare and detail views share.

// sloCard is the card's SLO line, with objectives.
func sloCard() cardFeature {
	return cardFeature{
		line: lineSLO,
		fact: func(f *cardFacts) *bool { return &f.slo },
		has:  func(_ *panel, es *stats.EndpointStats) bool { return es.SLO != nil },
		draw: func(p *panel, es *stats.EndpointStats, w int) string { return sloLine(p.styles, es.SLO, w) },
	}
}

// serverCard is the card's server line, once the server-metrics scraper reported.
func serverCard() cardFeature {
	return cardFeature{
		line: lineServer,
		fact: func(f *cardFacts) *bool { return &f.server },
		has:  func(_ *panel, es *stats.EndpointStats) bool { return es.Server != nil },
		draw: func(p *panel, es *stats.EndpointStats, w int) string { return serverLine(p.styles, es.Server, w) },
	}
}

// candidate is one wording of a line: plain to measure, styled to show.
type candidate struct{ plain, styled string }

// firstFit is the first candidate that fits w, else the last one truncated.
func firstFit(cs []candidate, w int) string {
	for _, c := range cs {
		if len([]rune(c.plain)) <= w {
			return c.styled
		}
	}
	return truncate(cs[len(cs)-1].styled, w)
}

// share formats a 0–1 share as a percentage: "97.3%".
func share(v float64) string { return pct(100*v) + "%" }

// sloLine is the card's SLO line: "slo 97.3% met · goodput 2.41/s", or, when the recent
// window breaches the target, which objective most requests missed and the window's
// attainment: "⚠ slo breach: ttft · 82.0% (60s)".
func sloLine(s *Styles, st *stats.SLOStats, w int) string {
	L, V := s.Label.Render, s.Value.Render
	if st.Counted == 0 {
		return truncate(L("slo ")+s.Muted.Render(dash+" no request yet"), w)
	}
	if st.Breach {
		recent := share(st.RecentAttainment)
		return firstFit([]candidate{
			{"⚠ slo breach: " + st.Worst + " · " + recent + " (60s)", s.Warn.Render("⚠ slo breach: " + st.Worst + " · " + recent + " (60s)")},
			{"⚠ slo " + st.Worst + " " + recent, s.Warn.Render("⚠ slo " + st.Worst + " " + recent)},
		}, w)
	}
	att, good := share(st.Attainment), num(st.GoodputRPS)
	return firstFit([]candidate{
		{"slo " + att + " met · goodput " + good + "/s", L("slo ") + V(att) + L(" met") + s.Faint.Render(" · ") + L("goodput ") + V(good) + s.Unit.Render("/s")},
		{"slo " + att + " · " + good + "/s", L("slo ") + V(att) + s.Faint.Render(" · ") + V(good) + s.Unit.Render("/s")},
	}, w)
}

// serverLine is the card's line of the server's own figures, "srv run 4 wait 2 · kv 41% ·
// gen 1234 tok/s · prefix hit 12%" shortened until it fits, or its quiet note when it has
// none. "prefix hit" is the server's prefix-cache hit rate from its /metrics; the client's
// figure (turns.go) is "prompt cached".
func serverLine(s *Styles, st *stats.ServerStats, w int) string {
	if st.Scrapes == 0 || st.State != servermetrics.StateOK && st.Note != "" {
		return serverNote(s, st.Note, w)
	}
	r := &st.Latest
	L, V, U := s.Label.Render, s.Value.Render, s.Unit.Render
	val := func(v servermetrics.Value, f func(float64) string) string {
		if !v.OK {
			return dash
		}
		return f(v.V)
	}
	count := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	run, wait := val(r.Running, count), val(r.Waiting, count)
	kv, gen, hit := val(r.KVCacheUsage, share), val(r.GenTPS, num), val(r.PrefixCacheHitRate, share)
	waitStyle := V
	if r.Waiting.OK && r.Waiting.V > 0 {
		waitStyle = s.Warn.Render
	}
	sep := s.Faint.Render(" · ")
	return firstFit([]candidate{
		{"srv run " + run + " wait " + wait + " · kv " + kv + " · gen " + gen + " tok/s · prefix hit " + hit,
			L("srv run ") + V(run) + L(" wait ") + waitStyle(wait) + sep + L("kv ") + V(kv) + sep + L("gen ") + V(gen) + U(" tok/s") + sep + L("prefix hit ") + V(hit)},
		{"srv run " + run + " wait " + wait + " kv " + kv + " " + gen + " tok/s · prefix hit " + hit,
			L("srv run ") + V(run) + L(" wait ") + waitStyle(wait) + L(" kv ") + V(kv) + " " + V(gen) + U(" tok/s") + sep + L("prefix hit ") + V(hit)},
		{"srv run " + run + " wait " + wait + " · kv " + kv + " · gen " + gen + " tok/s",
			L("srv run ") + V(run) + L(" wait ") + waitStyle(wait) + sep + L("kv ") + V(kv) + sep + L("gen ") + V(gen) + U(" tok/s")},
		{"srv run " + run + " wait " + wait + " kv " + kv + " " + gen + " tok/s",
			L("srv run ") + V(run) + L(" wait ") + waitStyle(wait) + L(" kv ") + V(kv) + " " + V(gen) + U(" tok/s")},
		{"srv " + run + "/" + wait + " kv " + kv + " " + gen + " tok/s", // tok/s stays at 80 columns
			L("srv ") + V(run) + L("/") + waitStyle(wait) + L(" kv ") + V(kv) + " " + V(gen) + U(" tok/s")},
		{"srv " + run + "/" + wait + " kv " + kv,
			L("srv ") + V(run) + L("/") + waitStyle(wait) + L(" kv ") + V(kv)},
	}, w)
}

// serverNote is the card's quiet server-metrics note, shortened rather than cut: the whole
// note, then without its parenthesis ("no series for model "x" (the server lists a, b)"),
// then "srv metrics:" before it, then "srv:" and a shorter wording of the two long notes; only another
// note too long for all of them is cut.
func serverNote(s *Styles, note string, w int) string {
	if note == "" {
		note = "waiting for the first scrape"
	}
	note = oneLine(note)
	head, _, _ := strings.Cut(note, " (")
	var cs []candidate
	short := head
	switch {
	case strings.HasPrefix(head, "no series for model"):
		short = "no series for this model"
	case head == "waiting for the first scrape":
		short = "waiting"
	}
	for _, t := range []string{"server metrics: " + note, "server metrics: " + head, "srv metrics: " + head, "srv: " + short} {
		cs = append(cs, candidate{t, s.Faint.Render(t)})
	}
	return firstFit(cs, w)
}
