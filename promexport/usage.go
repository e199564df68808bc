package promexport

import (
	"github.com/prometheus/client_golang/prometheus"

	"tokscope/metric"
	"tokscope/sample"
)

const (
	nameRequestTokens = "tokscope_request_tokens"
	labelTokenType    = "token_type"
)

// newUsage is the per-request token histogram: the counters say how many tokens a run
// moved, this says how they were spread over requests (a few long answers or many short
// ones), as gen_ai.client.token.usage does.
func newUsage() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    nameRequestTokens,
		Help:    "Tokens per ok request, by token_type: input (usage prompt_tokens, where the server reports it) and output (the request's final output-token count).",
		Buckets: metric.UsageBuckets,
	}, []string{labelEndpoint, labelModel, labelTokenType})
}

// observeUsage records an ok request's input and output tokens. A request without usage
// has no input count and adds no input observation, rather than a false zero.
func (e *Exporter) observeUsage(s *sample.Sample, name, model string) {
	if s.PromptTokens > 0 {
		e.usage.WithLabelValues(name, model, "input").Observe(float64(s.PromptTokens))
	}
	e.usage.WithLabelValues(name, model, "output").Observe(float64(max(s.Tokens, 0)))
}
