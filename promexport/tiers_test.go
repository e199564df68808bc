package promexport

import (
	"testing"

	"tokscope/config"
	"tokscope/sweep"
)

// tierSeries is every tokscope_tier_boundary_users series: "endpoint/tier" → value.
func tierSeries(t *testing.T, e *Exporter) map[string]float64 {
	t.Helper()
	fams, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != "tokscope_tier_boundary_users" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[labels["endpoint"]+"/"+labels["model"]+"/"+labels["tier"]] = m.GetGauge().GetValue()
		}
	}
	return out
}

// A confirmed boundary is one gauge per endpoint and tier; before any, the series is absent.
func TestTierBoundaryGauge(t *testing.T) {
	e := New([]config.Endpoint{{Name: "a", Model: "m"}})
	if got := tierSeries(t, e); len(got) != 0 {
		t.Fatalf("series before any boundary: %v", got)
	}
	e.ObserveTier("a", &sweep.TierOutcome{Name: "open", Boundary: 8}) // still searched: no answer yet
	if got := tierSeries(t, e); len(got) != 0 {
		t.Fatalf("series before a confirmed boundary: %v", got)
	}
	e.ObserveTier("a", &sweep.TierOutcome{Name: "fast", Boundary: 6, Confirmed: true})
	e.ObserveTier("a", &sweep.TierOutcome{Name: "slow", FirstMiss: 1, Done: true}) // missed even at 1
	got := tierSeries(t, e)
	if len(got) != 2 || got["a/m/fast"] != 6 || got["a/m/slow"] != 0 {
		t.Errorf("series %v, want a/m/fast 6 and a/m/slow 0", got)
	}
}
