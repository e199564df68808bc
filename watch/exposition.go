package watch

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"tokscope/servermetrics"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Kind is the server family a target was recognised as.
type Kind string

const (
	KindVLLM     Kind = "vllm"
	KindSGLang   Kind = "sglang"
	KindLlamaCpp Kind = "llamacpp"
	KindTGI      Kind = "tgi"
	KindOllama   Kind = "ollama"
)

// ModelInstant is what one scrape says about one model of a server: gauges as they read,
// counters and histograms cumulative (the Fleet differentiates them over its window). A
// figure the server does not export is absent from its map.
type ModelInstant struct {
	Model    string             `json:"model,omitempty"`
	Gauges   map[string]float64 `json:"gauges,omitempty"`
	Counters map[string]float64 `json:"counters,omitempty"`
	Hists    map[string]Hist    `json:"hists,omitempty"`
}

// The figures read from an exposition, by key. Gauges: running, waiting, kv (0–1),
// hit_gauge (0–1), spec_gauge (0–1). Counters: gen and prompt tokens, prefix hits and
// queries (tokens), preemptions, speculative tokens accepted and drafted. Histograms (s):
// ttft, itl, queue, e2e.
const (
	gRunning, gWaiting, gKV, gHitRate, gSpecRate = "running", "waiting", "kv", "hit_gauge", "spec_gauge"
	cGen, cPrompt, cHits, cQueries, cPreempt     = "gen", "prompt", "hits", "queries", "preemptions"
	cSpecAccepted, cSpecDrafted                  = "spec_accepted", "spec_drafted"
	hTTFT, hITL, hQueue, hE2E                    = "ttft", "itl", "queue", "e2e"
)

// read names, for one figure, the families that carry it, first present wins; where holds a
// label=value a series must have (SGLang's realtime_tokens_total{mode="decode"}); mean
// averages series instead of summing them (KV use across data-parallel engines).
type read struct {
	key      string
	families []string
	where    [2]string
	mean     bool
}

// familyReads is, per server family, which exposition family gives which figure. Names were
// checked against each server's source (servermetrics/testdata/SOURCES.md) and the captures
// in testdata.
var familyReads = map[Kind]struct {
	anchor                  string
	gauges, counters, hists []read
}{
	KindVLLM: {
		anchor: "vllm:num_requests_running",
		gauges: []read{
			{key: gRunning, families: []string{"vllm:num_requests_running"}},
			{key: gWaiting, families: []string{"vllm:num_requests_waiting"}},
			{key: gKV, families: []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}, mean: true},
			{key: gHitRate, families: []string{"vllm:gpu_prefix_cache_hit_rate"}, mean: true},
		},
		counters: []read{
			{key: cGen, families: []string{"vllm:generation_tokens_total"}},
			{key: cPrompt, families: []string{"vllm:prompt_tokens_total"}},
			{key: cHits, families: []string{"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"}},
			{key: cQueries, families: []string{"vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"}},
			{key: cPreempt, families: []string{"vllm:num_preemptions_total"}},
			{key: cSpecAccepted, families: []string{"vllm:spec_decode_num_accepted_tokens_total"}},
			{key: cSpecDrafted, families: []string{"vllm:spec_decode_num_draft_tokens_total"}},
		},
		hists: []read{
			{key: hTTFT, families: []string{"vllm:time_to_first_token_seconds"}},
			{key: hITL, families: []string{"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"}},
			{key: hQueue, families: []string{"vllm:request_queue_time_seconds"}},
			{key: hE2E, families: []string{"vllm:e2e_request_latency_seconds"}},
		},
	},
	KindSGLang: {
		anchor: "sglang:num_running_reqs",
		gauges: []read{
			{key: gRunning, families: []string{"sglang:num_running_reqs"}},
			{key: gWaiting, families: []string{"sglang:num_queue_reqs"}},
			{key: gKV, families: []string{"sglang:token_usage"}, mean: true},
			{key: gHitRate, families: []string{"sglang:cache_hit_rate"}, mean: true},
			{key: gSpecRate, families: []string{"sglang:spec_accept_rate"}, mean: true},
		},
		counters: []read{
			{key: cGen, families: []string{"sglang:realtime_tokens_total"}, where: [2]string{"mode", "decode"}},
			{key: cGen, families: []string{"sglang:generation_tokens_total"}},
			{key: cPrompt, families: []string{"sglang:prompt_tokens_total"}},
		},
		hists: []read{
			{key: hTTFT, families: []string{"sglang:time_to_first_token_seconds"}},
			{key: hITL, families: []string{"sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"}},
			{key: hQueue, families: []string{"sglang:queue_time_seconds"}},
			{key: hE2E, families: []string{"sglang:e2e_request_latency_seconds"}},
		},
	},
	KindLlamaCpp: {
		anchor: "llamacpp:requests_processing",
		gauges: []read{
			{key: gRunning, families: []string{"llamacpp:requests_processing"}},
			{key: gWaiting, families: []string{"llamacpp:requests_deferred"}},
			{key: gKV, families: []string{"llamacpp:kv_cache_usage_ratio"}, mean: true},
		},
		counters: []read{
			// Rises when a request ends; the Fleet adds the busy slots' n_decoded (/slots).
			{key: cGen, families: []string{"llamacpp:tokens_predicted_total"}},
			// prompt_tokens_total excludes cached tokens: queries = processed + cached.
			{key: cPrompt, families: []string{"llamacpp:prompt_tokens_total"}},
			{key: cHits, families: []string{"llamacpp:prompt_tokens_cached_total"}},
			{key: cSpecAccepted, families: []string{"llamacpp:spec_decode_num_accepted_tokens_total"}},
			{key: cSpecDrafted, families: []string{"llamacpp:spec_decode_num_draft_tokens_total"}},
		},
	},
	KindTGI: {
		anchor: "tgi_batch_current_size",
		gauges: []read{
			{key: gRunning, families: []string{"tgi_batch_current_size"}},
			{key: gWaiting, families: []string{"tgi_queue_size"}},
		},
		counters: []read{
			{key: cGen, families: []string{"tgi_request_generated_tokens"}}, // histogram _sum
			{key: cPrompt, families: []string{"tgi_request_input_length"}},
		},
		hists: []read{
			{key: hITL, families: []string{"tgi_request_mean_time_per_token_duration"}},
			{key: hQueue, families: []string{"tgi_request_queue_duration"}},
			{key: hE2E, families: []string{"tgi_request_duration"}},
		},
	},
}

// kindOrder is the order in which families are tried: the first whose anchor is present wins.
var kindOrder = []Kind{KindVLLM, KindSGLang, KindLlamaCpp, KindTGI}

// modelLabels name the served model; SGLang called it "name" before "model_name".
var modelLabels = []string{"model_name", "name"}

// rankLabels mark replicas of one tensor/pipeline-parallel group: only rank 0 speaks for it.
var rankLabels = []string{"tp_rank", "pp_rank", "attn_tp_rank", "moe_ep_rank"}

// parseExposition reads a Prometheus text exposition with the library's parser. A body that
// is not one (an HTML page, JSON, garbage) is an error saying so, never an empty reading.
func parseExposition(body []byte, contentType string) (map[string]*dto.MetricFamily, error) {
	trimmed := bytes.TrimSpace(body)
	switch {
	case strings.Contains(contentType, "html") || bytes.HasPrefix(trimmed, []byte("<")):
		return nil, fmt.Errorf("answered HTML, not Prometheus metrics")
	case bytes.HasPrefix(trimmed, []byte("{")) || bytes.HasPrefix(trimmed, []byte("[")):
		return nil, fmt.Errorf("answered JSON, not Prometheus metrics")
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		msg := err.Error()
		if len(msg) > 120 {
			msg = msg[:119] + "…"
		}
		return nil, fmt.Errorf("unreadable metrics: %s", msg)
	}
	return fams, nil
}

// detectKind recognises the server family of an exposition.
func detectKind(fams map[string]*dto.MetricFamily) (Kind, bool) {
	for _, k := range kindOrder {
		if _, ok := fams[familyReads[k].anchor]; ok {
			return k, true
		}
	}
	return "", false
}

// extractModels reads every model's figures from an exposition of a server of kind k. A
// server whose series carry no model label, or one value of it, is one model.
func extractModels(fams map[string]*dto.MetricFamily, k Kind) []ModelInstant {
	spec := familyReads[k]
	label, models := "", []string{""}
	for _, l := range modelLabels {
		var values []string
		for _, m := range fams[spec.anchor].GetMetric() {
			if v, ok := labelOf(m, l); ok && !contains(values, v) {
				values = append(values, v)
			}
		}
		if len(values) > 0 {
			sort.Strings(values)
			label, models = l, values
			break
		}
	}
	out := make([]ModelInstant, 0, len(models))
	for _, name := range models {
		s := selector{label: label, model: name}
		mi := ModelInstant{Model: name, Gauges: map[string]float64{}, Counters: map[string]float64{}, Hists: map[string]Hist{}}
		for _, r := range spec.gauges {
			if _, done := mi.Gauges[r.key]; !done {
				if v, ok := s.scalar(fams, r); ok {
					mi.Gauges[r.key] = v
				}
			}
		}
		for _, r := range spec.counters {
			if _, done := mi.Counters[r.key]; !done {
				if v, ok := s.scalar(fams, r); ok {
					mi.Counters[r.key] = v
				}
			}
		}
		for _, r := range spec.hists {
			if _, done := mi.Hists[r.key]; !done {
				if h, ok := s.hist(fams, r); ok {
					mi.Hists[r.key] = h
				}
			}
		}
		if k == KindLlamaCpp { // queried = processed + cached
			if hits, ok := mi.Counters[cHits]; ok {
				if p, ok := mi.Counters[cPrompt]; ok {
					mi.Counters[cQueries] = hits + p
				}
			}
		}
		out = append(out, mi)
	}
	return out
}

// selector picks one model's series (and rank 0 of a parallel group).
type selector struct{ label, model string }

func (s selector) keep(m *dto.Metric, where [2]string) bool {
	if s.label != "" {
		if v, ok := labelOf(m, s.label); ok && v != s.model {
			return false
		}
	}
	for _, r := range rankLabels {
		if v, ok := labelOf(m, r); ok && v != "0" {
			return false
		}
	}
	if where[0] != "" {
		if v, _ := labelOf(m, where[0]); v != where[1] {
			return false
		}
	}
	return true
}

// family returns the first of r's families present, with or without a "_total" suffix
// (the parser keys a counter by the name on its TYPE line).
func family(fams map[string]*dto.MetricFamily, r read) *dto.MetricFamily {
	for _, n := range r.families {
		if f, ok := fams[n]; ok {
			return f
		}
		if base, ok := strings.CutSuffix(n, "_total"); ok {
			if f, ok := fams[base]; ok {
				return f
			}
		}
	}
	return nil
}

// scalar sums (or averages) the selected series of r's family: gauges, counters, untyped
// samples, or a histogram's running sum (TGI's token counts). NaN and ±Inf are never figures.
func (s selector) scalar(fams map[string]*dto.MetricFamily, r read) (float64, bool) {
	f := family(fams, r)
	var sum float64
	n := 0
	for _, m := range f.GetMetric() {
		if !s.keep(m, r.where) {
			continue
		}
		v, ok := servermetrics.Scalar(m)
		if !ok {
			continue
		}
		sum += v
		n++
	}
	if n == 0 {
		return 0, false
	}
	if r.mean {
		sum /= float64(n)
	}
	return sum, true
}

// hist sums the selected series of a histogram family bucket by bucket (sum by (le)).
func (s selector) hist(fams map[string]*dto.MetricFamily, r read) (Hist, bool) {
	f := family(fams, r)
	var total Hist
	found := false
	for _, m := range f.GetMetric() {
		if m.Histogram == nil || !s.keep(m, r.where) {
			continue
		}
		h := histOf(m.GetHistogram())
		sum, ok := total.add(h)
		if !ok {
			return Hist{}, false // series with different buckets: no sum to take
		}
		total, found = sum, true
	}
	return total, found
}

func histOf(h *dto.Histogram) Hist {
	out := Hist{Count: float64(h.GetSampleCount()), Sum: h.GetSampleSum()}
	if h.SampleCountFloat != nil {
		out.Count = h.GetSampleCountFloat()
	}
	for _, b := range h.GetBucket() {
		if math.IsInf(b.GetUpperBound(), 1) {
			continue
		}
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		out.Bounds = append(out.Bounds, b.GetUpperBound())
		out.Cum = append(out.Cum, c)
	}
	return out
}

func labelOf(m *dto.Metric, name string) (string, bool) {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue(), true
		}
	}
	return "", false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ParseInstant reads a Prometheus exposition as one good scrape of target at at: what a
// replay, a test or another tool holding a scrape body needs to feed a Fleet.
func ParseInstant(target string, at time.Time, body []byte) (Instant, error) {
	fams, err := parseExposition(body, "")
	if err != nil {
		return Instant{}, err
	}
	k, ok := detectKind(fams)
	if !ok {
		return Instant{}, fmt.Errorf("not recognised: no vllm:, sglang:, llamacpp: or tgi_ families")
	}
	return Instant{Target: target, At: at, Kind: k, Models: extractModels(fams, k)}, nil
}
