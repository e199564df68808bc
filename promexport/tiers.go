package promexport

import "github.com/prometheus/client_golang/prometheus"

// Tiers of a capacity search (--find-max with --tier): each tier's boundary on each endpoint,
// tokscope_tier_boundary_users{endpoint, model, tier} (endpoint and model as on every series),
// set once the search has confirmed it (so a
// series exists only for a known answer; 0 when even one user missed the tier). Users are
// the search's load: conversations in flight (--find-max users), or the concurrency or rate
// of a --find-max concurrency|rate search with tiers.

const (
	labelTier        = "tier"
	nameTierBoundary = "tokscope_tier_boundary_users"
)

func newTierBoundary() *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: nameTierBoundary,
		Help: "The highest load (users in flight for --find-max users) at which the tier held, confirmed by a step of its own; 0 when it missed even at 1."},
		[]string{labelEndpoint, labelModel, labelTier})
}

// SetTierBoundary records tier's confirmed boundary on the named endpoint. Safe from any
// goroutine.
func (e *Exporter) SetTierBoundary(endpoint, tier string, users float64) {
	e.tierBoundary.WithLabelValues(safeLabel(endpoint), safeLabel(e.models[endpoint]), safeLabel(tier)).Set(users)
}
