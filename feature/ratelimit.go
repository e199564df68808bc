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
		Name:    "rate limits",
		LinesAt: LinesHead,
		Lines:   func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return Line(rateLimitLine(e)) },
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
