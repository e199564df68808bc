package feature

import (
	"tokscope/sample"
	"tokscope/sweep"
)

// The Prometheus exporter's vocabulary (package promexport registers and serves it): a
// feature's metric families beside the registry's, as data, and what each finished request
// adds to them.

// Prom is a feature's Prometheus families. Their first two labels are always the endpoint and
// the model; Observe is given every finished request the run did not cut, warm-ups excluded,
// and takes what the feature counts, through emit: family i (of Families), the values of its
// Labels, and the value to add (a counter) or observe (a histogram).
type Prom struct {
	Families []PromFamily
	Observe  func(s *sample.Sample, emit func(family int, labels []string, v float64))
	// Tier is given each tier a capacity search has settled on an endpoint, as it is.
	Tier func(t *sweep.TierOutcome, emit func(family int, labels []string, v float64))
}

// PromFamily is one family: a counter (emit adds), a histogram when it has Buckets (emit
// observes), a gauge when Gauge (emit sets).
type PromFamily struct {
	Name, Help string
	Labels     []string  // beyond the endpoint and the model
	Buckets    []float64 // a histogram's bounds; nil for a counter or a gauge
	Gauge      bool
	// Zero: every configured endpoint's series exists from the start, at zero (a family
	// with Labels has none to create).
	Zero bool
}
