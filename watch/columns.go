package watch

import (
	"fmt"
	"math"
	"strings"
)

// Column is one figure of the fleet table, described once: the table, the TUI, the sort and
// the Prometheus re-export all walk Columns.
type Column struct {
	Key    string // sort key and --sort value
	Header string
	// Value is the figure, false when unknown; nil for a text column.
	Value func(Row) (float64, bool)
	// Text is the cell; "–" where the figure is unknown.
	Text func(Row) string
	// Estimate marks percentiles read from histogram buckets: cells start with "~".
	Estimate bool
	// Metric and Help name the figure in the Prometheus re-export ("" = not exported).
	Metric, Help string
	// Wide columns are dropped first when the terminal is narrow (higher drops earlier).
	Wide int
}

// Unknown is the cell of a figure the server does not export or the window cannot give.
const Unknown = "–"

func fig(get func(Row) *float64) func(Row) (float64, bool) {
	return func(r Row) (float64, bool) {
		if p := get(r); p != nil {
			return *p, true
		}
		return 0, false
	}
}

func quant(get func(Row) *Quantiles, p99 bool) func(Row) (float64, bool) {
	return fig(func(r Row) *float64 {
		q := get(r)
		if q == nil {
			return nil
		}
		if p99 {
			return q.P99
		}
		return q.P50
	})
}

func cell(format func(float64) string, v func(Row) (float64, bool)) func(Row) string {
	return func(r Row) string {
		x, ok := v(r)
		if !ok {
			return Unknown
		}
		return format(x)
	}
}

func count(x float64) string   { return fmt.Sprintf("%.0f", x) }
func rate(x float64) string    { return fmt.Sprintf("%.1f", x) }
func percent(x float64) string { return fmt.Sprintf("%.0f%%", x*100) }
func watts(x float64) string   { return fmt.Sprintf("%.0fW", x) }
func perJ(x float64) string    { return fmt.Sprintf("%.2f", x) }

// Millis writes a latency in ms as the table does, to three figures: "~247ms", "~17.5ms",
// "~2.17s".
func Millis(ms float64) string {
	switch {
	case ms >= 10000:
		return fmt.Sprintf("~%.1fs", ms/1000)
	case ms >= 1000:
		return fmt.Sprintf("~%.2fs", ms/1000)
	case ms >= 100:
		return fmt.Sprintf("~%.0fms", ms)
	case ms >= 10:
		return fmt.Sprintf("~%.1fms", ms)
	default:
		return fmt.Sprintf("~%.1fms", ms)
	}
}

func text(get func(Row) string) func(Row) string {
	return func(r Row) string {
		if s := get(r); s != "" {
			return s
		}
		return Unknown
	}
}

// Columns is the fleet table, left to right.
var Columns = []Column{
	{Key: "server", Header: "SERVER", Text: func(r Row) string {
		if r.Model != "" {
			return r.Server + " " + r.Model
		}
		return r.Server
	}},
	{Key: "kind", Header: "KIND", Text: text(func(r Row) string {
		if r.Version != nil && *r.Version != "" {
			return string(r.Kind) + " " + *r.Version
		}
		return string(r.Kind)
	})},
	{Key: "running", Header: "RUN", Value: fig(func(r Row) *float64 { return r.Running }),
		Metric: "requests_running", Help: "Requests the server is running (its batch, or busy slots)."},
	{Key: "waiting", Header: "WAIT", Value: fig(func(r Row) *float64 { return r.Waiting }),
		Metric: "requests_waiting", Help: "Requests waiting in the server's queue."},
	{Key: "gen", Header: "GEN t/s", Value: fig(func(r Row) *float64 { return r.GenTPS }),
		Metric: "generation_tokens_per_second", Help: "Generation tokens/s over the window, from the server's counters."},
	{Key: "prompt", Header: "PROMPT t/s", Value: fig(func(r Row) *float64 { return r.PromptTPS }), Wide: 2,
		Metric: "prompt_tokens_per_second", Help: "Prompt tokens/s over the window, from the server's counters."},
	{Key: "kv", Header: "KV", Value: fig(func(r Row) *float64 { return r.KVCacheUsage }),
		Metric: "kv_cache_usage_ratio", Help: "KV-cache use, 0-1."},
	{Key: "hit", Header: "HIT", Value: fig(func(r Row) *float64 { return r.PrefixHitRate }), Wide: 2,
		Metric: "prefix_cache_hit_ratio", Help: "Prefix-cache hit rate over the window, 0-1."},
	{Key: "ttft50", Header: "TTFT50", Value: quant(func(r Row) *Quantiles { return r.TTFT }, false), Estimate: true,
		Metric: "ttft_p50_milliseconds", Help: "TTFT p50 over the window, estimated from the server's histogram buckets."},
	{Key: "ttft99", Header: "TTFT99", Value: quant(func(r Row) *Quantiles { return r.TTFT }, true), Estimate: true,
		Metric: "ttft_p99_milliseconds", Help: "TTFT p99 over the window, estimated from the server's histogram buckets."},
	{Key: "itl50", Header: "ITL50", Value: quant(func(r Row) *Quantiles { return r.ITL }, false), Estimate: true, Wide: 1,
		Metric: "itl_p50_milliseconds", Help: "Inter-token latency p50 over the window, estimated from buckets."},
	{Key: "itl99", Header: "ITL99", Value: quant(func(r Row) *Quantiles { return r.ITL }, true), Estimate: true, Wide: 1,
		Metric: "itl_p99_milliseconds", Help: "Inter-token latency p99 over the window, estimated from buckets."},
	{Key: "queue50", Header: "QUEUE50", Value: quant(func(r Row) *Quantiles { return r.Queue }, false), Estimate: true, Wide: 3,
		Metric: "queue_p50_milliseconds", Help: "Queue time p50 over the window, estimated from buckets."},
	{Key: "queue99", Header: "QUEUE99", Value: quant(func(r Row) *Quantiles { return r.Queue }, true), Estimate: true, Wide: 3,
		Metric: "queue_p99_milliseconds", Help: "Queue time p99 over the window, estimated from buckets."},
	{Key: "e2e50", Header: "E2E50", Value: quant(func(r Row) *Quantiles { return r.E2E }, false), Estimate: true, Wide: 2,
		Metric: "e2e_p50_milliseconds", Help: "End-to-end latency p50 over the window, estimated from buckets."},
	{Key: "e2e99", Header: "E2E99", Value: quant(func(r Row) *Quantiles { return r.E2E }, true), Estimate: true, Wide: 2,
		Metric: "e2e_p99_milliseconds", Help: "End-to-end latency p99 over the window, estimated from buckets."},
	{Key: "preempt", Header: "PREEMPT", Value: fig(func(r Row) *float64 { return r.Preemptions }), Wide: 3,
		Metric: "preemptions", Help: "Preemptions over the window."},
	{Key: "spec", Header: "SPEC", Value: fig(func(r Row) *float64 { return r.SpecAcceptance }), Wide: 3,
		Metric: "spec_decode_acceptance_ratio", Help: "Speculative-decoding acceptance over the window, 0-1."},
	{Key: "watts", Header: "GPU W", Value: fig(func(r Row) *float64 { return r.GPUPowerW }), Wide: 1,
		Metric: "gpu_power_watts", Help: "The GPUs' power (dcgm-exporter)."},
	{Key: "tokj", Header: "TOK/J", Value: fig(func(r Row) *float64 { return r.TokensPerJoule }), Wide: 1,
		Metric: "tokens_per_joule", Help: "Generated tokens per joule the GPUs used over the window."},
	{Key: "badges", Header: "STATUS", Text: func(r Row) string {
		if r.ScrapedAt == nil && r.LastError == nil {
			return "waiting for the first scrape"
		}
		s := strings.Join(r.Badges, " ")
		if r.LastError != nil {
			s += ": " + *r.LastError
		}
		return s
	}},
}

// formats gives each figure column its cell format.
var formats = map[string]func(float64) string{
	"running": count, "waiting": count, "gen": rate, "prompt": rate, "kv": percent, "hit": percent,
	"preempt": count, "spec": percent, "watts": watts, "tokj": perJ,
}

func init() {
	for i := range Columns {
		c := &Columns[i]
		if c.Text != nil {
			continue
		}
		format := formats[c.Key]
		if c.Estimate {
			format = Millis
		}
		c.Text = cell(format, c.Value)
	}
}

func columnByKey(key string) (Column, bool) {
	for _, c := range Columns {
		if c.Key == key {
			return c, true
		}
	}
	return Column{}, false
}

// ColumnKeys lists the sort keys, for a usage message and a "did you mean".
func ColumnKeys() []string {
	keys := make([]string, 0, len(Columns))
	for _, c := range Columns {
		keys = append(keys, c.Key)
	}
	return keys
}

// sortable is a value to order rows by: a number, else the cell's text.
type sortable struct {
	n     float64
	s     string
	isNum bool
}

func (a sortable) greater(b sortable) bool {
	if a.isNum && b.isNum {
		return a.n > b.n
	}
	return a.s > b.s
}

func (c Column) sortValue(r Row) (sortable, bool) {
	if c.Value != nil {
		v, ok := c.Value(r)
		if !ok || math.IsNaN(v) {
			return sortable{}, false
		}
		return sortable{n: v, isNum: true}, true
	}
	s := c.Text(r)
	return sortable{s: s}, s != Unknown && s != ""
}

// Filter keeps the rows whose server, model, kind, URL or a label value contains text
// (case-insensitive); all of them when text is "".
func Filter(rows []Row, text string) []Row {
	if text == "" {
		return rows
	}
	text = strings.ToLower(text)
	var out []Row
	for _, r := range rows {
		hay := []string{r.Server, r.Model, string(r.Kind), r.URL}
		for _, v := range r.Labels {
			hay = append(hay, v)
		}
		for _, h := range hay {
			if strings.Contains(strings.ToLower(h), text) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}
