package export

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"tokscope/config"
	"tokscope/stats"
)

// SLOs, cost and the server's own figures (docs/outputs.md, "Contract additions"): per endpoint,
// "slo" when it has objectives, "cost" when it has a price, and "server" always — null when
// nothing was scraped.

// sloFeature: "slo" and its columns with objectives, the table's SLO line.
func sloFeature() feature {
	return feature{
		name:   "slo",
		jsonAt: jsonMiddle,
		json: func(e *stats.EndpointStats) []jsonMetric {
			if j := sloJSON(e); j != nil {
				return []jsonMetric{{"slo", j}}
			}
			return nil
		},
		csvHeader: func(snap *stats.Snapshot) []string {
			if !anyEndpoint(snap, hasSLO) {
				return nil
			}
			return sloCSVHeader()
		},
		csv: func(snap *stats.Snapshot, e *stats.EndpointStats) []string {
			if !anyEndpoint(snap, hasSLO) {
				return nil
			}
			return sloCSV(e)
		},
		linesAt: linesMid,
		lines:   func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return line(SLOLine(e)) },
	}
}

// costFeature: "cost" and its columns with a price, the table's cost line.
func costFeature() feature {
	return feature{
		name:   "cost",
		jsonAt: jsonMiddle,
		json: func(e *stats.EndpointStats) []jsonMetric {
			if j := costJSON(e); j != nil {
				return []jsonMetric{{"cost", j}}
			}
			return nil
		},
		csvHeader: func(snap *stats.Snapshot) []string {
			if !anyEndpoint(snap, hasCost) {
				return nil
			}
			return costCSVHeader
		},
		csv: func(snap *stats.Snapshot, e *stats.EndpointStats) []string {
			if !anyEndpoint(snap, hasCost) {
				return nil
			}
			return costCSV(e)
		},
		linesAt: linesMid,
		lines:   func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return line(CostLine(e)) },
	}
}

// serverFeature: the server's scrapes, "server" always (null when nothing was scraped), its
// columns always, the table's server line, and its rows in a run where a server was scraped.
func serverFeature() feature {
	return feature{
		name:      "server",
		jsonAt:    jsonMiddle,
		json:      func(e *stats.EndpointStats) []jsonMetric { return []jsonMetric{{"server", serverJSON(e)}} },
		csvHeader: func(*stats.Snapshot) []string { return serverCSVHeader() },
		csv:       func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return serverCSV(e) },
		linesAt:   linesMid,
		lines:     func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return line(ServerLine(e)) },
		rowsAt:    rowsEnd,
		rows: func(snap *stats.Snapshot, e *stats.EndpointStats) []TableRow {
			if !anyEndpoint(snap, scraped) {
				return nil
			}
			return serverRows(e)
		},
	}
}

func hasSLO(e *stats.EndpointStats) bool  { return e.SLO != nil }
func hasCost(e *stats.EndpointStats) bool { return e.Cost != nil }
func scraped(e *stats.EndpointStats) bool { return e.Server != nil && e.Server.Scrapes > 0 }

type jsonSLO struct {
	Attainment *number        `json:"attainment"` // null without counted requests
	GoodputRPS number         `json:"goodput_rps"`
	Violations map[string]int `json:"violations"`
}

type jsonCost struct {
	USD              dollars  `json:"usd"`
	USDPerMTokOutput *dollars `json:"usd_per_mtok_output"` // null without output tokens
}

// dollars keep 6 significant digits: a run's cost is often a fraction of a cent, which the
// summary's 3 decimals would round to 0.
type dollars float64

func formatDollars(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	scale := math.Pow(10, float64(5-int(math.Floor(math.Log10(math.Abs(v))))))
	return strconv.FormatFloat(math.Round(v*scale)/scale, 'f', -1, 64)
}

func (d dollars) MarshalJSON() ([]byte, error) { return []byte(formatDollars(float64(d))), nil }

type jsonServer struct {
	Kind               string    `json:"kind"`
	RequestsRunning    *jsonDist `json:"requests_running"`
	RequestsWaiting    *jsonDist `json:"requests_waiting"`
	KVCacheUsage       *jsonDist `json:"kv_cache_usage"`
	PrefixCacheHitRate *number   `json:"prefix_cache_hit_rate"`
	GenTPS             *number   `json:"gen_tps"`
}

func numberPtr(v float64, ok bool) *number {
	if !ok {
		return nil
	}
	n := number(v)
	return &n
}

func sloJSON(e *stats.EndpointStats) *jsonSLO {
	s := e.SLO
	if s == nil {
		return nil
	}
	return &jsonSLO{
		Attainment: numberPtr(s.Attainment, s.Counted > 0),
		GoodputRPS: number(s.GoodputRPS),
		Violations: s.Violations,
	}
}

func costJSON(e *stats.EndpointStats) *jsonCost {
	c := e.Cost
	if c == nil {
		return nil
	}
	jc := &jsonCost{USD: dollars(c.USD)}
	if c.OutputTokens > 0 {
		per := dollars(c.USDPerMTokOut)
		jc.USDPerMTokOutput = &per
	}
	return jc
}

func serverJSON(e *stats.EndpointStats) *jsonServer {
	s := e.Server
	if s == nil || s.Scrapes == 0 {
		return nil
	}
	return &jsonServer{
		Kind:               string(s.Kind),
		RequestsRunning:    toJSONDist(s.Running),
		RequestsWaiting:    toJSONDist(s.Waiting),
		KVCacheUsage:       toJSONDist(s.KVCacheUsage),
		PrefixCacheHitRate: numberPtr(s.PrefixCacheHitRate.V, s.PrefixCacheHitRate.OK),
		GenTPS:             numberPtr(s.GenTPS.V, s.GenTPS.OK),
	}
}

// The CSV columns: the SLO's when an endpoint has objectives, the cost's when one has a
// price (as the JSON keys), the server's always (empty cells when nothing was scraped).
func sloCSVHeader() []string {
	h := []string{"slo_attainment", "slo_goodput_rps"}
	for _, k := range config.SLOKeys {
		h = append(h, "slo_violations_"+k)
	}
	return h
}

var costCSVHeader = []string{"cost_usd", "cost_usd_per_mtok_output"}

func serverCSVHeader() []string {
	h := []string{"server_kind"}
	for _, k := range []string{"server_requests_running", "server_requests_waiting", "server_kv_cache_usage"} {
		for _, s := range TableColumns {
			h = append(h, k+"_"+s)
		}
	}
	return append(h, "server_prefix_cache_hit_rate", "server_gen_tps")
}

func cell(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return formatNumber(v)
}

func sloCSV(e *stats.EndpointStats) []string {
	s := e.SLO
	if s == nil {
		return make([]string, 2+len(config.SLOKeys))
	}
	row := []string{cell(s.Attainment, s.Counted > 0), formatNumber(s.GoodputRPS)}
	for _, k := range config.SLOKeys {
		if n, ok := s.Violations[k]; ok {
			row = append(row, strconv.Itoa(n))
		} else {
			row = append(row, "")
		}
	}
	return row
}

func costCSV(e *stats.EndpointStats) []string {
	c := e.Cost
	if c == nil {
		return []string{"", ""}
	}
	per := ""
	if c.OutputTokens > 0 {
		per = formatDollars(c.USDPerMTokOut)
	}
	return []string{formatDollars(c.USD), per}
}

func serverCSV(e *stats.EndpointStats) []string {
	s := e.Server
	if s == nil || s.Scrapes == 0 {
		return make([]string, len(serverCSVHeader()))
	}
	row := []string{string(s.Kind)}
	for _, d := range []stats.Dist{s.Running, s.Waiting, s.KVCacheUsage} {
		for _, v := range []float64{d.P50, d.P90, d.P99, d.Mean, d.Min, d.Max} {
			row = append(row, cell(v, d.Count > 0))
		}
	}
	return append(row, cell(s.PrefixCacheHitRate.V, s.PrefixCacheHitRate.OK), cell(s.GenTPS.V, s.GenTPS.OK))
}

// SLOLine is the table's SLO line: the objectives, attainment, goodput and what was missed;
// "" without objectives.
func SLOLine(e *stats.EndpointStats) string {
	s := e.SLO
	if s == nil {
		return ""
	}
	objs := make([]string, len(s.Objectives))
	for i, o := range s.Objectives {
		objs[i] = o.Key + "≤" + o.Limit.String()
	}
	line := "slo " + strings.Join(objs, " ") + ": "
	if s.Counted == 0 {
		return line + "no request yet"
	}
	line += fmt.Sprintf("%s met (%d of %d)  goodput %s req/s", Percent(s.Attainment), s.Good, s.Counted, tableNumber(s.GoodputRPS))
	var missed []string
	for _, o := range s.Objectives {
		if n := s.Violations[o.Key]; n > 0 {
			missed = append(missed, fmt.Sprintf("%s %d", o.Key, n))
		}
	}
	if len(missed) > 0 {
		line += "  missed " + strings.Join(missed, ", ")
	}
	if s.Failed > 0 {
		line += fmt.Sprintf("  failed %d", s.Failed)
	}
	return line
}

// CostLine is the table's cost line; "" without a price.
func CostLine(e *stats.EndpointStats) string {
	c := e.Cost
	if c == nil {
		return ""
	}
	line := "cost " + USD(c.USD)
	if c.OutputTokens > 0 {
		line += "  " + USD(c.USDPerMTokOut) + " per 1M output tokens"
	}
	if c.Price.PerGPUHour() {
		return line + fmt.Sprintf("  (%s per GPU hour over %s)", USD(c.Price.GPUHour), e.RunSpan.Round(1e9))
	}
	return line + fmt.Sprintf("  (%s in, %s out per 1M tokens)", USD(c.Price.Input), USD(c.Price.Output))
}

// ServerLine is the table's line on the server's own figures, or its note; "" when the
// server was not scraped (--server-metrics off).
func ServerLine(e *stats.EndpointStats) string {
	s := e.Server
	switch {
	case s == nil:
		return ""
	case s.Scrapes == 0:
		return "server metrics: " + s.Note
	}
	line := fmt.Sprintf("server %s  %d scrapes", s.Kind, s.Scrapes)
	if s.PrefixCacheHitRate.OK {
		line += "  prefix cache hit " + Percent(s.PrefixCacheHitRate.V)
	}
	if s.GenTPS.OK {
		line += "  gen " + tableNumber(s.GenTPS.V) + " tok/s"
	}
	return line
}

// serverRows are the table's rows of server distributions over scrapes; — when the
// endpoint's server was not scraped.
func serverRows(e *stats.EndpointStats) []TableRow {
	s := e.Server
	if s == nil || s.Scrapes == 0 {
		s = &stats.ServerStats{}
	}
	kv := s.KVCacheUsage
	for _, p := range []*float64{&kv.P50, &kv.P90, &kv.P99, &kv.Mean, &kv.Min, &kv.Max} {
		*p *= 100
	}
	return []TableRow{
		tableRow("server running", s.Running),
		tableRow("server waiting", s.Waiting),
		tableRow("server KV %", kv),
	}
}

// Percent is a 0–1 share as "97.3%".
func Percent(v float64) string { return strconv.FormatFloat(v*100, 'f', 1, 64) + "%" }

// USD is an amount in dollars with enough digits for small ones: $12.35, $0.0123.
func USD(v float64) string {
	switch {
	case v >= 100:
		return "$" + strconv.FormatFloat(v, 'f', 2, 64)
	case v >= 1:
		return "$" + strconv.FormatFloat(v, 'f', 3, 64)
	case v <= 0:
		return "$0"
	}
	decimals := min(2-int(math.Floor(math.Log10(v))), 12) // three significant digits
	return "$" + strconv.FormatFloat(v, 'f', decimals, 64)
}
