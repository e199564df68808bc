package stats

import (
	"time"

	"tokscope/config"
	"tokscope/sample"
)

// Cost: the tokens of every finished non-warm-up background request are billed, whatever its
// outcome (a provider bills what it generated): prompt tokens from usage (a request without
// usage, such as a cut stream, adds its output tokens only), output tokens as counted. A
// gpu_hour price bills the run's wall time instead. USD per 1M output tokens divides either by
// the output tokens; for gpu_hour that is the price at the run's measured throughput
// (output tokens ÷ wall time). The wall time is the run's span (EndpointStats.RunSpan: the
// first t0 to the last finish), over which throughput is measured too.

// CostStats are an endpoint's cost figures; nil in EndpointStats when it has no price.
type CostStats struct {
	Price         config.Price
	USD           float64
	USDPerMTokOut float64 // meaningful only when OutputTokens > 0
	PromptTokens  int64   // billed prompt tokens (from usage)
	OutputTokens  int64   // billed output tokens
}

// addBill accounts for the tokens a finished non-warm-up background request is billed for.
func (e *endpoint) addBill(s *sample.Sample) {
	e.billPrompt += int64(max(s.PromptTokens, 0))
	e.billOutput += int64(max(s.Tokens, 0))
}

func (e *endpoint) costStats(wall time.Duration) *CostStats {
	if e.price == nil {
		return nil
	}
	p := *e.price
	c := &CostStats{Price: p, PromptTokens: e.billPrompt, OutputTokens: e.billOutput}
	if p.PerGPUHour() {
		c.USD = p.GPUHour * wall.Hours()
	} else {
		c.USD = (float64(e.billPrompt)*p.Input + float64(e.billOutput)*p.Output) / 1e6
	}
	if e.billOutput > 0 {
		c.USDPerMTokOut = c.USD / float64(e.billOutput) * 1e6
	}
	return c
}
