package promexport

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"tokscope/metric"
	"tokscope/sample"
)

// Conversations (--turns): the metrics split by turn (metric.SplitMetrics) as histograms with
// a "turn" label (metric.Splits: first, later), named tokscope_turn_<metric>, and the
// prompt-cache counters that the cache-hit rate is read from: tokscope_cache_hit_*_total
// count the cached and prompt tokens of the ok requests that reported both, so that
// rate(..._cached_tokens_total) / rate(..._prompt_tokens_total) is the summary's
// cache_hit_rate over any window.

const labelTurn = "turn"

// turnMetrics are the split histograms, by metric.SplitMetrics index.
type turnMetrics struct {
	hists          []*prometheus.HistogramVec
	cached, prompt *prometheus.CounterVec
}

// turnHistName is the split histogram of m: its Prometheus name with tokscope_turn_ for
// tokscope_, or tokscope_turn_<key> for a metric without a histogram of its own.
func turnHistName(m *metric.Metric) (string, []float64) {
	if m.Prom != nil {
		return "tokscope_turn_" + strings.TrimPrefix(m.Prom.Name, "tokscope_"), m.Prom.Buckets
	}
	return "tokscope_turn_" + m.Key, UsageBuckets
}

func newTurnMetrics(reg prometheus.Registerer) *turnMetrics {
	labels := []string{labelEndpoint, labelModel}
	t := &turnMetrics{
		cached: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokscope_cache_hit_cached_tokens_total",
			Help: "Cached prompt tokens of ok requests whose server reported both cached and prompt tokens."}, labels),
		prompt: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokscope_cache_hit_prompt_tokens_total",
			Help: "Prompt tokens of ok requests whose server reported both cached and prompt tokens (the cache-hit rate's denominator)."}, labels),
	}
	reg.MustRegister(t.cached, t.prompt)
	for _, id := range metric.SplitMetrics {
		m := metric.Get(id)
		name, buckets := turnHistName(m)
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Buckets: buckets,
			Help: m.Label + " of ok requests by turn of their conversation (--turns): first, or later."},
			[]string{labelEndpoint, labelModel, labelTurn})
		reg.MustRegister(h)
		t.hists = append(t.hists, h)
	}
	return t
}

// zero creates the series of an endpoint at zero.
func (t *turnMetrics) zero(name, model string) {
	t.cached.WithLabelValues(name, model)
	t.prompt.WithLabelValues(name, model)
}

// observe adds a counted request (sample.Sample.Counted).
func (t *turnMetrics) observe(s *sample.Sample, name, model, _ string) {
	if !s.Counted() {
		return
	}
	if cached, prompt, ok := metric.CacheHit(s); ok {
		t.cached.WithLabelValues(name, model).Add(float64(cached))
		t.prompt.WithLabelValues(name, model).Add(float64(prompt))
	}
	for _, sp := range metric.Splits {
		if !sp.Holds(s) {
			continue
		}
		for j, id := range metric.SplitMetrics {
			m, h := metric.Get(id), t.hists[j]
			m.Read(s, metric.Context{}, metric.AddFunc(func(v float64) {
				if v >= 0 {
					h.WithLabelValues(name, model, sp.Key).Observe(m.PromValue(v))
				}
			}))
		}
	}
}
