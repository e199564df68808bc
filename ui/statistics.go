package ui

import (
	"tokscope/config"
	"tokscope/stats"
)

// newStatistics is the one place that names the Aggregator's constructor.
func newStatistics(eps []config.Endpoint) statistics { return stats.New(eps) }
