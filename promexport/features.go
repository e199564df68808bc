package promexport

import (
	"github.com/prometheus/client_golang/prometheus"

	"tokscope/feature"
	"tokscope/sample"
	"tokscope/sweep"
)

// featureFamilies are a feature's Prometheus families (feature.Prom: turns and cache hits) on
// the exporter's registry: its counters and histograms, labelled by endpoint and model first.
type featureFamilies struct {
	spec     *feature.Prom
	counters []*prometheus.CounterVec   // by family index; nil for another kind
	hists    []*prometheus.HistogramVec // by family index; nil for another kind
	gauges   []*prometheus.GaugeVec     // by family index; nil for another kind
}

// featureFamiliesOf are the families of every feature that has some, registered on reg.
func featureFamiliesOf(reg prometheus.Registerer) []family {
	var out []family
	for _, f := range feature.All() {
		if f.Prom != nil {
			out = append(out, newFeatureFamilies(reg, f.Prom))
		}
	}
	return out
}

func newFeatureFamilies(reg prometheus.Registerer, spec *feature.Prom) *featureFamilies {
	f := &featureFamilies{spec: spec, counters: make([]*prometheus.CounterVec, len(spec.Families)),
		hists: make([]*prometheus.HistogramVec, len(spec.Families)), gauges: make([]*prometheus.GaugeVec, len(spec.Families))}
	for i, fam := range spec.Families {
		labels := append([]string{labelEndpoint, labelModel}, fam.Labels...)
		if fam.Gauge {
			f.gauges[i] = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: fam.Name, Help: fam.Help}, labels)
			reg.MustRegister(f.gauges[i])
			continue
		}
		if fam.Buckets != nil {
			f.hists[i] = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: fam.Name, Help: fam.Help, Buckets: fam.Buckets}, labels)
			reg.MustRegister(f.hists[i])
			continue
		}
		f.counters[i] = prometheus.NewCounterVec(prometheus.CounterOpts{Name: fam.Name, Help: fam.Help}, labels)
		reg.MustRegister(f.counters[i])
	}
	return f
}

// zero creates the endpoint's series of the families that start at zero.
func (f *featureFamilies) zero(name, model string) {
	for i, fam := range f.spec.Families {
		if fam.Zero && f.counters[i] != nil {
			f.counters[i].WithLabelValues(name, model)
		}
	}
}

// observe hands a finished request to the feature.
func (f *featureFamilies) observe(s *sample.Sample, name, model, _ string) {
	if f.spec.Observe != nil {
		f.spec.Observe(s, f.emit(name, model))
	}
}

// emit is what the feature's emits do to the endpoint's series: add to a counter, observe
// into a histogram, set a gauge.
func (f *featureFamilies) emit(name, model string) func(int, []string, float64) {
	return func(i int, labels []string, v float64) {
		lv := append([]string{name, model}, labels...)
		switch {
		case f.hists[i] != nil:
			f.hists[i].WithLabelValues(lv...).Observe(v)
		case f.gauges[i] != nil:
			f.gauges[i].WithLabelValues(lv...).Set(v)
		default:
			f.counters[i].WithLabelValues(lv...).Add(v)
		}
	}
}

// ObserveTier hands the features a tier a capacity search has settled on the named endpoint
// (the tiers' boundaries). Safe from any goroutine.
func (e *Exporter) ObserveTier(endpoint string, t *sweep.TierOutcome) {
	for _, fam := range e.families {
		if f, ok := fam.(*featureFamilies); ok && f.spec.Tier != nil {
			f.spec.Tier(t, f.emit(safeLabel(endpoint), safeLabel(e.models[endpoint])))
		}
	}
}
