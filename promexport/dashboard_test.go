package promexport

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"tokscope/sample"
	"tokscope/sample/sampletest"
)

const dashboardFile = "../grafana/tokscope-dashboard.json"

type dashboardPanel struct {
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		RefID        string `json:"refId"`
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
		Datasource   *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
	Panels []dashboardPanel `json:"panels"` // a row's panels
}

type dashboard struct {
	SchemaVersion int              `json:"schemaVersion"`
	Panels        []dashboardPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Type       string `json:"type"`
			Name       string `json:"name"`
			Query      any    `json:"query"`
			Definition string `json:"definition"`
			Multi      bool   `json:"multi"`
		} `json:"list"`
	} `json:"templating"`
}

// exposedSeries maps every series name the registry exposes (histogram _bucket/_sum/_count,
// summary _sum/_count, …) to the label names it carries.
func exposedSeries(t *testing.T) map[string][]string {
	t.Helper()
	e := New(testEndpoints())
	// Families that only exist once observed.
	e.Observe(sampletest.OK("local", "m1", 1, time.Time{}).Times(0, 10*ms).Role(11*ms).
		ChunksAt(3, 20*ms, 30*ms).Tokens(2, sample.SourceUsage).EndAt(40 * ms).Ptr())
	e.Observe(&sample.Sample{Endpoint: "local", Model: "m1", Seq: 2, Outcome: sample.OutcomeError, ErrorKind: "http_500"})
	families, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string][]string{}
	for _, mf := range families {
		var labels []string
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(labels, l.GetName()) {
					labels = append(labels, l.GetName())
				}
			}
		}
		name := mf.GetName()
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM:
			series[name+"_bucket"] = append(slices.Clone(labels), "le")
			series[name+"_sum"] = labels
			series[name+"_count"] = labels
		case dto.MetricType_SUMMARY:
			series[name] = append(slices.Clone(labels), "quantile")
			series[name+"_sum"] = labels
			series[name+"_count"] = labels
		default:
			series[name] = labels
		}
	}
	return series
}

var (
	stringLiteral = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	metricName    = regexp.MustCompile(`\b(?:tokscope|go|process)_[a-zA-Z0-9_:]*`)
	groupingLabel = regexp.MustCompile(`\b(?:by|on|ignoring|without)\s*\(([^)]*)\)`)
	matcherLabel  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	selector      = regexp.MustCompile(`\{[^}]*\}`)
	legendLabel   = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
)

// TestDashboardMatchesExporter keeps grafana/tokscope-dashboard.json from drifting: every
// metric a panel queries exists in the Exporter's registry, every label it groups, matches or
// prints exists on those metrics, and every tokscope metric is charted somewhere.
func TestDashboardMatchesExporter(t *testing.T) {
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.SchemaVersion < 39 {
		t.Errorf("schemaVersion %d, want ≥ 39", d.SchemaVersion)
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		switch v.Name {
		case "datasource":
			if v.Type != "datasource" || v.Query != "prometheus" {
				t.Errorf("datasource variable: type %q query %v, want a prometheus datasource variable", v.Type, v.Query)
			}
		case "endpoint":
			if !v.Multi || !strings.Contains(v.Definition, "label_values(tokscope_requests_total, endpoint)") {
				t.Errorf("endpoint variable: multi %v definition %q", v.Multi, v.Definition)
			}
		}
	}
	if !vars["datasource"] || !vars["endpoint"] {
		t.Fatalf("templating lacks the datasource or endpoint variable: %v", vars)
	}

	exposed := exposedSeries(t)
	used := map[string]bool{}
	var check func(panels []dashboardPanel)
	check = func(panels []dashboardPanel) {
		for _, p := range panels {
			if p.Type == "row" {
				check(p.Panels)
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q does not use the $datasource variable", p.Title)
			}
			for _, target := range p.Targets {
				checkExpr(t, p.Title, target.Expr, target.LegendFormat, exposed, used)
				if target.Datasource == nil || target.Datasource.UID != "${datasource}" {
					t.Errorf("panel %q query %s does not use the $datasource variable", p.Title, target.RefID)
				}
			}
		}
	}
	check(d.Panels)

	for name := range exposed {
		family := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if strings.HasPrefix(name, "tokscope_") && !used[name] && !used[family+"_bucket"] {
			t.Errorf("the dashboard never charts %s", name)
		}
	}
}

func checkExpr(t *testing.T, panel, expr, legend string, exposed map[string][]string, used map[string]bool) {
	t.Helper()
	if strings.TrimSpace(expr) == "" {
		t.Errorf("panel %q has an empty query", panel)
		return
	}
	bare := stringLiteral.ReplaceAllString(expr, `""`)
	names := metricName.FindAllString(bare, -1)
	labels := []string{"job", "instance"} // added by Prometheus at scrape time
	ownMetric := false
	for _, n := range names {
		l, ok := exposed[n]
		if !ok {
			t.Errorf("panel %q queries %s, which the Exporter does not expose", panel, n)
			continue
		}
		used[n] = true
		labels = append(labels, l...)
		ownMetric = ownMetric || strings.HasPrefix(n, "tokscope_")
	}
	if !ownMetric {
		t.Errorf("panel %q query %q reads no tokscope_ metric", panel, expr)
	}
	var referenced []string
	for _, m := range groupingLabel.FindAllStringSubmatch(bare, -1) {
		for l := range strings.SplitSeq(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				referenced = append(referenced, l)
			}
		}
	}
	for _, sel := range selector.FindAllString(bare, -1) {
		for _, m := range matcherLabel.FindAllStringSubmatch(sel, -1) {
			referenced = append(referenced, m[1])
		}
	}
	for _, m := range legendLabel.FindAllStringSubmatch(legend, -1) {
		referenced = append(referenced, m[1])
	}
	for _, l := range referenced {
		if !slices.Contains(labels, l) {
			t.Errorf("panel %q uses label %q, which %v do not carry", panel, l, names)
		}
	}
}
