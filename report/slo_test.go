package report

import (
	"html"
	"strings"
	"testing"
	"time"
	"tokscope/feature"

	"tokscope/config"
	"tokscope/servermetrics"
	"tokscope/stats"
)

// The SLO section: its chart draws each bin's share of good requests, the same verdicts the
// summary counts; its table carries the summary's attainment, goodput and cost.
func TestSLOSection(t *testing.T) {
	cfg, samples := synthRun(synthEndpoints, 60, 2, false)
	cfg[0].SLO = config.SLO{TTFT: 100 * time.Millisecond} // fast-gpu: about half its TTFTs
	cfg[2].SLO = config.SLO{TTFT: time.Second}            // flaky-cloud: all but the errors
	cfg[2].Price = &config.Price{Input: 0.15, Output: 0.6}
	in := synthInput(t, cfg, samples)
	page := render(t, in)
	if !strings.Contains(page, `<section id="slo">`) {
		t.Fatal("no SLO section")
	}
	figs := figures(page)
	att := figs["slo-attainment"]
	if !strings.Contains(att, "<svg") {
		t.Fatalf("attainment chart not drawn: %s", att)
	}
	texts := strings.Join(svgTexts(att), "|")
	if !strings.Contains(texts, "fast-gpu") || !strings.Contains(texts, "flaky-cloud") || strings.Contains(texts, "slow-cpu") {
		t.Errorf("legend %q: the endpoints with objectives, only", texts)
	}
	// The chart's verdicts are the summary's: the same good/counted totals.
	for i, name := range []string{"fast-gpu", "flaky-cloud"} {
		var counted, good int
		for _, r := range in.Requests.eps[in.Requests.byName[name]].requests {
			if r.slo().Counted {
				counted++
				if r.slo().Good {
					good++
				}
			}
		}
		st := in.Summary.Endpoints[[]int{0, 2}[i]].SLO
		if counted != st.Counted || good != st.Good || counted == 0 || good == 0 || good == counted && name == "fast-gpu" {
			t.Errorf("%s: report judged %d/%d, summary %d/%d", name, good, counted, st.Good, st.Counted)
		}
	}
	flaky := in.Summary.Endpoints[2]
	row := "<td>flaky-cloud</td><td>ttft ≤ 1s</td>"
	if !strings.Contains(page, row) || !strings.Contains(page, "<td>"+"$") {
		t.Errorf("table lacks flaky-cloud's row %q with its cost", row)
	}
	if flaky.Cost == nil || !strings.Contains(page, "<td>"+html.EscapeString(feature.USD(flaky.Cost.USD))+"</td>") {
		t.Errorf("table lacks the cost %v", flaky.Cost)
	}

	// No objective and no price anywhere: no section.
	cfg2, samples2 := synthRun(synthEndpoints[:1], 10, 1, false)
	if strings.Contains(render(t, synthInput(t, cfg2, samples2)), `<section id="slo">`) {
		t.Error("an SLO section without objectives or prices")
	}
}

// --slo on a replay: cli gives the replayed endpoints the objectives (a record keeps none), the
// Collector built from them judges every request as the Aggregator does, and a Clone (the
// TUI's w key) keeps them.
func TestSLOSectionReplay(t *testing.T) {
	eps, samples := synthRun(synthEndpoints[:1], 20, 1, false)
	slo := config.SLO{TTFT: 100 * time.Millisecond}
	for i := range eps {
		eps[i].SLO = slo
	}
	agg := stats.New(eps)
	col := NewCollector(eps)
	for i := range samples {
		agg.Add(&samples[i])
		col.Add(&samples[i])
	}
	page := render(t, Input{Summary: agg.Snapshot(time.Now()), Requests: col})
	if !strings.Contains(figures(page)["slo-attainment"], "<svg") {
		t.Fatal("replayed requests were not judged")
	}
	if c := col.Clone(); c.eps[0].cfg.SLO != slo {
		t.Error("Clone drops the objectives")
	}
}

func TestServerSection(t *testing.T) {
	cfg, samples := synthRun(synthEndpoints[:2], 20, 1, false)
	agg := stats.New(cfg)
	for i := range samples {
		agg.Add(&samples[i])
	}
	v := func(x float64) servermetrics.Value { return servermetrics.Value{V: x, OK: true} }
	start := samples[0].Start
	for i := range 30 {
		agg.ObserveServer(servermetrics.Update{Endpoint: 0, Reading: servermetrics.Reading{
			Kind: servermetrics.KindVLLM, At: start.Add(time.Duration(i) * time.Second),
			Running: v(2), Waiting: v(float64(i % 4)), KVCacheUsage: v(0.25), GenTPS: v(240),
			GenTokens: v(240), GenSpan: time.Second,
		}})
	}
	agg.ObserveServer(servermetrics.Update{Endpoint: 1, State: servermetrics.StateUnavailable, Note: "HTTP 404"})
	snap := agg.Snapshot(start.Add(time.Minute))
	sec := featureSectionOf(t, "server", &snap)
	if len(sec.Series) != 4 || sec.Table == nil || len(sec.Table.Rows) != 1 {
		t.Fatalf("section %+v: four series and one row (the endpoint that was scraped)", sec)
	}
	if got := sec.Table.Rows[0]; strings.Join(got, "|") != "fast-gpu|vllm|30|2.0 / 2.0|1.0 / 3.0|25.0 / 25.0|—|240.0" {
		t.Errorf("row %q", got)
	}
	col := NewCollector(cfg)
	for i := range samples {
		col.Add(&samples[i])
	}
	page := render(t, Input{Summary: snap, Requests: col})
	figs := figures(page)
	for _, id := range []string{"server-running", "server-waiting", "server-kv", "server-gen"} {
		if !strings.Contains(figs[id], "<svg") {
			t.Errorf("%s not drawn", id)
		}
	}
	// Nothing scraped: the section has no data and is left out.
	empty := stats.New(cfg).Snapshot(start)
	if s := featureSectionOf(t, "server", &empty); len(s.Series) != 0 || s.Table != nil {
		t.Errorf("empty section %+v", s)
	}
}

// featureSectionOf is the report section feature name (package feature) makes of snap.
func featureSectionOf(t *testing.T, name string, snap *stats.Snapshot) Section {
	t.Helper()
	for _, f := range feature.All() {
		if f.Name == name && f.Section != nil {
			return f.Section(&feature.Report{Snap: snap})
		}
	}
	t.Fatalf("no feature %q with a report section", name)
	return Section{}
}

// Every feature's section has its place on the page, and every place names a feature that
// has a section: a new feature's section is drawn, and a renamed one is not lost.
func TestEveryFeatureSectionHasAPlace(t *testing.T) {
	t.Parallel()
	placed := map[string]bool{}
	for _, o := range pageOrder {
		if o.feature != "" {
			placed[o.feature] = true
		}
	}
	for _, f := range feature.All() {
		if f.Section == nil {
			continue
		}
		if !placed[f.Name] {
			t.Errorf("feature %q has a report section but no place in pageOrder", f.Name)
		}
		delete(placed, f.Name)
	}
	for name := range placed {
		t.Errorf("pageOrder places %q, which is no feature with a section", name)
	}
}
