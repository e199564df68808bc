// Package promexport owns tokscope's Prometheus exporter, for users who outgrow one machine: the
// same per-request measurements the terminal shows, as histograms and counters a Prometheus
// server can scrape from many tokscope instances and a Grafana dashboard can chart
// (grafana/tokscope-dashboard.json).
//
// Every metric lives on the Exporter's own prometheus.Registry, never on the global default
// one. The only labels are the endpoint name and the model (plus outcome and error_type on
// tokscope_requests_total, api on tokscope_endpoint_info): never a base URL, a key or a
// header, so nothing secret can reach an exposition.
//
// It reads config, metric and probe and must not import stats, export, ui, bubbletea or lipgloss.
package promexport

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"tokscope/config"
	"tokscope/metric"
	"tokscope/sample"
)

// Metric names. The dashboard test checks that every name the dashboard uses exists here.
const (
	nameTokens     = "tokscope_generation_tokens_total"
	namePrompt     = "tokscope_prompt_tokens_total"
	nameCached     = "tokscope_cached_prompt_tokens_total"
	nameSources    = "tokscope_token_source_requests_total"
	nameRequests   = "tokscope_requests_total"
	nameInFlight   = "tokscope_requests_in_flight"
	nameInfo       = "tokscope_endpoint_info"
	labelEndpoint  = "endpoint"
	labelModel     = "model"
	labelOutcome   = "outcome"
	labelErrorType = "error_type"
	labelSource    = "source"
	labelAPI       = "api"

	// outcomeCut labels requests cut by the end of the run (sample.Sample.Cut) in
	// tokscope_requests_total: not errors.
	outcomeCut = "cut"
)

// The names of the registered metrics' histograms (metric.Metric.Prom).
var (
	nameTTFT = metric.Get(metric.TTFT).Prom.Name
	nameTTFB = metric.Get(metric.TTFB).Prom.Name
	nameITL  = metric.Get(metric.ITL).Prom.Name
	nameTPOT = metric.Get(metric.TPOT).Prom.Name
	nameE2E  = metric.Get(metric.E2E).Prom.Name
)

// Bucket upper bounds, in seconds: the registry's (package metric), named here for readers
// of the exporter.
var (
	TTFTBuckets = metric.TTFTBuckets
	TTFBBuckets = metric.TTFBBuckets
	ITLBuckets  = metric.ITLBuckets
	TPOTBuckets = metric.TPOTBuckets
	E2EBuckets  = metric.E2EBuckets
)

// Exporter turns finished Samples into Prometheus metrics. All its methods are safe for
// concurrent use.
type Exporter struct {
	registry *prometheus.Registry
	reg      prometheus.Registerer // registers on registry, with the shard label when sharded (shard.go)
	handler  http.Handler

	// hists are the histograms of the registered metrics that have one (metric.Metric.Prom),
	// by metric.ID; nil for the others.
	hists          [metric.NumIDs]*prometheus.HistogramVec
	tokens         *prometheus.CounterVec
	prompt, cached *prometheus.CounterVec
	sources        *prometheus.CounterVec
	requests       *prometheus.CounterVec
	inFlight       *prometheus.GaugeVec
	info           *prometheus.GaugeVec     // 1 per endpoint, its API a label (info.go)
	usage          *prometheus.HistogramVec // tokens per request (usage.go)
	// families are the features' families beside the registry's: those package feature
	// describes (feature.Prom: turns and cache hits; features.go), agent sessions' ideal
	// cache (sessions.go).
	families []family

	models map[string]string // endpoint name → configured model, for the in-flight gauge
	byIdx  []config.Endpoint // the Runner's endpoints, in its order (Progress names them by index)

	mu   sync.Mutex
	open map[requestKey]int // requests Started and not yet Observed
	// Tokens counted live (Progress) per request in flight, until its Sample reconciles them,
	// and per endpoint the tokens counted that the finished requests did not have (estimates
	// above the usage, requests that failed): the counter cannot go down, so later tokens
	// pay that back before they count.
	liveTokens map[requestKey]float64
	owed       map[string]float64
}

type requestKey struct {
	endpoint string
	seq      uint64
}

// New builds an Exporter for the configured endpoints on a private registry. Every series of a
// configured endpoint is created at zero up front, so rate() and the dashboard work from the
// first scrape instead of after the first request. The registry also holds the Go runtime and
// process collectors: GC pauses and CPU starvation of tokscope itself bias every timestamp it
// takes, and go_* / process_* let a user rule that out.
func New(eps []config.Endpoint, opts ...Option) *Exporter {
	labels := []string{labelEndpoint, labelModel}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	e := &Exporter{
		registry: prometheus.NewRegistry(),
		prompt: counter(namePrompt,
			"Prompt tokens of ok requests, as the server counted them (usage prompt_tokens; requests without usage add nothing).",
			labels),
		cached: counter(nameCached,
			"Prompt tokens of ok requests that a server prefix cache served (usage prompt_tokens_details.cached_tokens, where the server reports it).",
			labels),
		tokens: counter(nameTokens,
			"Output tokens of ok requests, counted as their chunks arrive (estimated in flight without per-chunk usage) and reconciled with each request's final count. See tokscope_token_source_requests_total for where the counts came from.",
			labels),
		sources: counter(nameSources,
			"Ok requests by the source of their output-token count (usage, estimate, chunks); more than one source means token figures mix sources.",
			[]string{labelEndpoint, labelModel, labelSource}),
		requests: counter(nameRequests,
			"Finished requests (warm-ups excluded) by outcome (ok, truncated, error, or cut: still in flight when the run ended, not an error) and error type (empty unless outcome is error).",
			[]string{labelEndpoint, labelModel, labelOutcome, labelErrorType}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: nameInFlight,
			Help: "Requests sent and not yet finished, warm-ups included.",
		}, labels),
		info:       newInfo(),
		usage:      newUsage(),
		models:     make(map[string]string, len(eps)),
		byIdx:      append([]config.Endpoint(nil), eps...),
		open:       make(map[requestKey]int),
		liveTokens: make(map[requestKey]float64),
		owed:       make(map[string]float64),
	}
	e.reg = o.registerer(e.registry)
	for i := range metric.All {
		if p := metric.All[i].Prom; p != nil {
			e.hists[i] = prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Name: p.Name, Help: p.Help, Buckets: p.Buckets,
			}, labels)
			e.reg.MustRegister(e.hists[i])
		}
	}
	e.reg.MustRegister(e.tokens, e.prompt, e.cached, e.sources,
		e.requests, e.inFlight, e.info, e.usage,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	e.families = append(featureFamiliesOf(e.reg), newSessionMetrics(e.reg))

	for _, ep := range eps {
		name, model := safeLabel(ep.Name), safeLabel(ep.Model)
		e.models[ep.Name] = ep.Model
		for _, h := range e.hists {
			if h != nil {
				h.WithLabelValues(name, model)
			}
		}
		e.tokens.WithLabelValues(name, model)
		e.prompt.WithLabelValues(name, model)
		e.cached.WithLabelValues(name, model)
		for _, f := range e.families {
			f.zero(name, model)
		}
		e.requests.WithLabelValues(name, model, string(sample.OutcomeOK), "")
		e.requests.WithLabelValues(name, model, string(sample.OutcomeTruncated), "")
		e.inFlight.WithLabelValues(name, model).Set(0)
		e.info.WithLabelValues(name, model, apiLabel(ep.API)).Set(1)
	}

	e.handler = promhttp.HandlerFor(e.registry, promhttp.HandlerOpts{
		// A collector failing (e.g. /proc unreadable) must not hide the request metrics.
		ErrorHandling: promhttp.ContinueOnError,
	})
	return e
}

// counter is a counter vector named name, with its help text and labels.
func counter(name, help string, labels []string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// Registry is the Exporter's private registry (for tests and for embedding in another
// process's exposition).
func (e *Exporter) Registry() *prometheus.Registry { return e.registry }

// Handler serves the exposition of the Exporter's registry, on whatever path it is mounted.
func (e *Exporter) Handler() http.Handler { return e.handler }

// Started records that request seq of the named endpoint was sent (feed it sample.Started
// events, warm-ups included). The in-flight gauge counts requests by (endpoint, seq), so it
// cannot drift: the request leaves the gauge on its Sample (Observe, the Done event); a second
// Sample of it, or one without a start, changes nothing.
func (e *Exporter) Started(endpoint string, seq uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.open[requestKey{endpoint, seq}]++
	e.setInFlightLocked(endpoint)
}

// finished removes request seq of the named endpoint from the in-flight gauge, if it is there.
func (e *Exporter) finished(endpoint string, seq uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := requestKey{endpoint, seq}
	switch n := e.open[k]; {
	case n <= 0:
		return
	case n == 1:
		delete(e.open, k)
	default:
		e.open[k] = n - 1
	}
	e.setInFlightLocked(endpoint)
}

func (e *Exporter) setInFlightLocked(endpoint string) {
	n := 0
	for k, c := range e.open {
		if k.endpoint == endpoint {
			n += c
		}
	}
	e.inFlight.WithLabelValues(safeLabel(endpoint), safeLabel(e.models[endpoint])).Set(float64(n))
}

// Observe records one finished request. Warm-ups only leave the in-flight gauge. Every other
// request counts in tokscope_requests_total; latency, speed and token metrics take only ok
// requests (docs/metrics.md: errors and truncations count in error rates, never in speed figures):
// the tokens a request counted in flight (Progress) are reconciled with its final count.
func (e *Exporter) Observe(s *sample.Sample) {
	if s == nil {
		return
	}
	e.finished(s.Endpoint, s.Seq)
	if s.Warmup {
		return
	}
	e.reconcile(s)
	name, model := safeLabel(s.Endpoint), safeLabel(s.Model)
	if _, configured := e.models[s.Endpoint]; !configured { // New set the configured ones (models is only written there)
		e.info.WithLabelValues(name, model, apiLabel(s.API)).Set(1)
	}
	if s.Cut { // in flight when the run ended: not an error; a TTFT it had counts (docs/metrics.md)
		e.requests.WithLabelValues(name, model, outcomeCut, "").Inc()
		e.observeMetrics(s, name, model, true)
		return
	}
	outcome := string(s.Outcome)
	if outcome == "" {
		outcome = "unknown"
	}
	errorType := ""
	if s.Outcome == sample.OutcomeError {
		errorType = errorTypeLabel(s.ErrorKind)
	}
	e.requests.WithLabelValues(name, model, outcome, errorType).Inc()
	for _, f := range e.families {
		f.observe(s, name, model, outcome)
	}
	if !s.Counted() {
		return
	}

	e.observeMetrics(s, name, model, false)
	if s.PromptTokens > 0 {
		e.prompt.WithLabelValues(name, model).Add(float64(s.PromptTokens))
	}
	if s.CachedTokens > 0 {
		e.cached.WithLabelValues(name, model).Add(float64(s.CachedTokens))
	}
	source := string(s.Source)
	if source == "" {
		source = "unknown"
	}
	e.sources.WithLabelValues(name, model, safeLabel(source)).Inc()
	e.observeUsage(s, name, model)
}

// family is a feature's metric families beside the registry's: zero creates an endpoint's
// series at zero (New, for each configured endpoint); observe is given every finished request
// the run did not cut, warm-ups excluded, and takes what the feature counts.
type family interface {
	zero(name, model string)
	observe(s *sample.Sample, name, model, outcome string)
}

// observeMetrics observes every value of s in the histograms of the registered metrics (only
// those that count for a cut request when cut). TTFT is docs/metrics.md's, to the first token.
func (e *Exporter) observeMetrics(s *sample.Sample, name, model string, cut bool) {
	for i := range metric.All {
		m, h := &metric.All[i], e.hists[i]
		if h == nil || (cut && !m.ReadOnCut) {
			continue
		}
		var o prometheus.Observer
		m.Read(s, metric.Context{}, metric.AddFunc(func(v float64) {
			if v < 0 {
				return
			}
			if o == nil {
				o = h.WithLabelValues(name, model)
			}
			o.Observe(m.PromValue(v))
		}))
	}
}

// Progress counts the tokens of a request in flight as they arrive (feed it the run's
// Progress events): tokscope_generation_tokens_total then rises while tokens stream, and a
// rate() over it follows the true rate. Warm-ups and interactive requests are left out, as in
// Observe. Observe reconciles the request's count with its Sample.
func (e *Exporter) Progress(p *sample.Progress) {
	if p == nil || p.Warmup || p.Stream != 0 || !p.Endpoint.In(len(e.byIdx)) {
		return
	}
	ep := e.byIdx[p.Endpoint]
	e.mu.Lock()
	defer e.mu.Unlock()
	k := requestKey{ep.Name, p.Seq}
	if d := p.Tokens - e.liveTokens[k]; d > 0 {
		e.liveTokens[k] = p.Tokens
		e.countLocked(ep.Name, ep.Model, d)
	}
}

// reconcile settles a finished (non-warm-up) request's tokens: an ok request's final count
// replaces what was counted in flight (the difference is added, or owed when the estimate was
// above it); a request that did not end ok owes back everything it counted.
func (e *Exporter) reconcile(s *sample.Sample) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := requestKey{s.Endpoint, s.Seq}
	counted := e.liveTokens[k]
	delete(e.liveTokens, k)
	final := 0.0
	if s.Counted() {
		final = float64(max(s.Tokens, 0))
	}
	switch d := final - counted; {
	case d > 0:
		e.countLocked(s.Endpoint, s.Model, d)
	case d < 0:
		e.owed[s.Endpoint] -= d
	}
}

// countLocked adds d tokens to the endpoint's counter, less what it owes; e.mu held.
func (e *Exporter) countLocked(endpoint, model string, d float64) {
	pay := min(e.owed[endpoint], d)
	e.owed[endpoint] -= pay
	if d -= pay; d > 0 {
		e.tokens.WithLabelValues(safeLabel(endpoint), safeLabel(model)).Add(d)
	}
}

var (
	httpKind     = regexp.MustCompile(`^http_[0-9]{3}`)
	plainKind    = regexp.MustCompile(`^[a-z0-9_]{1,48}$`)
	userinfoBare = regexp.MustCompile(`^[^\s/@:]+:[^\s/@]*@`)
)

// errorTypeLabel keeps the error_type label short and bounded: the kinds of docs/metrics.md pass
// through; anything else is cut back to its http_<status> prefix, or "other".
func errorTypeLabel(kind string) string {
	switch {
	case kind == "":
		return "unknown"
	case plainKind.MatchString(kind):
		return kind
	case httpKind.MatchString(kind):
		return httpKind.FindString(kind)
	default:
		return "other"
	}
}

// safeLabel makes a label value valid UTF-8 (client_golang panics otherwise) and strips any URL
// credentials, in case an endpoint name was derived from a URL with user:password@ in it.
func safeLabel(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	if strings.Contains(v, "@") {
		if i := strings.Index(v, "://"); i >= 0 {
			if u, err := url.Parse(v); err == nil && u.User != nil {
				u.User = nil
				v = u.String()
			} else if rest := v[i+3:]; strings.Contains(rest, "@") {
				// Unparseable: drop everything up to the last @ before the path.
				host := rest
				if j := strings.IndexByte(rest, '/'); j >= 0 {
					host = rest[:j]
				}
				if k := strings.LastIndexByte(host, '@'); k >= 0 {
					v = v[:i+3] + rest[k+1:]
				}
			}
		} else {
			v = userinfoBare.ReplaceAllString(v, "")
		}
	}
	return v
}
