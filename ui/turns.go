package ui

import (
	"tokscope/metric"
	"tokscope/stats"
)

// Conversations (--turns) on a card: one line with the cache-hit rate (cached over prompt
// tokens of the requests that reported both) and, when later turns were seen, TTFT p50 and
// prompt tokens p50 of first and later turns. Shown when either figure exists.

// hasTurnsLine reports whether a card has the line's figures.
func hasTurnsLine(es *stats.EndpointStats) bool { return es.Turns != nil || es.CacheHitRate != nil }

// turnsLine is "cache hit 54.0% · ttft 1st 120 later 45 ms · prompt 66 → 180 tok", shortened
// until it fits w.
func turnsLine(s *Styles, es *stats.EndpointStats, w int) string {
	L, V, U := s.Label.Render, s.Value.Render, s.Unit.Render
	hit := dash
	if es.CacheHitRate != nil {
		hit = pct(100 * *es.CacheHitRate)
	}
	head := L("cache hit ") + V(hit) + U("%")
	if es.Turns == nil {
		return figureFit(w, head, L("hit ")+V(hit)+U("%"))
	}
	t := es.Turns
	ft, lt := pick(t.Of(0, metric.TTFT), p50, ms), pick(t.Of(1, metric.TTFT), p50, ms)
	fp, lp := pick(t.Of(0, metric.PromptTokens), p50, toks), pick(t.Of(1, metric.PromptTokens), p50, toks)
	sep := s.Faint.Render(" · ")
	return figureFit(w,
		head+sep+L("ttft 1st ")+V(ft)+L(" later ")+V(lt)+U(" ms")+sep+L("prompt ")+V(fp)+L(" → ")+V(lp)+U(" tok"),
		head+sep+L("ttft ")+V(ft)+L("/")+V(lt)+U(" ms")+sep+L("prompt ")+V(fp)+L("/")+V(lp),
		L("hit ")+V(hit)+U("%")+L(" ttft ")+V(ft)+L("/")+V(lt),
		L("hit ")+V(hit)+U("%"))
}
