// Package fanout is the one way a run's events reach their consumers: the statistics, the
// record file, the Prometheus exporter, the HTML report, a sweep's steps, a capacity search
// and the UI. Each consumer implements Observer; a run builds one List of them in one place
// (package cli), and its one Loop reads the Runner's events and the server scrapes (as Scrape
// events) and hands each to that List, in order, then queues it for the screen, which may lag.
//
// fanout imports only sample and servermetrics.
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
