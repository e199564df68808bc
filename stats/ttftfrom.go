package stats

import "tokscope/probe"

// TTFTFrom is the instant the Aggregator's TTFT figures are measured to (WithTTFTFrom).
func (a *Aggregator) TTFTFrom() probe.TTFTFrom { return a.ttftFrom }
