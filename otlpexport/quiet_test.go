package otlpexport

import (
	"context"
	"errors"
	"fmt"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Pushes says how many pushes p made and how many of them failed, for the tests outside the
// package (the product reports them only through Shutdown's note).
func Pushes(p *Pusher) (made, failed int64) {
	return p.exporter.made.Load(), p.exporter.failed.Load()
}

type failingExporter struct {
	sdkmetric.Exporter
	err error
}

func (f failingExporter) Export(context.Context, *metricdata.ResourceMetrics) error { return f.err }

// A push cancelled by Shutdown (the push at exit follows it) is no failure; the same
// cancellation before Shutdown, and any other error at any time, are.
func TestQuietExporterCounts(t *testing.T) {
	cancelled := fmt.Errorf("failed to upload metrics: %w", context.Canceled)
	q := &quietExporter{Exporter: failingExporter{err: cancelled}}
	q.Export(context.Background(), nil) //nolint:errcheck
	q.closing.Store(true)
	q.Export(context.Background(), nil) //nolint:errcheck
	if made, failed := q.made.Load(), q.failed.Load(); made != 1 || failed != 1 {
		t.Errorf("made %d failed %d, want 1 and 1", made, failed)
	}
	q.Exporter = failingExporter{err: errors.New("503 Service Unavailable")}
	if err := q.Export(context.Background(), nil); err != nil {
		t.Errorf("Export returned %v: failures stay with the exporter, not the SDK's handler", err)
	}
	err := q.summary()
	if err == nil || err.Error() != "2 of 2 pushes failed; the last: 503 Service Unavailable" {
		t.Errorf("summary %v", err)
	}
}
