package probe

import (
	"math/rand/v2"
	"time"

	"tokscope/sample"
)

// health is an endpoint's record of how its requests failed, and the back-off that record
// sets before the next one: a 429 backs off for the server's Retry-After, else 1 s, 2 s …
// 30 s with jitter; a run of identical permanent errors backs off 1 s … 5 min and, with
// Options.StopAfterPermanent, stops the endpoint (permanent.go). Every wait is before t0, so
// a back-off is never part of any latency.
//
// Concurrency: none of its own. The lane reads and changes it under lane.mu only, together
// with the rest of the state a Status is derived from, so that a Status is one consistent
// snapshot (a request's end leaves flight and health in one step).
type health struct {
	stopAfter int // Options.StopAfterPermanent: stop after that many permanent errors; 0 never

	until       time.Time     // the back-off ends (in the past: none)
	length      time.Duration // length of the current back-off
	rateLimited int           // consecutive 429s
	lastFailed  bool

	permKind  string // the last permanent error's kind (permanent.go)
	permCount int    // identical permanent errors in a row
	permMsg   string // the last one's message
	stopWhy   string // why the endpoint stopped after permanent errors; "" while it runs
}

// observe accounts the outcome of a finished background request.
func (h *health) observe(s *sample.Sample) {
	switch {
	case s.ErrorKind == sample.ErrCanceled:
		// cut or abandoned with the run: says nothing about the endpoint
	case isRateLimited(s):
		h.rateLimit(s)
		h.permCount = 0
	case isPermanent(s):
		h.permanent(s)
	case s.Outcome == sample.OutcomeError:
		h.lastFailed, h.permCount = true, 0
	default:
		h.lastFailed, h.rateLimited, h.permCount = false, 0, 0
	}
}

// isRateLimited: 429, or Anthropic's 529 overloaded_error, which asks for the same back-off.
func isRateLimited(s *sample.Sample) bool {
	return s.HTTPStatus == 429 || s.ErrorKind == "http_429" || s.HTTPStatus == 529 || s.ErrorKind == "http_529"
}

// rateLimit starts a back-off: Retry-After when the server gave one, else 1 s, 2 s, … 30 s
// with ±20 % jitter so that loops do not return in lockstep. It sets s.Backoff to what this
// 429 adds to the time spent backing off.
func (h *health) rateLimit(s *sample.Sample) {
	h.lastFailed = true
	h.rateLimited++
	d := s.RetryAfter
	if d <= 0 {
		d = min(time.Second<<min(h.rateLimited-1, 5), 30*time.Second)
		d = time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	}
	now := time.Now()
	if until := now.Add(d); until.After(h.until) {
		// What this 429 adds to the time spent backing off: all of d, or the extension of a
		// back-off already running.
		s.Backoff = until.Sub(later(now, h.until))
		h.until, h.length = until, d
	}
}

// extend backs off for d from now, unless a longer back-off is running.
func (h *health) extend(d time.Duration) {
	if until := time.Now().Add(d); until.After(h.until) {
		h.until, h.length = until, d
	}
}

// backingOff reports a back-off that is not over at now.
func (h *health) backingOff(now time.Time) bool { return now.Before(h.until) }

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
