package stats

import "tokscope/sample"

// Observe feeds one Runner event into the statistics: the Sample of a finished background
// request (Done; interactive stream/race requests are left out, as AddAt does), the tokens so
// far of a background request in flight (Progress: live.go; warm-ups and interactive requests
// are left out). The time an endpoint spent backing off comes with the Sample of the 429 that
// started it (Sample.Backoff), which a record keeps, not from Status events, which it does
// not: a replay then shows the live run's total. Every consumer of events — headless, replay,
// sweeps, the UI — goes through here, so they count alike. It reports whether the statistics
// changed.
func (a *Aggregator) Observe(ev sample.Event) bool {
	switch ev := ev.(type) {
	case *sample.Done:
		if ev.Stream != 0 || !ev.Endpoint.In(len(a.eps)) {
			return false
		}
		a.AddAt(ev.Endpoint, &ev.Sample)
		return true
	case *sample.Progress:
		if ev.Stream != 0 || ev.Warmup || !ev.Endpoint.In(len(a.eps)) {
			return false
		}
		a.observeProgress(a.eps[ev.Endpoint], ev)
		return true
	}
	return false
}
