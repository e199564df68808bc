package ui

import (
	"strconv"

	"tokscope/stats"
)

// rateLimitLines are the detail view's rate-limit lines: the latest x-ratelimit-remaining
// headers and Retry-After, then the total time spent backing off after 429s (which happens
// before t0, so it is never part of any latency). None when there is nothing to say.
func rateLimitLines(s *Styles, es *stats.EndpointStats, w int) []string {
	var lines []string
	var long, short string
	add := func(l, sh string) {
		if long != "" {
			long += s.Faint.Render(" · ")
			short += " "
		}
		long += l
		short += sh
	}
	if !es.RateLimitAt.IsZero() {
		count := func(n int) string {
			if n < 0 {
				return dash
			}
			return strconv.Itoa(n)
		}
		req, tok := count(es.RateLimitRemainingRequests), count(es.RateLimitRemainingTokens)
		add(s.Label.Render("rate limit left ")+s.Value.Render(req)+s.Unit.Render(" req ")+s.Value.Render(tok)+s.Unit.Render(" tok"),
			s.Label.Render("left ")+req+s.Unit.Render("r ")+tok+s.Unit.Render("t"))
	}
	if es.LastRetryAfter > 0 {
		add(s.Label.Render("retry-after ")+elapsed(es.LastRetryAfter), s.Label.Render("retry ")+elapsed(es.LastRetryAfter))
	}
	if long != "" {
		lines = append(lines, figureFit(w, long, short))
	}
	if es.BackoffTotal > 0 {
		lines = append(lines, figureFit(w,
			s.Label.Render("backed off ")+s.Warn.Render(elapsed(es.BackoffTotal))+s.Muted.Render(" in total (not latency)"),
			s.Label.Render("backoff ")+s.Warn.Render(elapsed(es.BackoffTotal))))
	}
	return lines
}
