// Package metric describes each per-request metric once: its key, label, unit, which way is
// better, how it is read off a sample.Sample, its histogram range, and where it shows. The
// aggregator (stats), the summaries (export), the record and replay (record), the Prometheus
// exporter (promexport), the compare view (ui) and the report walk All; adding a metric is one
// entry in registry.go.
//
// It imports probe only; never stats, export, ui, bubbletea, lipgloss or go-openai.
package metric

import (
	"time"

	"tokscope/sample"
)

// ID names an entry of All; the IDs are its indexes, in output order.
type ID int

// Kind is what a metric's values are, which decides their unit, how the aggregator records
// them and how the summaries round them.
type Kind int

const (
	Duration Kind = iota // milliseconds (Prometheus: seconds)
	Rate                 // tokens per second
	Count                // whole tokens: quantiles read back as whole numbers
	Ratio                // a plain ratio (tokens per chunk)
)

// Better says which way a metric improves: the compare view highlights the best value.
type Better int

const (
	Neither Better = 0
	Lower   Better = -1
	Higher  Better = +1
)

// Group places a metric's key in the JSON summary and the CSV: Core keys come after
// output_tokens (docs/outputs.md's first contract), Workload keys after "server" (its second); a
// metric with JSON None is in neither (the table, the views and the exporter may still show it).
type Group int

const (
	Core Group = iota
	Workload
	// Server is the server's own clock (docs/outputs.md, third round): its metrics nest in the JSON
	// summary's "server_timing" block under their Sub keys, which is null when the endpoint's
	// server said nothing; CSV columns keep their Key prefix. Never in the compare view's
	// Core/Workload columns: the view adds them after both.
	Server
)

// JSONShape is how a metric appears in the JSON summary and the CSV.
type JSONShape int

const (
	Dist JSONShape = iota // {"p50","p90","p99","mean","min","max"}; CSV key_p50 … key_max
	Mean                  // the whole-run mean as one number (tokens_per_chunk)
	None                  // not in the JSON summary nor the CSV
)

// Quantile is one statistic of a distribution a compare column shows.
type Quantile int

const (
	P10 Quantile = iota
	P50
	P90
	P99
	Max
)

// Column is one column of the compare view: a statistic of the metric over the whole run.
// Rank orders the columns by how much they matter when not all fit (the narrowest table shows
// the lowest ranks; ranks are distinct across the view).
type Column struct {
	Title string
	Of    Quantile
	Rank  int
}

// Prom is the Prometheus histogram of a metric, observed once per value of each ok request;
// durations in seconds. Buckets are upper bounds in those units.
type Prom struct {
	Name, Help string
	Buckets    []float64
}

// Adder takes the values a reader yields. An interface rather than a func so that the
// aggregator hands its series over without allocating a closure per metric and Sample.
type Adder interface{ Add(v float64) }

// AddFunc adapts a function to an Adder.
type AddFunc func(float64)

// Add calls f(v).
func (f AddFunc) Add(v float64) { f(v) }

// Context is what a reader needs beyond the Sample.
type Context struct {
	// TTFTFrom is the instant TTFT is measured to (--ttft-from); "" is first-token.
	TTFTFrom sample.TTFTFrom
	// fig, when set (Derive), holds the figures of the one Sample this Context is read with.
	fig *Figures
}

// Figures are the figures of one Sample that several readers need, derived once per Sample
// (Derive) so that a reader of many metrics, or an accumulator beside them, does not derive
// them again.
type Figures struct {
	// TTFT is measured to the run's TTFTFrom; HasTTFT is false when the instant never came.
	TTFT    time.Duration
	HasTTFT bool
	// ModelLoad: the server was loading the model (sample.ServerTiming.ModelLoad), so the
	// request's TTFT is not the server's serving speed and stays out of every TTFT figure.
	ModelLoad bool
	// Decode is the request's decode tok/s (sample.Sample.DecodeRate); HasDecode false when
	// it is undefined.
	Decode    float64
	HasDecode bool
	// E2E is t0 → the last chunk (sample.Sample.E2E); HasE2E false without a chunk.
	E2E    time.Duration
	HasE2E bool
}

// Derive derives s's Figures into f and returns c carrying them: read s (and only s) with it.
// f is the caller's, so that one reused value serves every Sample without an allocation.
func (c Context) Derive(s *sample.Sample, f *Figures) Context {
	*f = Figures{ModelLoad: s.Server.ModelLoad()}
	f.TTFT, f.HasTTFT = c.TTFTFrom.TTFT(s)
	f.Decode, f.HasDecode = s.DecodeRate()
	f.E2E, f.HasE2E = s.E2E()
	c.fig = f
	return c
}

// TTFT is s's TTFT measured to TTFTFrom, model loads included (the instant itself: the
// per-second series, the SLO's objective).
func (c Context) TTFT(s *sample.Sample) (time.Duration, bool) {
	if c.fig != nil {
		return c.fig.TTFT, c.fig.HasTTFT
	}
	return c.TTFTFrom.TTFT(s)
}

// DecodeRate is s's decode tok/s (sample.Sample.DecodeRate).
func (c Context) DecodeRate(s *sample.Sample) (float64, bool) {
	if c.fig != nil {
		return c.fig.Decode, c.fig.HasDecode
	}
	return s.DecodeRate()
}

// E2E is s's t0 → last chunk (sample.Sample.E2E).
func (c Context) E2E(s *sample.Sample) (time.Duration, bool) {
	if c.fig != nil {
		return c.fig.E2E, c.fig.HasE2E
	}
	return s.E2E()
}

// ServingTTFT is s's TTFT as the TTFT figures count it: undefined when the server was loading
// the model (Figures.ModelLoad). The one place that exclusion is written.
func (c Context) ServingTTFT(s *sample.Sample) (time.Duration, bool) {
	if c.fig != nil {
		return c.fig.TTFT, c.fig.HasTTFT && !c.fig.ModelLoad
	}
	if s.Server.ModelLoad() {
		return 0, false
	}
	return c.TTFTFrom.TTFT(s)
}

// Metric is one per-request metric.
type Metric struct {
	Key    string // JSON key, CSV column prefix, Prometheus and report id: "ttft_ms"
	Label  string // the table's row label: "TTFT ms"
	Unit   string // "ms", "tok/s", "tokens", ""
	Kind   Kind
	Better Better
	// FromOutputTokens: derived from the output token count N, so approximate (≈) when N is estimated.
	FromOutputTokens bool
	// Read adds each value the Sample defines, in Kind's display unit: none when the metric is
	// undefined for it, one for most, several for ITL (every gap).
	Read func(s *sample.Sample, c Context, add Adder)
	// ReadOnCut: also read off a request cut by the end of the run (docs/metrics.md: a TTFT that had
	// arrived counts; nothing else of a cut request does).
	ReadOnCut bool

	Group Group
	// KeyInGroup is the metric's key inside its Group's JSON block ("ttft_ms" in "server_timing"); "" is Key.
	KeyInGroup string
	JSON       JSONShape
	Table      bool     // a row of the table summary (and so of the report's summary table)
	Compare    []Column // the compare view's columns; none: not in the compare view
	Prom       *Prom    // nil: not exported as a Prometheus histogram
	// Chart: the report draws the metric's distribution (a CDF over ok requests); nil: none.
	Chart *Chart
	// ManyPerSample: Read yields many values per Sample (ITL: every gap), so the report keeps them in a
	// bounded histogram rather than one value per request.
	ManyPerSample bool
}

// Chart is how the report draws a metric's distribution. Its id is "dist-" + ID.
type Chart struct {
	ID, Title, XLabel, YLabel, Note string
	LogX                            bool // a log axis (gaps span microseconds to seconds)
}

// okNote is the note of a CDF over ok requests.
const okNote = "Cumulative distribution over ok requests; dots mark the summary's p50, p90 and p99."

// JSONKey is the metric's key in the JSON summary, within its Group's block when it has one
// (Server: "server_timing").
func (m *Metric) JSONKey() string {
	if m.KeyInGroup != "" {
		return m.KeyInGroup
	}
	return m.Key
}

// IDs yields every ID in output order.
func IDs() []ID {
	ids := make([]ID, len(All))
	for i := range ids {
		ids[i] = ID(i)
	}
	return ids
}

// Get returns the entry of id.
func Get(id ID) *Metric { return &All[id] }

// Readers for the common shapes of an entry.

// dur reads one optional duration, in milliseconds.
func dur(f func(s *sample.Sample, c Context) (time.Duration, bool)) func(*sample.Sample, Context, Adder) {
	return func(s *sample.Sample, c Context, add Adder) {
		if d, ok := f(s, c); ok {
			add.Add(ms(d))
		}
	}
}

// instant reads a duration that is defined when it is not negative (sample.Absent).
func instant(f func(s *sample.Sample) time.Duration) func(*sample.Sample, Context, Adder) {
	return dur(func(s *sample.Sample, _ Context) (time.Duration, bool) {
		d := f(s)
		return d, d >= 0
	})
}

// value reads one optional plain value.
func value(f func(s *sample.Sample) (float64, bool)) func(*sample.Sample, Context, Adder) {
	return func(s *sample.Sample, _ Context, add Adder) {
		if v, ok := f(s); ok {
			add.Add(v)
		}
	}
}

// ms converts a duration to (fractional) milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
