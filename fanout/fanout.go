// Package fanout is the one way a run's events reach their consumers: the statistics, the
// record file, the Prometheus exporter, the HTML report, a sweep's steps and the UI. Each
// consumer implements Observer; a run builds one List of them in one place (package cli), and
// the goroutine that reads the Runner's events hands each event to that List, in order.
//
// When one consumer must not hold up the others (the UI, whose loop may lag behind the
// Runner), a Relay reads the events for it: it hands each to the consumers that take every
// event at once (the record file, the exporter) and queues it for the slow one.
//
// fanout imports only probe.
package fanout

import "tokscope/sample"

// Observer takes the events of a run, one at a time, from the one goroutine that reads
// them; it reports whether what it holds changed (a UI then redraws).
type Observer interface {
	Observe(ev sample.Event) bool
}

// List hands each event to every Observer, in order. A nil entry is skipped.
type List []Observer

// Observe hands ev to every Observer of l, all of them, and reports whether any changed.
func (l List) Observe(ev sample.Event) bool {
	changed := false
	for _, o := range l {
		if o != nil && o.Observe(ev) {
			changed = true
		}
	}
	return changed
}

// Func is an Observer written as a function.
type Func func(ev sample.Event) bool

// Observe calls f.
func (f Func) Observe(ev sample.Event) bool { return f(ev) }
