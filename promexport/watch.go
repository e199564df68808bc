package promexport

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"tokscope/watch"
)

// Watch re-exports `tokscope watch`'s fleet table: one gauge per figure column of
// watch.Columns (tokscope_watch_<figure>{server, model, kind}), present only where the
// server exports the figure, and tokscope_watch_up (0 while a server's scrapes fail). Labels
// are the row's name, model and kind, never its URL. Safe for concurrent use: the fleet's
// reader calls Set, Prometheus' scrapes read.
type Watch struct {
	mu      sync.Mutex
	rows    []watch.Row
	descs   map[string]*prometheus.Desc
	up      *prometheus.Desc
	handler http.Handler
}

var watchLabels = []string{"server", "model", "kind"}

// NewWatch makes the re-exporter, serving nothing until the first Set.
func NewWatch() *Watch {
	w := &Watch{descs: map[string]*prometheus.Desc{}}
	for _, c := range watch.Columns {
		if c.Metric != "" {
			w.descs[c.Key] = prometheus.NewDesc("tokscope_watch_"+c.Metric, c.Help, watchLabels, nil)
		}
	}
	w.up = prometheus.NewDesc("tokscope_watch_up", "1 when the server's last scrape was read, 0 when it failed.", watchLabels, nil)
	reg := prometheus.NewRegistry()
	reg.MustRegister(w)
	w.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return w
}

// Set replaces the rows exported.
func (w *Watch) Set(rows []watch.Row) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rows = append(w.rows[:0], rows...)
}

// Handler serves the exposition.
func (w *Watch) Handler() http.Handler { return w.handler }

// Describe sends every gauge's description.
func (w *Watch) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range w.descs {
		ch <- d
	}
	ch <- w.up
}

// Collect sends each row's known figures.
func (w *Watch) Collect(ch chan<- prometheus.Metric) {
	w.mu.Lock()
	rows := append([]watch.Row(nil), w.rows...)
	w.mu.Unlock()
	for _, r := range rows {
		labels := []string{r.Server, r.Model, string(r.Kind)}
		up := 1.0
		if r.LastError != nil || r.ScrapedAt == nil {
			up = 0
		}
		ch <- prometheus.MustNewConstMetric(w.up, prometheus.GaugeValue, up, labels...)
		for _, c := range watch.Columns {
			d := w.descs[c.Key]
			if d == nil {
				continue
			}
			if v, ok := c.Value(r); ok {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
			}
		}
	}
}
