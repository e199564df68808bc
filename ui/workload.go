package ui

import (
	"tokscope/stats"
)

// The workload's figures in the views: the prompt side of each request from the server's
// usage (prompt tokens, those a prefix cache served, prefill tok/s) and the cache mode the
// requests ran under (--cache).

// cacheLabel is the card's name for the cache mode: "bust" (every prompt tagged, no prefix
// cache serves it), "reuse" (repeated prompts: the cached path), "mixed" (a replay of both),
// "" when unknown. Short: it shares the model's line.
func cacheLabel(es *stats.EndpointStats) string { return es.Cache }

// promptLines are the detail view's prompt figures over the recent window: prompt tokens and
// cached tokens as the server counted them, prefill tok/s, e2e, and the cache mode.
func promptLines(s *Styles, es *stats.EndpointStats, w int) []string {
	r := &es.Recent
	if r.PromptTokens.Count == 0 && es.Cache == "" {
		return nil
	}
	cached := pick(r.CachedTokens, p50, toks)
	if r.CachedTokens.Count == 0 && r.PromptTokens.Count > 0 {
		cached = "not reported"
	}
	prompt, pre := pick(r.PromptTokens, p50, toks), pick(r.PrefillTPS, p50, num)
	mode := ""
	if es.Cache != "" {
		mode = " · " + es.Cache
	}
	line := figureFit(w,
		s.Label.Render("prompt ")+s.Value.Render(prompt)+s.Unit.Render(" tok")+s.Label.Render("  cached ")+s.Value.Render(cached)+
			s.Label.Render("  prefill ")+s.Value.Render(pre)+s.Unit.Render(" tok/s")+s.Muted.Render(mode),
		s.Label.Render("prompt ")+s.Value.Render(prompt)+s.Label.Render(" cached ")+s.Value.Render(cached)+
			s.Label.Render(" pre ")+s.Value.Render(pre)+s.Muted.Render(mode),
		s.Label.Render("prompt ")+s.Value.Render(prompt)+s.Label.Render(" cached ")+s.Value.Render(cached)+
			s.Label.Render(" pre ")+s.Value.Render(pre))
	out := []string{line}
	if es.TargetRequests > 0 {
		out = append(out, s.Muted.Render("output target reached "+itoa(es.TargetReached)+"/"+itoa(es.TargetRequests)+
			" · e2e p50 "+pick(r.E2E, p50, ms)+" ms"))
	}
	return out
}
