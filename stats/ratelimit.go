package stats

import (
	"time"

	"tokscope/sample"
)

// rateLimits is the latest rate-limit state an endpoint's responses reported.
type rateLimits struct {
	remainingRequests, remainingTokens int // -1: never seen
	at                                 time.Time
	retryAfter                         time.Duration
}

func noRateLimits() rateLimits { return rateLimits{remainingRequests: -1, remainingTokens: -1} }

// observe keeps the headers of s when it carried any. Samples arrive in completion order,
// which is close enough to response order for "latest"; a sample that started before the
// one already kept does not overwrite it.
func (r *rateLimits) observe(s *sample.Sample) {
	if s.RateLimitRemainingRequests >= 0 || s.RateLimitRemainingTokens >= 0 {
		if r.at.IsZero() || !s.Start.Before(r.at) {
			r.remainingRequests, r.remainingTokens, r.at = s.RateLimitRemainingRequests, s.RateLimitRemainingTokens, s.Start
		}
	}
	if s.RetryAfter > 0 {
		r.retryAfter = s.RetryAfter
	}
}

func (r *rateLimits) fill(st *EndpointStats) {
	st.RateLimitRemainingRequests = r.remainingRequests
	st.RateLimitRemainingTokens = r.remainingTokens
	st.RateLimitAt = r.at
	st.LastRetryAfter = r.retryAfter
}
