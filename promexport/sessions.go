package promexport

import (
	"github.com/prometheus/client_golang/prometheus"

	"tokscope/sample"
)

// Agent sessions (--sessions): counters of the ok session turns, so that
// rate(tokscope_session_ideal_cached_tokens_total) / rate(tokscope_session_offline_prompt_tokens_total)
// is the ideal cache-hit rate over any window, beside the served one
// (tokscope_cache_hit_cached_tokens_total over tokscope_cache_hit_prompt_tokens_total, turns.go).
// Absent from a run without sessions: the series are created at a session's first turn.

type sessionMetrics struct {
	turns, ideal, prompt *prometheus.CounterVec
}

func newSessionMetrics(reg prometheus.Registerer) *sessionMetrics {
	labels := []string{labelEndpoint, labelModel}
	s := &sessionMetrics{
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokscope_session_turns_total",
			Help: "Ok turns of agent sessions (--sessions), sub-agents' included."}, labels),
		ideal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokscope_session_ideal_cached_tokens_total",
			Help: "Prompt tokens (offline tokenizer) of ok session turns that a perfect prefix cache would have served."}, labels),
		prompt: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokscope_session_offline_prompt_tokens_total",
			Help: "Prompt tokens (offline tokenizer) of ok session turns: the ideal cache-hit rate's denominator."}, labels),
	}
	reg.MustRegister(s.turns, s.ideal, s.prompt)
	return s
}

// observe adds an ok request; nothing outside sessions.
func (m *sessionMetrics) observe(s *sample.Sample, name, model string) {
	st := s.Session
	if st == nil {
		return
	}
	m.turns.WithLabelValues(name, model).Inc()
	m.ideal.WithLabelValues(name, model).Add(float64(st.IdealCached))
	m.prompt.WithLabelValues(name, model).Add(float64(st.PromptTokens))
}
