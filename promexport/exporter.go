// Package promexport owns tokscope's Prometheus exporter, for users who outgrow one machine: the
// same per-request measurements the terminal shows, as histograms and counters a Prometheus
// server can scrape from many tokscope instances and a Grafana dashboard can chart
// (grafana/tokscope-dashboard.json).
//
// Every metric lives on the Exporter's own prometheus.Registry, never on the global default
// one. The only labels are the endpoint name and the model (plus outcome and error_type on
// tokscope_requests_total): never a base URL, a key or a header, so nothing secret can reach
// an exposition.
//
// It reads config and probe and must not import stats, export, ui, bubbletea or lipgloss.
package promexport

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"tokscope/config"
	"tokscope/probe"
)

// Metric names. The dashboard test checks that every name the dashboard uses exists here.
const (
	nameTTFT       = "tokscope_time_to_first_token_seconds"
	nameTTFB       = "tokscope_time_to_first_byte_seconds"
	nameITL        = "tokscope_inter_chunk_latency_seconds"
	nameTPOT       = "tokscope_time_per_output_token_seconds"
	nameE2E        = "tokscope_e2e_request_latency_seconds"
	nameTokens     = "tokscope_generation_tokens_total"
	namePrompt     = "tokscope_prompt_tokens_total"
	nameCached     = "tokscope_cached_prompt_tokens_total"
	nameSources    = "tokscope_token_source_requests_total"
	nameRequests   = "tokscope_requests_total"
	nameInFlight   = "tokscope_requests_in_flight"
	labelEndpoint  = "endpoint"
	labelModel     = "model"
	labelOutcome   = "outcome"
	labelErrorType = "error_type"
	labelSource    = "source"

	// outcomeCut labels requests cut by the end of the run (probe.Sample.Cut) in
	// tokscope_requests_total: not errors.
	outcomeCut = "cut"
)

// Bucket upper bounds, in seconds. vLLM's own TTFT buckets are the reference: a user who runs
// vLLM can put tokscope's client-side view and the server's view on one chart with the same
// bounds.
var (
	// TTFTBuckets are vLLM's vllm:time_to_first_token_seconds buckets, unchanged: 1 ms
	// (a warm local server on loopback) up to 2560 s (a long prompt queued behind a busy batch).
	TTFTBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10, 20, 40, 80, 160, 640, 2560}

	// TTFBBuckets equal TTFTBuckets: response headers arrive anywhere from together with the
	// first token (servers that flush late) to well before it, so the same range applies, and
	// equal bounds let TTFB and TTFT quantiles be compared without bucket artefacts.
	TTFBBuckets = TTFTBuckets

	// ITLBuckets cover gaps between token-bearing chunks. vLLM's inter-token buckets start at
	// 10 ms, but fast providers (Groq, Cerebras) and small local models stream a chunk every
	// 1–5 ms, so the low end is finer (0.5 ms … 10 ms); the top reaches past the default 30 s
	// stall limit so stalls land in a real bucket rather than +Inf.
	ITLBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025,
		0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10,
		20, 40, 80}

	// TPOTBuckets cover per-token decode time from 2000 tok/s (0.5 ms) down to 0.1 tok/s
	// (10 s, a large model on CPU). They are densest between 5 ms and 50 ms (20–200 tok/s),
	// where most GPU servers decode and where users compare providers.
	TPOTBuckets = []float64{0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.0125, 0.015,
		0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 2.5, 5.0, 10}

	// E2EBuckets are vLLM's vllm:e2e_request_latency_seconds buckets (0.3 s … 7680 s) with
	// 50, 100 and 200 ms added below, for short max_tokens probes against fast servers.
	E2EBuckets = []float64{0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10, 15,
		20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
)

// Exporter turns finished Samples into Prometheus metrics. All its methods are safe for
// concurrent use.
type Exporter struct {
	registry *prometheus.Registry
	handler  http.Handler

	ttft, ttfb, itl, tpot, e2e *prometheus.HistogramVec
	tokens                     *prometheus.CounterVec
	prompt, cached             *prometheus.CounterVec
	sources                    *prometheus.CounterVec
	requests                   *prometheus.CounterVec
	inFlight                   *prometheus.GaugeVec
	usage                      *prometheus.HistogramVec // tokens per request (usage.go)

	models map[string]string // endpoint name → configured model, for the in-flight gauge
	byIdx  []config.Endpoint // the Runner's endpoints, in its order (Progress names them by index)

	mu   sync.Mutex
	open map[requestKey]int // requests Started and not yet Finished/Observed
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
func New(eps []config.Endpoint) *Exporter {
	labels := []string{labelEndpoint, labelModel}
	histogram := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: name, Help: help, Buckets: buckets,
		}, labels)
	}
	e := &Exporter{
		registry: prometheus.NewRegistry(),
		ttft: histogram(nameTTFT,
			"Time from sending the request to the first chunk with content or reasoning (ok requests).",
			TTFTBuckets),
		ttfb: histogram(nameTTFB,
			"Time from sending the request to the first response byte (ok requests).",
			TTFBBuckets),
		itl: histogram(nameITL,
			"Every gap between consecutive token-bearing chunks (ok requests). Overstates per-token latency when chunks carry several tokens.",
			ITLBuckets),
		tpot: histogram(nameTPOT,
			"(last_token - first_token) / (output tokens - 1) per request (ok requests with at least 2 tokens).",
			TPOTBuckets),
		e2e: histogram(nameE2E,
			"Time from sending the request to its last chunk (ok requests): e2e_ms of the summary.",
			E2EBuckets),
		prompt: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: namePrompt,
			Help: "Prompt tokens of ok requests, as the server counted them (usage prompt_tokens; requests without usage add nothing).",
		}, labels),
		cached: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: nameCached,
			Help: "Prompt tokens of ok requests that a server prefix cache served (usage prompt_tokens_details.cached_tokens, where the server reports it).",
		}, labels),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: nameTokens,
			Help: "Output tokens of ok requests, counted as their chunks arrive (estimated in flight without per-chunk usage) and reconciled with each request's final count. See tokscope_token_source_requests_total for where the counts came from.",
		}, labels),
		sources: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: nameSources,
			Help: "Ok requests by the source of their output-token count (usage, estimate, chunks); more than one source means token figures mix sources.",
		}, []string{labelEndpoint, labelModel, labelSource}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: nameRequests,
			Help: "Finished requests (warm-ups excluded) by outcome (ok, truncated, error, or cut: still in flight when the run ended, not an error) and error type (empty unless outcome is error).",
		}, []string{labelEndpoint, labelModel, labelOutcome, labelErrorType}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: nameInFlight,
			Help: "Requests sent and not yet finished, warm-ups included.",
		}, labels),
		usage:      newUsage(),
		models:     make(map[string]string, len(eps)),
		byIdx:      append([]config.Endpoint(nil), eps...),
		open:       make(map[requestKey]int),
		liveTokens: make(map[requestKey]float64),
		owed:       make(map[string]float64),
	}
	e.registry.MustRegister(e.ttft, e.ttfb, e.itl, e.tpot, e.e2e, e.tokens, e.prompt, e.cached, e.sources,
		e.requests, e.inFlight, e.usage,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	for _, ep := range eps {
		name, model := safeLabel(ep.Name), safeLabel(ep.Model)
		e.models[ep.Name] = ep.Model
		for _, h := range []*prometheus.HistogramVec{e.ttft, e.ttfb, e.itl, e.tpot, e.e2e} {
			h.WithLabelValues(name, model)
		}
		e.tokens.WithLabelValues(name, model)
		e.prompt.WithLabelValues(name, model)
		e.cached.WithLabelValues(name, model)
		e.requests.WithLabelValues(name, model, string(probe.OutcomeOK), "")
		e.requests.WithLabelValues(name, model, string(probe.OutcomeTruncated), "")
		e.inFlight.WithLabelValues(name, model).Set(0)
	}

	e.handler = promhttp.HandlerFor(e.registry, promhttp.HandlerOpts{
		// A collector failing (e.g. /proc unreadable) must not hide the request metrics.
		ErrorHandling: promhttp.ContinueOnError,
	})
	return e
}

// Registry is the Exporter's private registry (for tests and for embedding in another
// process's exposition).
func (e *Exporter) Registry() *prometheus.Registry { return e.registry }

// Handler serves the exposition of the Exporter's registry, on whatever path it is mounted.
func (e *Exporter) Handler() http.Handler { return e.handler }

// Started records that request seq of the named endpoint was sent (feed it probe.Started
// events, warm-ups included). The in-flight gauge counts requests by (endpoint, seq), so it
// cannot drift: the request leaves the gauge on its Sample (Observe) or on Finished, whichever
// comes first; a second finish, or a finish without a start, changes nothing.
func (e *Exporter) Started(endpoint string, seq uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.open[requestKey{endpoint, seq}]++
	e.setInFlightLocked(endpoint)
}

// Finished removes request seq of the named endpoint from the in-flight gauge. Observe does
// this itself; Finished is for a request abandoned without a Sample. Calling it after Observe
// is harmless.
func (e *Exporter) Finished(endpoint string, seq uint64) {
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
// requests (DESIGN.md: errors and truncations count in error rates, never in speed figures):
// the tokens a request counted in flight (Progress) are reconciled with its final count.
func (e *Exporter) Observe(s *probe.Sample) {
	if s == nil {
		return
	}
	e.Finished(s.Endpoint, s.Seq)
	if s.Warmup {
		return
	}
	e.reconcile(s)
	name, model := safeLabel(s.Endpoint), safeLabel(s.Model)
	observe := func(h *prometheus.HistogramVec, d time.Duration, ok bool) {
		if ok && d >= 0 {
			h.WithLabelValues(name, model).Observe(d.Seconds())
		}
	}
	if s.Cut { // in flight when the run ended: not an error; a TTFT it had counts (DESIGN.md)
		e.requests.WithLabelValues(name, model, outcomeCut, "").Inc()
		ttft, ok := s.TTFT()
		observe(e.ttft, ttft, ok)
		return
	}
	outcome := string(s.Outcome)
	if outcome == "" {
		outcome = "unknown"
	}
	errorType := ""
	if s.Outcome == probe.OutcomeError {
		errorType = errorTypeLabel(s.ErrorKind)
	}
	e.requests.WithLabelValues(name, model, outcome, errorType).Inc()
	if !s.Counted() {
		return
	}

	ttft, ok := s.TTFT()
	observe(e.ttft, ttft, ok)
	ttfb, ok := s.TTFB()
	observe(e.ttfb, ttfb, ok)
	tpot, ok := s.TPOT()
	observe(e.tpot, tpot, ok)
	e2e, ok := s.E2E() // t0 → last chunk, DESIGN.md's e2e
	observe(e.e2e, e2e, ok)
	if gaps := s.ITLs(); len(gaps) > 0 {
		itl := e.itl.WithLabelValues(name, model)
		for _, g := range gaps {
			itl.Observe(g.Seconds())
		}
	}
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

// Progress counts the tokens of a request in flight as they arrive (feed it the Runner's
// OnProgress): tokscope_generation_tokens_total then rises while tokens stream, and a rate()
// over it follows the true rate. Warm-ups and interactive requests are left out, as in
// Observe. Observe reconciles the request's count with its Sample.
func (e *Exporter) Progress(p *probe.Progress) {
	if p == nil || p.Warmup || p.Stream != 0 || p.Endpoint < 0 || p.Endpoint >= len(e.byIdx) {
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
func (e *Exporter) reconcile(s *probe.Sample) {
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

// errorTypeLabel keeps the error_type label short and bounded: the kinds of DESIGN.md pass
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
