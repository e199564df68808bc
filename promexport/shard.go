package promexport

import "github.com/prometheus/client_golang/prometheus"

// labelShard is the label every series carries in a sharded run (--shard): the shard's
// index. Several shards scraped by (or pushing to) one Prometheus are then series apart, and
// the dashboard's sums over endpoints add them up.
const labelShard = "shard"

// Option is an option of New.
type Option func(*options)

type options struct {
	shard string
}

// WithShard labels every series of the Exporter, the Go runtime's and the process's
// included, shard="index"; "" (an unsharded run) adds no label.
func WithShard(index string) Option {
	return func(o *options) { o.shard = index }
}

// registerer is where New registers its collectors: the registry itself, or the registry
// through a wrapper that adds the shard label to every series.
func (o *options) registerer(r *prometheus.Registry) prometheus.Registerer {
	if o.shard == "" {
		return r
	}
	return prometheus.WrapRegistererWith(prometheus.Labels{labelShard: o.shard}, r)
}
