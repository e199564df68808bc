package promexport

import (
	"github.com/prometheus/client_golang/prometheus"

	"tokscope/sample"
	"tokscope/stats"
)

// Agent sessions (--sessions): counters of the session turns that finished (warm-ups and the
// turns the end of the run cut excluded, as the JSON "sessions" block counts them), so that
// rate(tokscope_session_ideal_cached_tokens_total) / rate(tokscope_session_offline_prompt_tokens_total)
// is the ideal cache-hit rate over any window, beside the served one
// (tokscope_cache_hit_cached_tokens_total over tokscope_cache_hit_prompt_tokens_total, turns.go),
// and the overflow share is tokscope_session_overflow_turns_total over the turns' sum.
// Absent from a run without sessions: the series are created at a session's first turn.

type sessionMetrics struct {
	turns, ideal, prompt, overflow *prometheus.CounterVec
}

func newSessionMetrics(reg prometheus.Registerer) *sessionMetrics {
	labels := []string{labelEndpoint, labelModel}
	s := &sessionMetrics{
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokscope_session_turns_total",
			Help: "Finished turns of agent sessions (--sessions), sub-agents' included, by outcome (ok, truncated, error)."},
			[]string{labelEndpoint, labelModel, labelOutcome}),
		ideal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokscope_session_ideal_cached_tokens_total",
			Help: "Prompt tokens (offline tokenizer) of finished session turns that a perfect prefix cache would have served."}, labels),
		prompt: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokscope_session_offline_prompt_tokens_total",
			Help: "Prompt tokens (offline tokenizer) of finished session turns: the ideal cache-hit rate's denominator."}, labels),
		overflow: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokscope_session_overflow_turns_total",
			Help: "Finished session turns that overflowed the model's context: refused for their length, or cut by it."}, labels),
	}
	reg.MustRegister(s.turns, s.ideal, s.prompt, s.overflow)
	return s
}

// zero creates nothing: a run without sessions has none of these series.
func (m *sessionMetrics) zero(string, string) {}

// observe adds a finished, not cut, request; nothing outside sessions. Every series of an
// endpoint is created at its first turn, so that a rate over them reads 0 rather than nothing.
func (m *sessionMetrics) observe(s *sample.Sample, name, model, outcome string) {
	st := s.Session
	if st == nil {
		return
	}
	m.turns.WithLabelValues(name, model, outcome).Inc()
	m.ideal.WithLabelValues(name, model).Add(float64(st.IdealCached))
	m.prompt.WithLabelValues(name, model).Add(float64(st.PromptTokens))
	over := m.overflow.WithLabelValues(name, model)
	if stats.Overflowed(s) {
		over.Inc()
	}
}
