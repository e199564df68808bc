package ui

import (
	"tokscope/config"
	"tokscope/probe"
	"tokscope/stats"
)

// newStatistics is the one place that names the Aggregator's constructor.
func newStatistics(eps []config.Endpoint, ttftFrom probe.TTFTFrom) statistics {
	a := stats.New(eps)
	a.SetTTFTFrom(ttftFrom)
	return a
}
