package otlpexport_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

// receiver is a loopback OTLP/HTTP metrics endpoint that decodes every push with the
// OpenTelemetry Collector's own pdata (pmetricotlp), as a Collector's otlpreceiver does.
type receiver struct {
	url string

	mu      sync.Mutex
	paths   []string
	pushes  []pmetric.Metrics
	headers []http.Header
	status  int // answer with this status instead of accepting (0: accept)
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, 16<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	status := r.status
	r.mu.Unlock()
	if status != 0 {
		http.Error(w, "collector unavailable", status)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "content type "+ct, http.StatusUnsupportedMediaType)
		return
	}
	er := pmetricotlp.NewExportRequest()
	if err := er.UnmarshalProto(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.paths = append(r.paths, req.URL.Path)
	r.pushes = append(r.pushes, er.Metrics())
	r.headers = append(r.headers, req.Header.Clone())
	r.mu.Unlock()
	resp, _ := pmetricotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(resp) //nolint:errcheck
}

func (r *receiver) setStatus(code int) {
	r.mu.Lock()
	r.status = code
	r.mu.Unlock()
}

// last is the last push decoded, and how many there were.
func (r *receiver) last(t *testing.T) (pmetric.Metrics, int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pushes) == 0 {
		t.Fatal("the receiver got no push")
	}
	return r.pushes[len(r.pushes)-1], len(r.pushes)
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pushes)
}

// point is one data point of a pushed metric, with its attributes as strings.
type point struct {
	attrs      map[string]string
	value      float64 // sums and gauges
	count      uint64  // histograms
	sum        float64
	bounds     []float64
	monotonic  bool
	cumulative bool
}

// pushed flattens a push: metric name → unit and points; and the resource's attributes.
func pushed(t *testing.T, md pmetric.Metrics) (metrics map[string][]point, units map[string]string, resource map[string]string) {
	t.Helper()
	metrics, units = map[string][]point{}, map[string]string{}
	if n := md.ResourceMetrics().Len(); n != 1 {
		t.Fatalf("%d resources in a push, want 1", n)
	}
	rm := md.ResourceMetrics().At(0)
	resource = attrMap(rm.Resource().Attributes())
	for i := range rm.ScopeMetrics().Len() {
		ms := rm.ScopeMetrics().At(i).Metrics()
		for j := range ms.Len() {
			m := ms.At(j)
			units[m.Name()] = m.Unit()
			metrics[m.Name()] = append(metrics[m.Name()], points(m)...)
		}
	}
	return metrics, units, resource
}

func points(m pmetric.Metric) []point {
	var out []point
	switch m.Type() {
	case pmetric.MetricTypeHistogram:
		dps := m.Histogram().DataPoints()
		for i := range dps.Len() {
			dp := dps.At(i)
			out = append(out, point{attrs: attrMap(dp.Attributes()), count: dp.Count(), sum: dp.Sum(),
				bounds:     dp.ExplicitBounds().AsRaw(),
				cumulative: m.Histogram().AggregationTemporality() == pmetric.AggregationTemporalityCumulative})
		}
	case pmetric.MetricTypeSum:
		dps := m.Sum().DataPoints()
		for i := range dps.Len() {
			out = append(out, point{attrs: attrMap(dps.At(i).Attributes()), value: dps.At(i).DoubleValue(),
				monotonic:  m.Sum().IsMonotonic(),
				cumulative: m.Sum().AggregationTemporality() == pmetric.AggregationTemporalityCumulative})
		}
	case pmetric.MetricTypeGauge:
		dps := m.Gauge().DataPoints()
		for i := range dps.Len() {
			out = append(out, point{attrs: attrMap(dps.At(i).Attributes()), value: dps.At(i).DoubleValue()})
		}
	}
	return out
}

func attrMap(m pcommon.Map) map[string]string {
	out := map[string]string{}
	m.Range(func(k string, v pcommon.Value) bool {
		out[k] = v.AsString()
		return true
	})
	return out
}

// having is the points whose attributes include every pair of want.
func having(ps []point, want map[string]string) []point {
	var out []point
next:
	for _, p := range ps {
		for k, v := range want {
			if p.attrs[k] != v {
				continue next
			}
		}
		out = append(out, p)
	}
	return out
}
