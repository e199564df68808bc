package stats

import "tokscope/sample"

// TTFTFrom is the instant the Aggregator's TTFT figures are measured to (WithTTFTFrom).
func (a *Aggregator) TTFTFrom() sample.TTFTFrom { return a.ttftFrom }
