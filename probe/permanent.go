package probe

import (
	"fmt"
	"time"

	"tokscope/sample"
)

// Permanent errors. A 401, 403 or 404 says that the key, the permissions or the model name is
// wrong: sending the same request every second changes nothing and can look like abuse to a
// provider. After the second identical one in a row an endpoint backs off exponentially (1 s,
// 2 s, 4 s … 5 min), its Status says why (Reason), and with Options.StopAfterPermanent
// (headless) it stops after that many: a StateStopped Status with the reason, and the run ends
// when no endpoint is left.

// maxPermanentBackoff bounds the back-off after permanent errors: the endpoint stays visibly
// tried (a fixed key or a pulled model shows within minutes).
const maxPermanentBackoff = 5 * time.Minute

// isPermanent reports an error that repeating the request will not fix.
func isPermanent(s *sample.Sample) bool {
	switch s.ErrorKind {
	case "http_401", "http_403", "http_404":
		return true
	}
	return false
}

// permanentBackoff is the back-off after the n-th identical permanent error in a row: none
// after the first, then 1 s, 2 s, 4 s … maxPermanentBackoff.
func permanentBackoff(n int) time.Duration {
	if n < 2 {
		return 0
	}
	return min(time.Second<<min(n-2, 16), maxPermanentBackoff)
}

// permanent accounts a permanent error: its run of identical ones, the back-off, and
// whether the endpoint must stop (Options.StopAfterPermanent).
func (h *health) permanent(s *sample.Sample) {
	h.lastFailed = true
	if s.ErrorKind == h.permKind {
		h.permCount++
	} else {
		h.permKind, h.permCount = s.ErrorKind, 1
	}
	h.permMsg = s.ErrorMessage
	if n := h.stopAfter; n > 0 && h.permCount >= n && h.stopWhy == "" {
		h.stopWhy = fmt.Sprintf("stopped after %d identical %s errors in a row: %s", h.permCount, h.permKind, h.permMsg)
		return
	}
	if d := permanentBackoff(h.permCount); d > 0 {
		h.extend(d)
	}
}

// reason says why the endpoint backs off or stopped after permanent errors, for its Status.
func (h *health) reason() string {
	switch {
	case h.stopWhy != "":
		return h.stopWhy
	case h.permCount >= 2:
		return fmt.Sprintf("%d× %s in a row: %s", h.permCount, h.permKind, h.permMsg)
	}
	return ""
}

// stopPermanent ends the lane after Options.StopAfterPermanent identical permanent errors
// (once): no new request, a StateStopped Status with the reason.
func (l *lane) stopPermanent() {
	l.mu.Lock()
	stop := l.health.stopWhy != "" && !l.finished
	if stop {
		l.finished, l.live = true, false
	}
	cancel := l.cancel
	l.mu.Unlock()
	if !stop {
		return
	}
	cancel()
	l.status.publish()
	l.r.endpointFinished()
}
