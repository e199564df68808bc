package promexport

import (
	"github.com/prometheus/client_golang/prometheus"

	"tokscope/feature"
	"tokscope/sample"
)

// featureFamilies are a feature's Prometheus families (feature.Prom: turns and cache hits) on
// the exporter's registry: its counters and histograms, labelled by endpoint and model first.
type featureFamilies struct {
	spec     *feature.Prom
	counters []*prometheus.CounterVec   // by family index; nil for a histogram
	hists    []*prometheus.HistogramVec // by family index; nil for a counter
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
		hists: make([]*prometheus.HistogramVec, len(spec.Families))}
	for i, fam := range spec.Families {
		labels := append([]string{labelEndpoint, labelModel}, fam.Labels...)
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
	f.spec.Observe(s, func(i int, labels []string, v float64) {
		lv := append([]string{name, model}, labels...)
		if f.hists[i] != nil {
			f.hists[i].WithLabelValues(lv...).Observe(v)
			return
		}
		f.counters[i].WithLabelValues(lv...).Add(v)
	})
}
