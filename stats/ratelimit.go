package stats

import (
	"time"

	"tokscope/config"
)

// rateLimits is the latest rate-limit state an endpoint's responses reported, and the time it
// spent backing off after 429s. Every response counts, warm-ups and interactive requests
// included: limits belong to the key, whichever request saw them.
type rateLimits struct {
	remainingRequests, remainingTokens int // -1: never seen
	at                                 time.Time
	retryAfter                         time.Duration
	backoff                            time.Duration // the Backoff of every Sample (the 429 that started it)
}

func noRateLimits() rateLimits { return rateLimits{remainingRequests: -1, remainingTokens: -1} }

func (r *rateLimits) configure(*config.Endpoint) {}
func (r *rateLimits) reset()                     { *r = noRateLimits() }

// take keeps the headers of a Sample when it carried any. Samples arrive in completion order,
// which is close enough to response order for "latest"; a sample that started before the
// one already kept does not overwrite it.
func (r *rateLimits) take(f *figures) {
	s := f.s
	if s.RateLimitRemainingRequests >= 0 || s.RateLimitRemainingTokens >= 0 {
		if r.at.IsZero() || !s.Start.Before(r.at) {
			r.remainingRequests, r.remainingTokens, r.at = s.RateLimitRemainingRequests, s.RateLimitRemainingTokens, s.Start
		}
	}
	if s.RetryAfter > 0 {
		r.retryAfter = s.RetryAfter
	}
	r.backoff += s.Backoff
}

func (r *rateLimits) fill(st *EndpointStats, _ readout) {
	st.RateLimitRemainingRequests = r.remainingRequests
	st.RateLimitRemainingTokens = r.remainingTokens
	st.RateLimitAt = r.at
	st.LastRetryAfter = r.retryAfter
	st.BackoffTotal = r.backoff
}
