package ui

import (
	"tokscope/config"
	"tokscope/probe"
	"tokscope/stats"
)

// newStatistics is the one place that names the Aggregator's constructor.
func newStatistics(eps []config.Endpoint, ttftFrom probe.TTFTFrom, sloTarget float64) statistics {
	a := stats.New(eps)
	a.SetTTFTFrom(ttftFrom)
	a.SetSLOTarget(sloTarget)
	return a
}
