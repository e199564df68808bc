// Package otlpexport pushes tokscope's metrics to an OpenTelemetry collector over OTLP/HTTP
// (--otlp URL): for runs nobody scrapes, such as the pods of a Kubernetes Job, which are gone
// before a Prometheus server would come by.
//
// There is one metrics path: the Prometheus registry of package promexport. The
// OpenTelemetry SDK reads it through the contrib Prometheus bridge (a metric producer on a
// PeriodicReader) and sends it with the SDK's otlpmetrichttp exporter; a producer wrapper
// renames the series to the OpenTelemetry GenAI semantic conventions where they have a name
// (names.go). Pushing runs on the SDK's own goroutine and never blocks measuring; a collector
// that cannot be reached is a note, never an error of the run.
//
// It reads config (the endpoints, for server.address) and must not import probe, stats,
// export, ui or cli. Imported by cli.
package otlpexport

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/stdr"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	promb "go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"

	"tokscope/config"
)

// Defaults of Options.
const (
	DefaultInterval = 10 * time.Second
	DefaultTimeout  = 5 * time.Second
	// DefaultPath is where OTLP/HTTP receivers take metrics; a URL without a path gets it.
	DefaultPath = "/v1/metrics"
)

// Options say where and how to push.
type Options struct {
	URL       string            // http(s)://host[:port][/path]; see EndpointURL
	Interval  time.Duration     // between pushes; 0: DefaultInterval
	Timeout   time.Duration     // per push, retries included; 0: DefaultTimeout
	Version   string            // service.version
	Endpoints []config.Endpoint // the run's endpoints: server.address, server.port, gen_ai.provider.name

	// Shard is this process's shard (--shard I/N): its index I, the resource attribute
	// tokscope.shard, the same value as the data points' tokscope.shard (promexport's shard
	// label); "" leaves it out. Several shards pushing the same series to one collector are
	// told apart by it (and by service.instance.id).
	Shard string
}

// Pusher pushes the metrics of a Prometheus registry until Shutdown, which pushes once more.
// Its methods are safe for concurrent use.
type Pusher struct {
	provider *sdkmetric.MeterProvider
	exporter *quietExporter
	once     sync.Once
	err      error
}

// EndpointURL checks the --otlp URL and returns the one pushed to: an explicit path is
// kept, none (or "/") becomes DefaultPath. Credentials belong in OTEL_EXPORTER_OTLP_HEADERS,
// never in the URL (it shows in notes and logs), so a URL with user:password@ is refused.
func EndpointURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil:
		return "", fmt.Errorf("not a URL: %w", errors.Unwrap(err))
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("want an http:// or https:// URL")
	case u.Host == "" || u.Hostname() == "":
		return "", errors.New("the URL has no host")
	case u.User != nil:
		return "", errors.New("credentials in the URL: give them as OTEL_EXPORTER_OTLP_HEADERS instead")
	case u.RawQuery != "" || u.Fragment != "":
		return "", errors.New("the URL has a query or fragment: OTLP/HTTP takes neither")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = DefaultPath
	}
	return u.String(), nil
}

// Start begins pushing g's metrics every o.Interval. ctx only bounds the set-up: pushing
// goes on until Shutdown. The exporter reads OTEL_EXPORTER_OTLP_HEADERS (and
// OTEL_EXPORTER_OTLP_METRICS_HEADERS) itself; the resource reads OTEL_RESOURCE_ATTRIBUTES
// and OTEL_SERVICE_NAME, which override tokscope's own attributes.
func Start(ctx context.Context, g prometheus.Gatherer, o Options) (*Pusher, error) {
	endpoint, err := EndpointURL(o.URL)
	if err != nil {
		return nil, err
	}
	quietSDK()
	timeout := cmpDuration(o.Timeout, DefaultTimeout)
	exp, err := otlpmetrichttp.New(ctx,
		otlpmetrichttp.WithEndpointURL(endpoint),
		otlpmetrichttp.WithTimeout(timeout),
		// Retries stay inside one push's time: a push that is still retrying when the next
		// one is due would only delay it, and the push at exit must not hold the exit up.
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: true,
			InitialInterval: 250 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: timeout}))
	if err != nil {
		return nil, fmt.Errorf("otlp: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(resourceAttributes(o)...),
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("otlp: resource: %w", err)
	}
	quiet := &quietExporter{Exporter: exp}
	reader := sdkmetric.NewPeriodicReader(quiet,
		sdkmetric.WithInterval(cmpDuration(o.Interval, DefaultInterval)),
		sdkmetric.WithTimeout(timeout),
		sdkmetric.WithProducer(newGenAIProducer(promb.NewMetricProducer(promb.WithGatherer(g)), o.Endpoints)))
	return &Pusher{
		provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res)),
		exporter: quiet,
	}, nil
}

func resourceAttributes(o Options) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("service.name", "tokscope"),
		attribute.String("service.instance.id", uuid.NewString()),
	}
	if o.Version != "" {
		attrs = append(attrs, attribute.String("service.version", o.Version))
	}
	if o.Shard != "" {
		attrs = append(attrs, attribute.String(AttrShard, o.Shard))
	}
	return attrs
}

// Shutdown pushes the metrics one last time and stops. It waits at most until ctx is done
// (the exit must not hang on a dead collector). The error, if any, says how many pushes
// failed and the last failure: a note for the user, not a failure of the run. Calling it
// again returns the same error.
func (p *Pusher) Shutdown(ctx context.Context) error {
	p.once.Do(func() {
		p.exporter.closing.Store(true)
		p.provider.Shutdown(ctx) //nolint:errcheck // export errors are counted by quietExporter
		p.err = p.exporter.summary()
	})
	return p.err
}

// quietExporter counts pushes and keeps the last failure instead of handing it to the SDK's
// global error handler, so a collector that is down costs one note at the end.
type quietExporter struct {
	sdkmetric.Exporter
	made, failed atomic.Int64
	last         atomic.Pointer[error]
	closing      atomic.Bool // Shutdown began
}

func (q *quietExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	err := q.Exporter.Export(ctx, rm)
	if err != nil && q.closing.Load() && errors.Is(err, context.Canceled) {
		// A periodic push that Shutdown cancelled: the push at exit, which follows, carries
		// the same series and newer values. Neither made nor failed.
		return nil
	}
	q.made.Add(1)
	if err != nil {
		q.failed.Add(1)
		q.last.Store(&err)
		log.Printf("otlp: push failed: %v", err)
	}
	return nil
}

func (q *quietExporter) summary() error {
	failed := q.failed.Load()
	if failed == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d pushes failed; the last: %w", failed, q.made.Load(), *q.last.Load())
}

// quietSDK sends what the OpenTelemetry SDK reports on its own (the bridge's gather errors,
// its internal logger) to the standard logger — the --log file or nowhere — instead of
// stderr, which the TUI owns. These are process-wide settings of the SDK (its own globals);
// setting them again, as a second pusher does, sets the same.
func quietSDK() {
	otel.SetLogger(stdr.New(log.Default()))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Printf("otlp: %v", err) }))
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
