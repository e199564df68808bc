package report

import (
	"bytes"
	"encoding/json"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"tokscope/feature"

	"tokscope/cli/clitest"
	"tokscope/config"
	"tokscope/export"
	"tokscope/metric"
	"tokscope/record"
	"tokscope/sample"
	"tokscope/stats"
	"tokscope/sweep"
)

func render(t testing.TB, in Input) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var figureRE = regexp.MustCompile(`(?s)<figure id="([^"]+)">(.*?)</figure>`)

// figures returns each figure's inner HTML by id.
func figures(page string) map[string]string {
	out := map[string]string{}
	for _, m := range figureRE.FindAllStringSubmatch(page, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// svgTexts is every <text> of a chart, unescaped.
func svgTexts(fig string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?s)<text[^>]*>(.*?)</text>`).FindAllStringSubmatch(fig, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

func sweepReport(eps []config.Endpoint) *sweep.Report {
	rep := &sweep.Report{Plan: sweep.Plan{Concurrency: []int{1, 2, 4, 8}, StepDuration: 20 * time.Second}, TTFTFrom: "first-token", Complete: true}
	for i, c := range rep.Plan.Concurrency {
		for k, ep := range eps {
			per := 100 / float64(k+1) / (1 + 0.15*float64(c))
			rep.Results = append(rep.Results, sweep.Result{
				Step: i + 1, Endpoint: ep.Name, Model: ep.Model, Concurrency: c, Duration: 20 * time.Second,
				Requests: 10 * c, OK: 10 * c, TokenSource: "usage", AggregateTPS: per * float64(c),
				DecodeTPS: stats.Dist{Count: 10 * c, P50: per}, TTFT: stats.Dist{Count: 10 * c, P50: 80 * float64(c) * float64(k+1)},
			})
		}
	}
	return rep
}

// Every chart is present; one with data has its title, both axis labels (with units) and a
// legend naming every endpoint that has data in it.
func TestEveryChartHasTitleAxesAndLegend(t *testing.T) {
	cfg, samples := synthRun(synthEndpoints, 60, 3, true)
	in := synthInput(t, cfg, samples)
	in.Sweep = sweepReport(cfg)
	start, _ := in.Requests.Span()
	in.Sections = []Section{{ID: "server", Title: "Server metrics", Series: []TimeSeries{{
		ID: "server-kv", Title: "KV-cache usage", YLabel: "KV cache used (%)",
		Points: map[string][]TimePoint{"slow-cpu": {{At: start, Value: 10}, {At: start.Add(5 * time.Second), Value: 40}}},
	}}}}
	page := render(t, in)
	figs := figures(page)

	want := map[string]struct {
		title, x, y string
		legend      []string
	}{
		"ts-throughput":    {"Output tokens per second", "time since start (s)", "output tok/s", []string{"fast-gpu", "slow-cpu", "flaky-cloud"}},
		"ts-ttft":          {"TTFT of each request, at the time it started", "time since start (s)", "TTFT (ms)", []string{"fast-gpu", "slow-cpu", "flaky-cloud"}},
		"ts-inflight":      {"Streams in flight", "time since start (s)", "streams (mean over bin)", []string{"fast-gpu", "slow-cpu", "flaky-cloud"}},
		"ts-errors":        {"Errors and truncated streams", "time since start (s)", "failed requests per second", []string{"flaky-cloud"}},
		"prompt-ttft":      {"TTFT against prompt size", "prompt tokens (from usage)", "TTFT (ms)", []string{"fast-gpu", "slow-cpu", "flaky-cloud"}},
		"sweep-tradeoff":   {"Throughput against per-stream speed", "per-stream decode tok/s (p50)", "aggregate output tok/s", []string{"fast-gpu", "slow-cpu", "flaky-cloud"}},
		"sweep-throughput": {"Aggregate throughput by concurrency", "concurrency (streams per endpoint)", "aggregate output tok/s", []string{"fast-gpu", "slow-cpu", "flaky-cloud"}},
		"sweep-ttft":       {"TTFT p50 by concurrency", "concurrency (streams per endpoint)", "TTFT p50 (ms)", []string{"fast-gpu", "slow-cpu", "flaky-cloud"}},
		"server-kv":        {"KV-cache usage", "time since start (s)", "KV cache used (%)", []string{"slow-cpu"}},
	}
	// A CDF per registered metric with a Chart, every endpoint on it and the summary's marks.
	for _, id := range metric.IDs() {
		if c := metric.Get(id).Chart; c != nil {
			want["dist-"+c.ID] = struct {
				title, x, y string
				legend      []string
			}{c.Title, c.XLabel, c.YLabel, []string{"fast-gpu", "slow-cpu", "flaky-cloud", "p50 · p90 · p99 (summary)"}}
		}
	}
	if len(figs) != len(want) {
		t.Errorf("%d figures, want %d: %v", len(figs), len(want), keys(figs))
	}
	for id, w := range want {
		fig, ok := figs[id]
		if !ok {
			t.Errorf("figure %s missing", id)
			continue
		}
		if !strings.Contains(fig, `<svg class="chart"`) {
			t.Errorf("%s: no chart drawn", id)
			continue
		}
		texts := svgTexts(fig)
		for _, s := range append([]string{w.title, w.x, w.y}, w.legend...) {
			if !contains(texts, s) {
				t.Errorf("%s: no text %q among %q", id, s, texts)
			}
		}
		if id != "ts-errors" && id != "server-kv" && contains(texts, "no data") {
			t.Errorf("%s: says no data", id)
		}
	}
	if texts := svgTexts(figs["ts-errors"]); contains(texts, "fast-gpu") {
		t.Errorf("the errors chart lists fast-gpu, which had none: %q", texts)
	}
	// One colour per endpoint, the same everywhere: flaky-cloud (second by name) is orange
	// in the error chart, where it is the only endpoint.
	if !strings.Contains(figs["ts-errors"], "#E69F00") {
		t.Error("flaky-cloud is not drawn in its colour in the errors chart")
	}
	for _, sec := range []string{"summary", "timeseries", "distributions", "prompt", "sweep", "server", "settings"} {
		if !strings.Contains(page, `<section id="`+sec+`">`) {
			t.Errorf("section %s missing", sec)
		}
	}
	if !strings.Contains(page, "Started 2025-03-14 09:26:53") || !strings.Contains(page, "tokscope v0.0.0-test") {
		t.Error("start time or version missing from the header")
	}
}

// timeSeriesFigures are the charts over the run's time: output tok/s, TTFT, streams in flight,
// errors.
const timeSeriesFigures = 4

// chartedMetrics is how many registered metrics have a distribution chart (a CDF each).
func chartedMetrics() int {
	n := 0
	for _, id := range metric.IDs() {
		if metric.Get(id).Chart != nil {
			n++
		}
	}
	return n
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// With nothing measured, every chart says "no data" instead of drawing an empty frame, and
// the sections that need data of their own (prompt sizes, sweep, extensions) are left out.
func TestNoDataInsteadOfEmptyCharts(t *testing.T) {
	cfg := []config.Endpoint{{Name: "idle", Model: "m"}}
	in := Input{Summary: stats.New(cfg).Snapshot(time.Now()), Requests: NewCollector(cfg),
		Sections: []Section{{ID: "server", Title: "Server metrics", Series: []TimeSeries{{ID: "server-kv", Title: "KV"}}}}}
	page := render(t, in)
	figs := figures(page)
	if want := timeSeriesFigures + chartedMetrics(); len(figs) != want {
		t.Fatalf("%d figures, want the %d of the time series and distributions: %v", len(figs), want, keys(figs))
	}
	for id, fig := range figs {
		if strings.Contains(fig, "<svg") {
			t.Errorf("%s: drawn without data", id)
		}
		if !strings.Contains(fig, `class="nodata"`) {
			t.Errorf("%s: no 'no data' note: %s", id, fig)
		}
	}
	if !strings.Contains(figs["ts-throughput"], "<p>no data</p>") || !strings.Contains(figs["ts-errors"], "no errors and no truncated streams") {
		t.Error("the no-data notes are not as expected")
	}
	for _, sec := range []string{"prompt", "sweep", "server"} {
		if strings.Contains(page, `<section id="`+sec+`">`) {
			t.Errorf("section %s shown without data", sec)
		}
	}
	// A nil Collector is no data too.
	in.Requests = nil
	if figs := figures(render(t, in)); len(figs) != timeSeriesFigures+chartedMetrics() || strings.Contains(figs["dist-ttft"], "<svg") {
		t.Error("a nil Collector does not read as no data")
	}
}

var attrRE = regexp.MustCompile(`(?i)\s(src|href|xlink:href|action|poster|data)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)`)

// The page fetches nothing: no script, stylesheet link, import or url(); every src/href
// points inside the page.
func TestOfflineNothingFetched(t *testing.T) {
	cfg, samples := synthRun(synthEndpoints, 40, 2, true)
	in := synthInput(t, cfg, samples)
	in.Sweep = sweepReport(cfg)
	in.Settings = append(in.Settings, Setting{"endpoint fast-gpu", "https://api.example.com/v1 (from the config)"})
	page := render(t, in)
	for _, bad := range []string{"<script", "<link", "<iframe", "<object", "<embed", "<img", "@import", "url("} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	refs := attrRE.FindAllStringSubmatch(page, -1)
	if len(refs) == 0 {
		t.Fatal("no src/href at all: the nav links are missing, so this test looks at nothing")
	}
	for _, m := range refs {
		v := strings.Trim(m[2], `"'`)
		low := strings.ToLower(v)
		if strings.Contains(low, "http://") || strings.Contains(low, "https://") || strings.HasPrefix(low, "//") || !strings.HasPrefix(v, "#") {
			t.Errorf("%s=%q points outside the page", m[1], v)
		}
	}
	if !strings.Contains(page, "https://api.example.com/v1") {
		t.Error("the settings text lost the endpoint's URL (text may name URLs; only resources must not)")
	}
}

// The summary's figures are the JSON summary's, from the same Snapshot, rounded as -o table
// rounds them; the charts' data agree with it too.
func TestFiguresAgreeWithJSONSummary(t *testing.T) {
	cfg, samples := synthRun(synthEndpoints, 120, 3, false)
	in := synthInput(t, cfg, samples)
	page := render(t, in)

	var js struct {
		Endpoints []map[string]json.RawMessage `json:"endpoints"`
	}
	var buf bytes.Buffer
	if err := export.WriteJSON(&buf, in.Summary); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	cards := regexp.MustCompile(`(?s)<div class="card"[^>]*>\s*<h3><span[^>]*></span> ([^<]+)<span.*?</table>`).FindAllStringSubmatch(page, -1)
	if len(cards) != len(js.Endpoints) {
		t.Fatalf("%d summary cards, %d endpoints in the JSON", len(cards), len(js.Endpoints))
	}
	rowRE := regexp.MustCompile(`<tr><td>([^<]+)</td>((?:<td>[^<]*</td>)+)</tr>`)
	cellRE := regexp.MustCompile(`<td>([^<]*)</td>`)
	keyOf := map[string]string{"TTFB ms": "ttfb_ms", "TTFT ms": "ttft_ms", "TTFA ms": "ttfa_ms", "decode tok/s": "decode_tps",
		"e2e tok/s": "e2e_tps", "TPOT ms": "tpot_ms", "ITL ms": "itl_ms"}
	checked := 0
	for _, card := range cards {
		name := card[1]
		var je map[string]json.RawMessage
		for _, e := range js.Endpoints {
			if string(e["name"]) == strconv.Quote(name) {
				je = e
			}
		}
		if je == nil {
			t.Fatalf("card %q is not in the JSON summary", name)
		}
		for _, k := range []string{"requests", "ok", "errors"} {
			if !strings.Contains(card[0], k+" "+string(je[k])) {
				t.Errorf("%s: card does not say %s %s", name, k, je[k])
			}
		}
		for _, row := range rowRE.FindAllStringSubmatch(card[0], -1) {
			key, ok := keyOf[row[1]]
			if !ok {
				continue
			}
			var d map[string]float64
			if err := json.Unmarshal(je[key], &d); err != nil || d == nil {
				t.Fatalf("%s %s: %s", name, key, je[key])
			}
			for i, c := range cellRE.FindAllStringSubmatch(row[2], -1) {
				v, err := strconv.ParseFloat(c[1], 64)
				if err != nil {
					t.Fatalf("%s %s: cell %q", name, row[1], c[1])
				}
				want := d[feature.TableColumns[i]]
				// -o table shows about four significant digits: 1234.5, 41.23, 0.125.
				tol := 0.0051
				if math.Abs(want) >= 100 {
					tol = 0.051
				}
				if math.Abs(v-want) > tol {
					t.Errorf("%s %s %s: report %v, JSON %v", name, row[1], feature.TableColumns[i], v, want)
				}
				checked++
			}
		}
	}
	if checked != len(js.Endpoints)*7*6 {
		t.Errorf("checked %d cells, want %d", checked, len(js.Endpoints)*7*6)
	}

	// The charts are drawn from the same requests: per endpoint, the tokens of the
	// throughput series add up to output_tokens, there is one TTFT point per ok request, and
	// the exact median of the drawn TTFTs is the summary's p50 within HdrHistogram's 0.1 %.
	for _, e := range endpointsOf(&in) {
		var tokens int64
		for _, micro := range e.series.tokens {
			tokens += micro
		}
		if got := float64(tokens) / 1e6; math.Abs(got-float64(e.stats.OutputTokens)) > 1e-3 {
			t.Errorf("%s: the throughput series holds %v tokens, the summary %d", e.name, got, e.stats.OutputTokens)
		}
		var ttfts []float64
		for _, r := range e.series.requests {
			if r.ttftOK {
				ttfts = append(ttfts, r.ttft)
			}
		}
		if len(ttfts) != e.stats.OK {
			t.Errorf("%s: %d TTFT points, %d ok requests", e.name, len(ttfts), e.stats.OK)
		}
		xs, ys := feature.CDF(ttfts)
		med := math.NaN()
		for i := range ys {
			if ys[i] >= 0.5 {
				med = xs[i]
				break
			}
		}
		if math.Abs(med-e.stats.Whole.TTFT.P50) > 0.002*med {
			t.Errorf("%s: median TTFT drawn %v, summary p50 %v", e.name, med, e.stats.Whole.TTFT.P50)
		}
	}
}

// A report written from a replay of the record equals the live one: the record keeps
// instants to the microsecond, the replay sees the endpoints in another order and the
// requests in file order, and neither shows.
func TestReplayEqualsLive(t *testing.T) {
	cfg, samples := synthRun(synthEndpoints, 80, 3, true)
	live := synthInput(t, cfg, samples)
	live.Sweep = nil

	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := record.NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(samples) - 1; i >= 0; i-- { // another order than the live one
		if err := rec.Write(&samples[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	recs := clitest.WholeRecords(t, path)
	// As --replay builds its endpoints: in order of first appearance, no base URL.
	var eps []config.Endpoint
	seen := map[string]bool{}
	var replayed []sample.Sample
	for _, r := range recs {
		s := r.Sample()
		if !seen[s.Endpoint] {
			seen[s.Endpoint] = true
			eps = append(eps, config.Endpoint{Name: s.Endpoint, Model: s.Model})
		}
		replayed = append(replayed, s)
	}
	if eps[0].Name == cfg[0].Name {
		t.Fatal("the replay sees the endpoints in the live order: this test would not show that order does not matter")
	}
	replay := synthInput(t, eps, replayed)
	a, b := render(t, live), render(t, replay)
	if a != b {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		lo := max(0, i-200)
		t.Fatalf("the replay's report differs from the live one at byte %d:\nlive:   %q\nreplay: %q", i, a[lo:min(len(a), i+200)], b[lo:min(len(b), i+200)])
	}
}

// A long run stays small: 10,000 requests of 256 chunks over four endpoints give a report
// under 5 MB (per-second series, scatters that become bands, CDFs through 200 quantiles).
func TestTenThousandRequestsUnderFiveMB(t *testing.T) {
	eps := append(synthEndpoints[:3:3], synthEndpoint{"reasoner", "r1", 250 * time.Millisecond, 45, 256, 0.01})
	for i := range eps {
		eps[i].tokens = 256
	}
	cfg, samples := synthRun(eps, 2500, 16, true)
	in := synthInput(t, cfg, samples)
	if n := len(samples) - len(eps); n != 10000 {
		t.Fatalf("%d counted requests, want 10000", n)
	}
	start := time.Now()
	page := render(t, in)
	took := time.Since(start)
	const limit = 5 << 20
	t.Logf("10,000 requests: report %d bytes (%.2f MB), rendered in %v", len(page), float64(len(page))/(1<<20), took.Round(time.Millisecond))
	if len(page) >= limit {
		t.Errorf("report of 10,000 requests is %d bytes, over %d", len(page), limit)
	}
	figs := figures(page)
	if !strings.Contains(figs["ts-ttft"], "<svg") || !strings.Contains(figs["ts-ttft"], "median (line) and p10–p90 (band)") {
		t.Error("10,000 TTFT points are not drawn as a band")
	}
}

// WriteFile replaces the file whole and leaves no temporary file behind.
func TestWriteFileIsWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.html")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, samples := synthRun(synthEndpoints[:1], 5, 1, false)
	if err := WriteFile(path, synthInput(t, cfg, samples)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(b), "<!DOCTYPE html>") || !strings.HasSuffix(string(b), "</html>\n") {
		t.Fatalf("report not written whole: %v %.40q", err, b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "run.html"), Input{}); err == nil {
		t.Error("writing into a missing directory did not fail")
	}
}

// A clone is the same report and does not change when the original takes more requests.
func TestCloneIsIndependent(t *testing.T) {
	cfg, samples := synthRun(synthEndpoints, 20, 2, false)
	in := synthInput(t, cfg, samples[:30])
	before := render(t, in)
	clone := in
	clone.Requests = in.Requests.Clone()
	if render(t, clone) != before {
		t.Fatal("the clone draws another report")
	}
	for i := 30; i < len(samples); i++ {
		in.Requests.Add(&samples[i])
	}
	if render(t, clone) != before {
		t.Error("the clone changed with the original")
	}
	if render(t, in) == before {
		t.Error("the original did not change: this test shows nothing")
	}
}
