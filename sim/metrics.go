package sim

import (
	"bytes"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// vllmFamilies are the families /metrics serves, named, typed and labelled as vLLM's V1 engine
// serves them (vllm/v1/metrics/loggers.py, PrometheusStatLogger): labels model_name (the
// served model) and engine ("0"; "1", "2", ... for further profiles serving the same model, as
// vLLM numbers its data-parallel engines). Python's client adds "_total" to counter names.
var vllmFamilies = []struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(State) float64
}{
	{vllmDesc("vllm:num_requests_running", "Number of requests in model execution batches."),
		prometheus.GaugeValue, func(st State) float64 { return float64(st.Running) }},
	{vllmDesc("vllm:num_requests_waiting", "Number of requests waiting to be processed."),
		prometheus.GaugeValue, func(st State) float64 { return float64(st.Waiting) }},
	{vllmDesc("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage."),
		prometheus.GaugeValue, func(st State) float64 { return st.KVCacheUsage }},
	{vllmDesc("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens."),
		prometheus.CounterValue, func(st State) float64 { return float64(st.PrefixQueries) }},
	{vllmDesc("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens."),
		prometheus.CounterValue, func(st State) float64 { return float64(st.PrefixHits) }},
	{vllmDesc("vllm:prompt_tokens_total", "Number of prefill tokens processed."),
		prometheus.CounterValue, func(st State) float64 { return float64(st.PromptTokens) }},
	{vllmDesc("vllm:generation_tokens_total", "Number of generation tokens processed."),
		prometheus.CounterValue, func(st State) float64 { return float64(st.GenerationTokens) }},
}

func vllmDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, []string{"model_name", "engine"}, nil)
}

// backendCollector reports the state of some endpoints' backends at each scrape: those it
// returns then (a schedule's profile joins the server's /metrics when first asked for).
type backendCollector func() []*endpoint

func (ec backendCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range vllmFamilies {
		ch <- f.desc
	}
}

func (ec backendCollector) Collect(ch chan<- prometheus.Metric) {
	for _, ep := range ec() {
		st := ep.backend.state()
		for _, f := range vllmFamilies {
			ch <- prometheus.MustNewConstMetric(f.desc, f.typ, f.value(st), ep.profile.Model, ep.engineLabel)
		}
	}
}

// metricsHandler serves a private registry in the Prometheus text format 0.0.4, the one vLLM's
// Python client serves (no content negotiation: vLLM offers no protobuf).
type metricsHandler struct {
	registry *prometheus.Registry
}

func newMetricsHandler(eps func() []*endpoint) (*metricsHandler, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(backendCollector(eps)); err != nil {
		return nil, err
	}
	return &metricsHandler{registry: reg}, nil
}

func (mh *metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "use GET", "invalid_request_error", "method_not_allowed")
		return
	}
	families, err := mh.registry.Gather()
	var body bytes.Buffer
	for _, mf := range families {
		if err == nil {
			_, err = expfmt.MetricFamilyToText(&body, mf)
		}
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "metrics: "+err.Error(), "server_error", nil)
		return
	}
	w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	_, _ = w.Write(body.Bytes())
}
