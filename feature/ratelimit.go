package feature

import (
	"strconv"
	"strings"
	"time"

	"tokscope/stats"
)

// Rate limits: the table's line on the latest rate-limit headers and the time spent backing off
// (neither in JSON nor CSV: the headers say where a key stood at one instant, not what the run
// measured).
func rateLimitFeature() Feature {
	return Feature{
		Name:     "rate limits",
		LinesAt:  LinesHead,
		Lines:    func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return Line(rateLimitLine(e)) },
		DetailAt: DetailLast, Detail: rateLimitDetail,
	}
}

// rateLimitLine is an endpoint's rate-limit line, when a response carried rate-limit headers
// or the endpoint backed off: the latest remaining requests/tokens and the total time spent
// backing off after 429s (never part of any latency); "" otherwise.
func rateLimitLine(e *stats.EndpointStats) string {
	var parts []string
	if !e.RateLimitAt.IsZero() {
		count := func(n int) string {
			if n < 0 {
				return NoData
			}
			return strconv.Itoa(n)
		}
		parts = append(parts, "rate limit remaining "+count(e.RateLimitRemainingRequests)+" requests, "+
			count(e.RateLimitRemainingTokens)+" tokens")
	}
	if e.BackoffTotal > 0 {
		parts = append(parts, "backed off "+e.BackoffTotal.Round(time.Millisecond).String()+" (not latency)")
	}
	return strings.Join(parts, "  ")
}

// rateLimitDetail are the detail view's rate-limit lines: the latest x-ratelimit-remaining
// headers and Retry-After, then the total time spent backing off after 429s (which happens
// before t0, so it is never part of any latency). None when there is nothing to say.
func rateLimitDetail(e *stats.EndpointStats) []DetailLine {
	L, V, U := In(Label), In(Value), In(Unit)
	var long, short Form
	add := func(l, sh Form) {
		if long != nil {
			long = append(long, Span{Role: Faint, Text: " · "})
			short = append(short, Span{Role: Plain, Text: " "})
		}
		long, short = append(long, l...), append(short, sh...)
	}
	if !e.RateLimitAt.IsZero() {
		count := func(n int) string {
			if n < 0 {
				return Dash
			}
			return strconv.Itoa(n)
		}
		req, tok := count(e.RateLimitRemainingRequests), count(e.RateLimitRemainingTokens)
		add(Form{L("rate limit left "), V(req), U(" req "), V(tok), U(" tok")},
			Form{L("left "), {Role: Plain, Text: req}, U("r "), {Role: Plain, Text: tok}, U("t")})
	}
	if e.LastRetryAfter > 0 {
		add(Form{L("retry-after "), {Role: Plain, Text: Elapsed(e.LastRetryAfter)}}, Form{L("retry "), {Role: Plain, Text: Elapsed(e.LastRetryAfter)}})
	}
	var lines []DetailLine
	if long != nil {
		lines = append(lines, DetailLine{Forms: []Form{long, short}})
	}
	if e.BackoffTotal > 0 {
		lines = append(lines, DetailLine{Forms: []Form{
			{L("backed off "), {Role: Warn, Text: Elapsed(e.BackoffTotal)}, {Role: Muted, Text: " in total (not latency)"}},
			{L("backoff "), {Role: Warn, Text: Elapsed(e.BackoffTotal)}},
		}})
	}
	return lines
}
