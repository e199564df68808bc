package stats

import "tokscope/probe"

// SetTTFTFrom chooses the instant TTFT figures (distributions, History, LastTTFT) are
// measured to; the default is first-token. Only TTFT changes: decode tok/s and TPOT keep
// first_token as their start, and the TTFB/TTFA/TTFEvent figures keep their own definitions.
// Call it before the first Add: a change mid-run would mix definitions in one aggregate.
func (a *Aggregator) SetTTFTFrom(f probe.TTFTFrom) { a.ttftFrom = f }
