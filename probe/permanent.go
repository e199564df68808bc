package probe

import (
	"fmt"
	"time"
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
func isPermanent(s *Sample) bool {
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

// permanentLocked accounts a permanent error: its run of identical ones, the back-off, and
// whether the endpoint must stop (Options.StopAfterPermanent); l.mu held.
func (l *lane) permanentLocked(s *Sample) {
	l.lastFailed = true
	if s.ErrorKind == l.permKind {
		l.permCount++
	} else {
		l.permKind, l.permCount = s.ErrorKind, 1
	}
	l.permMsg = s.ErrorMessage
	if n := l.r.opts.StopAfterPermanent; n > 0 && l.permCount >= n && l.stopWhy == "" {
		l.stopWhy = fmt.Sprintf("stopped after %d identical %s errors in a row: %s", l.permCount, l.permKind, l.permMsg)
		return
	}
	if d := permanentBackoff(l.permCount); d > 0 {
		if until := time.Now().Add(d); until.After(l.backoffUntil) {
			l.backoffUntil, l.backoff = until, d
		}
	}
}

// permanentReasonLocked says why the endpoint backs off or stopped, for its Status; l.mu held.
func (l *lane) permanentReasonLocked() string {
	switch {
	case l.stopWhy != "":
		return l.stopWhy
	case l.permCount >= 2:
		return fmt.Sprintf("%d× %s in a row: %s", l.permCount, l.permKind, l.permMsg)
	}
	return ""
}

// stopPermanent ends the lane after Options.StopAfterPermanent identical permanent errors
// (once): no new request, a StateStopped Status with the reason.
func (l *lane) stopPermanent() {
	l.mu.Lock()
	stop := l.stopWhy != "" && !l.finished
	if stop {
		l.finished, l.live = true, false
	}
	cancel := l.cancel
	l.mu.Unlock()
	if !stop {
		return
	}
	cancel()
	l.publish()
	l.r.endpointFinished()
}
