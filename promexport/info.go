package promexport

import (
	"github.com/prometheus/client_golang/prometheus"

	"tokscope/config"
)

// newInfo is tokscope_endpoint_info{endpoint, model, api} = 1: each endpoint's wire protocol
// as an info metric (Prometheus' idiom for a constant property), rather than an api label on
// every series, which would change every series' labels and every query of the dashboard.
// A query that wants the API joins on it:
//
//	rate(tokscope_generation_tokens_total[1m]) * on(endpoint, model) group_left(api) tokscope_endpoint_info
func newInfo() *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: nameInfo,
		Help: "Always 1: an endpoint tokscope measures, with the API it speaks (chat, completions, responses, anthropic, ollama) as a label.",
	}, []string{labelEndpoint, labelModel, labelAPI})
}

// apiLabel is an endpoint's API as the label names it: "" (an endpoint built without one) is
// chat, as the probe reads it.
func apiLabel(api string) string {
	if api == "" {
		return config.DefaultAPI
	}
	return safeLabel(api)
}
