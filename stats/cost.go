package stats

import (
	"tokscope/config"
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

// costState is an endpoint's bill: its price (nil: none) and the tokens billed so far.
type costState struct {
	price                  *config.Price
	billPrompt, billOutput int64
}

func (c *costState) configure(ep *config.Endpoint) {
	if ep.Price != nil {
		p := *ep.Price
		c.price = &p
	}
}

func (c *costState) reset() { c.billPrompt, c.billOutput = 0, 0 }

// take bills the tokens of a finished non-warm-up background request.
func (c *costState) take(f *figures) {
	if !f.finished {
		return
	}
	c.billPrompt += int64(max(f.s.PromptTokens, 0))
	c.billOutput += int64(max(f.s.Tokens, 0))
}

func (c *costState) fill(st *EndpointStats, r readout) {
	if c.price == nil {
		return
	}
	p := *c.price
	cs := &CostStats{Price: p, PromptTokens: c.billPrompt, OutputTokens: c.billOutput}
	if p.PerGPUHour() {
		cs.USD = p.GPUHour * r.span.Hours()
	} else {
		cs.USD = (float64(c.billPrompt)*p.Input + float64(c.billOutput)*p.Output) / 1e6
	}
	if c.billOutput > 0 {
		cs.USDPerMTokOut = cs.USD / float64(c.billOutput) * 1e6
	}
	st.Cost = cs
}
