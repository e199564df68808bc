package servermetrics

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// instant is what one exposition says about one endpoint, before counters become rates.
// Counters are cumulative values; the tracker differentiates them.
type instant struct {
	kind                 Kind
	running, waiting, kv Value
	hitGauge             Value // a hit-rate gauge, 0–1
	hits, queries        Value // cumulative prefix-cache counters (tokens)
	gen                  Value // cumulative generation tokens
	genLive              bool  // gen rises while tokens stream
	genGauge             Value // a throughput gauge (tok/s), used when gen is absent
}

// parse reads a Prometheus text exposition with the library's parser (never by hand). Metric
// names of every server here (vllm:…, sglang:…) are valid in the legacy scheme, but UTF-8
// validation accepts whatever else a server adds, so an odd family elsewhere cannot make the
// whole scrape unreadable.
func parse(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
}

// Families that identify each server, first match wins: each server's "requests running"
// gauge, the one figure every version of it exposes.
var anchors = []struct {
	kind   Kind
	family string
}{
	{KindVLLM, "vllm:num_requests_running"},
	{KindSGLang, "sglang:num_running_reqs"},
	{KindLlamaCpp, "llamacpp:requests_processing"},
	{KindTGI, "tgi_batch_current_size"},
	{KindTGI, "tgi_queue_size"},
}

// detect recognises the server family of an exposition.
func detect(fams map[string]*dto.MetricFamily) (Kind, bool) {
	for _, a := range anchors {
		if _, ok := fams[a.family]; ok {
			return a.kind, true
		}
	}
	return "", false
}

// modelLabels are the labels that name the served model, per family. SGLang named it "name"
// before it became "model_name".
var modelLabels = map[Kind][]string{
	KindVLLM:   {"model_name"},
	KindSGLang: {"model_name", "name"},
}

// rankLabels mark replicas of one tensor/pipeline-parallel group: only rank 0 (or a series
// without the label) speaks for the group, else running requests would count once per GPU.
// Data-parallel replicas (vLLM "engine", SGLang "dp_rank") are distinct and are summed.
var rankLabels = []string{"tp_rank", "pp_rank", "attn_tp_rank", "moe_ep_rank"}

// view is an exposition narrowed to one endpoint's series.
type view struct {
	fams       map[string]*dto.MetricFamily
	modelLabel string // "" = no model filter
	model      string
}

// newView narrows fams to the endpoint's model where the server labels series by model. The
// anchor family decides: the endpoint's model among its label values selects those series; a
// single value is taken whatever its name (a server serves one model, and the label may hold
// a path while clients use an alias); several values none of which is the model leave nothing
// to show, and note says so.
func newView(fams map[string]*dto.MetricFamily, kind Kind, anchor, model string) (v view, note string) {
	v = view{fams: fams}
	fam := fams[anchor]
	for _, label := range modelLabels[kind] {
		var values []string
		for _, m := range fam.GetMetric() {
			if val, ok := labelValue(m, label); ok && !slices.Contains(values, val) {
				values = append(values, val)
			}
		}
		switch {
		case len(values) == 0:
			continue
		case slices.Contains(values, model):
			v.modelLabel, v.model = label, model
		case len(values) == 1:
		default:
			sort.Strings(values)
			list := strings.Join(values, ", ")
			if len(list) > 80 {
				list = list[:77] + "…"
			}
			return v, fmt.Sprintf("no series for model %q (the server lists %s)", shorten(model, 40), list)
		}
		return v, ""
	}
	return v, ""
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

func labelValue(m *dto.Metric, name string) (string, bool) {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue(), true
		}
	}
	return "", false
}

// keep reports whether a series belongs to the endpoint: its model (when the view filters
// by one) and rank 0 of a parallel group.
func (v view) keep(m *dto.Metric) bool {
	if v.modelLabel != "" {
		if val, ok := labelValue(m, v.modelLabel); ok && val != v.model {
			return false
		}
	}
	for _, r := range rankLabels {
		if val, ok := labelValue(m, r); ok && val != "0" {
			return false
		}
	}
	return true
}

// Scalar is the value of a gauge, counter or untyped sample, or a histogram's running sum;
// false for other types and for NaN or ±Inf, which are never passed on. watch reads its
// figures with it too.
func Scalar(m *dto.Metric) (float64, bool) {
	var v float64
	switch {
	case m.Gauge != nil:
		v = m.GetGauge().GetValue()
	case m.Counter != nil:
		v = m.GetCounter().GetValue()
	case m.Untyped != nil:
		v = m.GetUntyped().GetValue()
	case m.Histogram != nil:
		v = m.GetHistogram().GetSampleSum() // the running total of the observed values
	default:
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// family returns the first of names present. A counter may be keyed with or without its
// "_total" suffix depending on how the server wrote its TYPE line, so both are tried.
func (v view) family(names ...string) *dto.MetricFamily {
	for _, n := range names {
		if f, ok := v.fams[n]; ok {
			return f
		}
		if base, ok := strings.CutSuffix(n, "_total"); ok {
			if f, ok := v.fams[base]; ok {
				return f
			}
		}
	}
	return nil
}

// aggregate sums (or averages) the endpoint's series of the first family present among
// names whose labels match all of where (name=value pairs).
func (v view) aggregate(mean bool, where []string, names ...string) Value {
	f := v.family(names...)
	if f == nil {
		return Value{}
	}
	var sum float64
	n := 0
series:
	for _, m := range f.GetMetric() {
		if !v.keep(m) {
			continue
		}
		for i := 0; i+1 < len(where); i += 2 {
			if val, _ := labelValue(m, where[i]); val != where[i+1] {
				continue series
			}
		}
		if x, ok := Scalar(m); ok {
			sum += x
			n++
		}
	}
	if n == 0 {
		return Value{}
	}
	if mean {
		sum /= float64(n)
	}
	return some(sum)
}

func (v view) sum(names ...string) Value  { return v.aggregate(false, nil, names...) }
func (v view) mean(names ...string) Value { return v.aggregate(true, nil, names...) }

// ratio keeps a 0–1 figure only when it is one: vLLM V0 writes -1 for a disabled prefix cache.
func ratio(x Value) Value {
	if !x.OK || x.V < 0 {
		return Value{}
	}
	return some(min(x.V, 1))
}

// extract reads one endpoint's figures from a parsed exposition. ok is false when the
// exposition holds no family tokscope knows, or none for this endpoint's model; note then
// says which.
func extract(fams map[string]*dto.MetricFamily, endpointModel string) (in instant, note string, ok bool) {
	kind, found := detect(fams)
	if !found {
		return in, "not recognised (no vllm:, sglang:, llamacpp: or tgi_ families)", false
	}
	anchor := ""
	for _, a := range anchors {
		if a.kind == kind {
			if _, present := fams[a.family]; present {
				anchor = a.family
				break
			}
		}
	}
	v, note := newView(fams, kind, anchor, endpointModel)
	if note != "" {
		return in, note, false
	}
	in.kind = kind
	switch kind {
	case KindVLLM:
		in.running = v.sum("vllm:num_requests_running")
		in.waiting = v.sum("vllm:num_requests_waiting")
		// Renamed in 0.9: gpu_cache_usage_perc → kv_cache_usage_perc (both exported for a while).
		in.kv = ratio(v.mean("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"))
		// V1 counts queried and hit tokens (0.9 renamed gpu_prefix_cache_* → prefix_cache_*);
		// V0 had a hit-rate gauge.
		in.hits = v.sum("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total")
		in.queries = v.sum("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total")
		in.hitGauge = ratio(v.mean("vllm:gpu_prefix_cache_hit_rate"))
		in.gen, in.genLive = v.sum("vllm:generation_tokens_total"), true // counted per engine step
		in.genGauge = v.sum("vllm:avg_generation_throughput_toks_per_s")
	case KindSGLang:
		in.running = v.sum("sglang:num_running_reqs")
		in.waiting = v.sum("sglang:num_queue_reqs")
		in.kv = ratio(v.mean("sglang:token_usage"))
		in.hitGauge = ratio(v.mean("sglang:cache_hit_rate"))
		// realtime_tokens_total{mode="decode"} rises every log interval while requests run;
		// generation_tokens_total only when a request finishes; gen_throughput is the
		// scheduler's own decode rate of its last interval.
		if rt := v.aggregate(false, []string{"mode", "decode"}, "sglang:realtime_tokens_total"); rt.OK {
			in.gen, in.genLive = rt, true
		} else {
			in.gen = v.sum("sglang:generation_tokens_total")
		}
		in.genGauge = v.sum("sglang:gen_throughput")
	case KindLlamaCpp:
		in.running = v.sum("llamacpp:requests_processing")
		in.waiting = v.sum("llamacpp:requests_deferred")
		in.kv = ratio(v.mean("llamacpp:kv_cache_usage_ratio")) // older builds only
		// prompt_tokens_total excludes cached tokens: queried = processed + cached.
		if cached, processed := v.sum("llamacpp:prompt_tokens_cached_total"), v.sum("llamacpp:prompt_tokens_total"); cached.OK && processed.OK {
			in.hits, in.queries = cached, some(cached.V+processed.V)
		}
		in.gen = v.sum("llamacpp:tokens_predicted_total") // rises when a request ends; /slots adds the live part
	case KindTGI:
		in.running = v.sum("tgi_batch_current_size")
		in.waiting = v.sum("tgi_queue_size")
		in.gen = v.sum("tgi_request_generated_tokens") // histogram _sum, observed when a request ends
	}
	return in, "", true
}
