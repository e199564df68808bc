package ui

import (
	"tokscope/metric"
	"tokscope/stats"
)

// Conversations (--turns) on a card: one line with the share of prompt tokens the responses
// said were cached (cached over prompt tokens of the requests that reported both: the
// client's view of the cache, labelled "prompt cached" / "cached", never "hit", which the
// server line's "prefix hit" from the server's own /metrics uses) and, when later turns were seen, TTFT p50 and
// prompt tokens p50 of first and later turns. Shown when either figure exists.

// turnsCard is the card's turns line, when it has the line's figures.
func turnsCard() cardFeature {
	return cardFeature{
		line: lineTurns,
		fact: func(f *cardFacts) *bool { return &f.turns },
		has:  func(_ *panel, es *stats.EndpointStats) bool { return hasTurnsLine(es) },
		draw: func(p *panel, es *stats.EndpointStats, w int) string { return turnsLine(p.styles, es, w) },
	}
}

// hasTurnsLine reports whether a card has the line's figures.
func hasTurnsLine(es *stats.EndpointStats) bool { return es.Turns != nil || es.CacheHitRate != nil }

// turnsLine is "prompt cached 54.0% · ttft 1st 120 later 45 ms · prompt 66 → 180 tok",
// shortened until it fits w.
func turnsLine(s *Styles, es *stats.EndpointStats, w int) string {
	L, V, U := s.Label.Render, s.Value.Render, s.Unit.Render
	hit := dash
	if es.CacheHitRate != nil {
		hit = pct(100 * *es.CacheHitRate)
	}
	head := L("prompt cached ") + V(hit) + U("%")
	short := L("cached ") + V(hit) + U("%")
	if es.Turns == nil {
		return figureFit(w, head, short)
	}
	t := es.Turns
	ft, lt := pick(t.Of(0, metric.TTFT), p50, ms), pick(t.Of(1, metric.TTFT), p50, ms)
	fp, lp := pick(t.Of(0, metric.PromptTokens), p50, toks), pick(t.Of(1, metric.PromptTokens), p50, toks)
	sep := s.Faint.Render(" · ")
	return figureFit(w,
		head+sep+L("ttft 1st ")+V(ft)+L(" later ")+V(lt)+U(" ms")+sep+L("prompt ")+V(fp)+L(" → ")+V(lp)+U(" tok"),
		short+sep+L("ttft ")+V(ft)+L("/")+V(lt)+U(" ms")+sep+L("prompt ")+V(fp)+L("/")+V(lp),
		short+L(" ttft ")+V(ft)+L("/")+V(lt),
		short)
}

// turnColumns join the compare table when an endpoint runs conversations (--turns > 1) or
// shares a prefix (--shared-prefix): the cache-hit rate, then each split metric's p50 by turn
// (metric.Splits × metric.SplitMetrics: "ttft first", "ttft later", …).
func turnColumns() []column {
	cols := []column{{title: "cached %", format: pct, better: +1, rank: 18, value: func(es *stats.EndpointStats) (float64, bool) {
		if es.CacheHitRate == nil {
			return 0, false
		}
		return 100 * *es.CacheHitRate, true
	}}}
	rank := 19
	for i, sp := range metric.Splits {
		for _, id := range metric.SplitMetrics {
			m := metric.Get(id)
			title := m.Key
			if len(m.Compare) > 0 {
				title = m.Compare[0].Title
			}
			cols = append(cols, column{title: shortTitle(title) + " " + sp.Key, format: kindFormat(m.Kind), better: int(m.Better), rank: rank,
				value: func(es *stats.EndpointStats) (float64, bool) {
					if es.Turns == nil {
						return 0, false
					}
					d := es.Turns.Of(i, id)
					return d.P50, d.Count > 0
				}})
			rank++
		}
	}
	return cols
}

// shortTitle drops a compare title's quantile: "ttft p50" is "ttft".
func shortTitle(t string) string {
	if i := len(t) - 4; i > 0 && t[i:i+2] == " p" {
		return t[:i]
	}
	return t
}
