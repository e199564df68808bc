package otlpexport

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"tokscope/config"
)

// Attribute keys. The gen_ai.*, server.* and error.type keys are the OpenTelemetry
// semantic conventions'; tokscope.* are tokscope's own, for what the conventions do not name.
const (
	AttrOperation = "gen_ai.operation.name"
	AttrProvider  = "gen_ai.provider.name"
	AttrModel     = "gen_ai.request.model"
	AttrTokenType = "gen_ai.token.type"
	AttrAddress   = "server.address"
	AttrPort      = "server.port"
	AttrErrorType = "error.type"
	AttrEndpoint  = "tokscope.endpoint"
	AttrOutcome   = "tokscope.outcome"
	AttrSource    = "tokscope.token.source"
	AttrShard     = "tokscope.shard" // a resource attribute (Options.Shard), and a "shard" label's name
)

// metricName is how a Prometheus series of promexport is named over OTLP, with its unit.
// The GenAI conventions name four of tokscope's client-side measurements; the rest keep
// their names in OpenTelemetry form, chosen so that a collector exporting to Prometheus
// (which appends the unit and _total) gives back promexport's own names.
type metricName struct {
	otel, unit string
}

// otelNames maps promexport's names (the Prometheus side) to OTLP's. A series not listed
// (go_*, process_*) goes out as the bridge names it.
var otelNames = map[string]metricName{
	// "Time to receive the first chunk" of a streaming call, measured by the client: what
	// tokscope's TTFT is (to the first chunk with a token, or with --ttft-from first-event
	// to the first chunk of any kind, the convention's wording exactly).
	"tokscope_time_to_first_token_seconds": {"gen_ai.client.operation.time_to_first_chunk", "s"},
	// "Time per output chunk, recorded for each chunk received after the first one": ITL.
	"tokscope_inter_chunk_latency_seconds": {"gen_ai.client.operation.time_per_output_chunk", "s"},
	// "GenAI operation duration": the request's e2e (ok requests only, so no error.type).
	"tokscope_e2e_request_latency_seconds": {"gen_ai.client.operation.duration", "s"},
	// "Number of input and output tokens used", per request, by gen_ai.token.type.
	"tokscope_request_tokens": {"gen_ai.client.token.usage", "{token}"},

	"tokscope_time_to_first_byte_seconds":    {"tokscope.time_to_first_byte", "s"},
	"tokscope_time_per_output_token_seconds": {"tokscope.time_per_output_token", "s"},
	"tokscope_generation_tokens_total":       {"tokscope.generation_tokens", "{token}"},
	"tokscope_prompt_tokens_total":           {"tokscope.prompt_tokens", "{token}"},
	"tokscope_cached_prompt_tokens_total":    {"tokscope.cached_prompt_tokens", "{token}"},
	"tokscope_token_source_requests_total":   {"tokscope.token_source_requests", "{request}"},
	"tokscope_requests_total":                {"tokscope.requests", "{request}"},
	"tokscope_requests_in_flight":            {"tokscope.requests_in_flight", "{request}"},
}

// otelName is a promexport series' OTLP name: otelNames' when listed; otherwise any
// tokscope_* series (e.g. a histogram a new registered metric brings, metric.Metric.Prom) in
// OpenTelemetry form by the same rule the listed ones follow: tokscope.<rest>, the unit
// suffix (_seconds, _total) taken off into the unit, so that a collector exporting to
// Prometheus gives back promexport's name. Other series (go_*, process_*) are not renamed.
func otelName(prom string) (metricName, bool) {
	if n, ok := otelNames[prom]; ok {
		return n, true
	}
	rest, ok := strings.CutPrefix(prom, "tokscope_")
	if !ok {
		return metricName{}, false
	}
	unit := "1"
	switch {
	case strings.HasSuffix(rest, "_seconds"):
		rest, unit = strings.TrimSuffix(rest, "_seconds"), "s"
	case strings.HasSuffix(rest, "_tokens"), strings.HasSuffix(rest, "_tokens_total"):
		rest, unit = strings.TrimSuffix(rest, "_total"), "{token}"
	default:
		rest = strings.TrimSuffix(rest, "_total")
	}
	return metricName{otel: "tokscope." + rest, unit: unit}, true
}

// otelLabels maps promexport's label names to attribute keys; other labels keep their name.
var otelLabels = map[string]string{
	"endpoint":   AttrEndpoint,
	"model":      AttrModel,
	"outcome":    AttrOutcome,
	"error_type": AttrErrorType,
	"source":     AttrSource,
	"token_type": AttrTokenType,
	"shard":      AttrShard, // when promexport labels series by --shard
}

// server is what the conventions want to know of an endpoint beyond its model.
type server struct {
	address  string
	port     int
	provider string
}

// genAIProducer renames the bridge's series (otelNames, otelLabels), drops empty labels
// (Prometheus' "no value") and adds to every series of an endpoint the attributes the
// conventions require: gen_ai.operation.name (tokscope sends chat completions),
// gen_ai.provider.name, server.address and server.port.
type genAIProducer struct {
	inner   sdkmetric.Producer
	servers map[string]server // by endpoint name
}

func newGenAIProducer(inner sdkmetric.Producer, eps []config.Endpoint) *genAIProducer {
	p := &genAIProducer{inner: inner, servers: make(map[string]server, len(eps))}
	for _, ep := range eps {
		p.servers[ep.Name] = serverOf(ep.BaseURL)
	}
	return p
}

func (p *genAIProducer) Produce(ctx context.Context) ([]metricdata.ScopeMetrics, error) {
	scopes, err := p.inner.Produce(ctx)
	for i := range scopes {
		for j := range scopes[i].Metrics {
			p.rename(&scopes[i].Metrics[j])
		}
	}
	return scopes, err
}

func (p *genAIProducer) rename(m *metricdata.Metrics) {
	if n, ok := otelName(m.Name); ok {
		m.Name, m.Unit = n.otel, n.unit
	}
	switch d := m.Data.(type) {
	case metricdata.Histogram[float64]:
		for i := range d.DataPoints {
			d.DataPoints[i].Attributes = p.attributes(d.DataPoints[i].Attributes)
		}
	case metricdata.Sum[float64]:
		for i := range d.DataPoints {
			d.DataPoints[i].Attributes = p.attributes(d.DataPoints[i].Attributes)
		}
	case metricdata.Gauge[float64]:
		for i := range d.DataPoints {
			d.DataPoints[i].Attributes = p.attributes(d.DataPoints[i].Attributes)
		}
	}
}

// attributes renames one series' labels and adds its endpoint's server attributes.
func (p *genAIProducer) attributes(set attribute.Set) attribute.Set {
	kvs := make([]attribute.KeyValue, 0, set.Len()+4)
	endpoint, hasEndpoint := "", false
	for it := set.Iter(); it.Next(); {
		kv := it.Attribute()
		if kv.Value.Type() == attribute.STRING && kv.Value.AsString() == "" {
			continue
		}
		if k, ok := otelLabels[string(kv.Key)]; ok {
			kv.Key = attribute.Key(k)
		}
		if kv.Key == AttrEndpoint {
			endpoint, hasEndpoint = kv.Value.AsString(), true
		}
		kvs = append(kvs, kv)
	}
	if hasEndpoint {
		s, ok := p.servers[endpoint]
		kvs = append(kvs, attribute.String(AttrOperation, "chat"), attribute.String(AttrProvider, s.providerName()))
		if ok && s.address != "" {
			kvs = append(kvs, attribute.String(AttrAddress, s.address), attribute.Int(AttrPort, s.port))
		}
	}
	return attribute.NewSet(kvs...)
}

// serverOf takes the host and port of a base URL (never its user information or path).
func serverOf(baseURL string) server {
	u, err := url.Parse(baseURL)
	if err != nil || u.Hostname() == "" {
		return server{}
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 80
		if u.Scheme == "https" {
			port = 443
		}
	}
	host := strings.ToLower(u.Hostname())
	return server{address: host, port: port, provider: providerOf(host)}
}

// providers are the conventions' well-known gen_ai.provider.name values, by API host.
var providers = []struct{ suffix, name string }{
	{"api.openai.com", "openai"},
	{".openai.azure.com", "azure.ai.openai"},
	{"api.anthropic.com", "anthropic"},
	{"api.groq.com", "groq"},
	{"api.deepseek.com", "deepseek"},
	{"api.mistral.ai", "mistral_ai"},
	{"api.x.ai", "x_ai"},
	{"api.perplexity.ai", "perplexity"},
	{"api.moonshot.ai", "moonshot_ai"},
	{"generativelanguage.googleapis.com", "gcp.gemini"},
	{"aiplatform.googleapis.com", "gcp.vertex_ai"},
}

func providerOf(host string) string {
	for _, p := range providers {
		if host == p.suffix || strings.HasSuffix(host, "."+strings.TrimPrefix(p.suffix, ".")) {
			return p.name
		}
	}
	return ""
}

// providerName is the provider, or "openai" for any other server: the conventions call the
// attribute the "telemetry format flavor" set to the instrumentation's best knowledge, and
// every server tokscope measures speaks the OpenAI Chat Completions API (vLLM, SGLang,
// llama.cpp, Ollama, a gateway).
func (s server) providerName() string {
	if s.provider != "" {
		return s.provider
	}
	return "openai"
}
