package stats

import "tokscope/probe"

// Observe feeds one Runner event into the statistics: the Sample of a finished background
// request (Done; interactive stream/race requests are left out, as AddAt does), the tokens so
// far of a background request in flight (Progress: live.go; warm-ups and interactive requests
// are left out) and the time an endpoint spent backing off (a Status with StateBackoff). Every
// consumer of events — headless, replay, sweeps, the UI — goes through here, so they count
// alike. It reports whether the statistics changed.
func (a *Aggregator) Observe(ev probe.Event) bool {
	switch ev := ev.(type) {
	case *probe.Done:
		if ev.Stream != 0 || ev.Endpoint < 0 || ev.Endpoint >= len(a.eps) {
			return false
		}
		a.AddAt(ev.Endpoint, &ev.Sample)
		return true
	case *probe.Progress:
		if ev.Stream != 0 || ev.Warmup || ev.Endpoint < 0 || ev.Endpoint >= len(a.eps) {
			return false
		}
		a.observeProgress(a.eps[ev.Endpoint], ev)
		return true
	case *probe.Status:
		if ev.State != probe.StateBackoff || ev.Backoff <= 0 || ev.Endpoint < 0 || ev.Endpoint >= len(a.eps) {
			return false
		}
		a.AddBackoff(ev.Endpoint, ev.Backoff)
		return true
	}
	return false
}
