// Package feature holds the features beside the metric registry — rate limits, turns and
// cache hits, the SLO, cost, the server's scrapes, GPU energy, the server's own clock, the
// client queue, agent sessions — as their outputs show them: each is one Feature value in its
// own file, its part of the summaries (JSON members, CSV columns, table lines and rows, each
// at its place), written in this package's vocabulary. Its figures are package stats'
// (an accumulator each, stats/features.go); export, report and ui walk All() as they walk the
// metric registry. docs/architecture.md says how to add one.
package feature

// All are the features, in CSV column order; within a slot, every output keeps this order.
func All() []Feature {
	return []Feature{rateLimitFeature(), turnsFeature(), sloFeature(), costFeature(), serverFeature(), gpuFeature(),
		serverTimingFeature(), queueFeature(), sessionsFeature()}
}
