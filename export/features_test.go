package export

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"tokscope/feature"

	"tokscope/metric"
	"tokscope/stats"
)

// richSnapshot is a run in which every feature of feature.All() has something to show: the SLO,
// cost and server figures of sloSnapshot, and on its first endpoint the GPUs, figures by turn,
// agent sessions and rate limits, in an open-loop run. A new feature gives its figures here.
func richSnapshot() stats.Snapshot {
	snap := sloSnapshot()
	e := &snap.Endpoints[0]
	e.GPU = gpuSnapshot().Endpoints[0].GPU
	rate := 0.4567
	e.CacheHitRate = &rate
	e.Turns = &stats.TurnStats{Splits: [][]stats.Dist{
		{dist(3, 40, 50, 60, 45, 30, 60), dist(3, 66, 66, 66, 66, 66, 66)},
		{dist(6, 20, 25, 30, 22, 15, 30), dist(6, 143, 218, 218, 180.5, 143, 218)},
	}}
	ideal := 0.8
	e.Sessions = &stats.SessionStats{Turns: 12, IdealHitRate: &ideal, Completed: 2, Duration: dist(2, 1000, 1500, 1500, 1250, 1000, 1500)}
	e.RateLimitAt, e.RateLimitRemainingRequests, e.RateLimitRemainingTokens = snap.At, 12, -1
	e.BackoffTotal = 3500 * time.Millisecond
	snap.Rate, e.Arrivals, e.DroppedArrivals, e.Queue = 2.5, 40, 3, dist(37, 3, 9, 12, 4, 0, 12)
	e.ServerTiming = stats.ServerTiming{Source: "ollama", ModelLoads: 1, FirstLoadSeq: 1, FirstLoadMs: 2400}
	e.Whole.Set(metric.ServerTTFT, dist(8, 30, 40, 45, 33, 25, 45))
	return snap
}

// jsonKeys are the keys of the first endpoint object of a JSON summary, in order.
func jsonKeys(t *testing.T, b []byte) []string {
	t.Helper()
	var doc struct {
		Endpoints []json.RawMessage `json:"endpoints"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Endpoints) == 0 {
		t.Fatalf("JSON %v: %s", err, b)
	}
	dec := json.NewDecoder(bytes.NewReader(doc.Endpoints[0]))
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestEveryFeatureEverywhere: each feature of feature.All() shows in every output it has a part
// of, at its place: its JSON members between the registered metrics of the slot it names, its
// CSV columns together in the header, its table lines and rows in the table, in their slots. A
// feature with nothing to show in richSnapshot fails: give it figures there.
func TestEveryFeatureEverywhere(t *testing.T) {
	t.Parallel()
	snap := richSnapshot()
	e := &snap.Endpoints[0]
	var j, c bytes.Buffer
	if err := WriteJSON(&j, snap); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&c, snap); err != nil {
		t.Fatal(err)
	}
	keys := jsonKeys(t, j.Bytes())
	rows, _ := csvOf(t, c.Bytes())
	header := "," + strings.Join(rows[0], ",") + ","
	te := TableEndpoints(&snap)[0]

	// The slots' bounds: a middle member comes after the last Core metric and before the first
	// Workload metric; tail and last members after the workload's scalars.
	lastCore := slices.Index(keys, metric.Get(metric.TokensPerChunk).JSONKey())
	firstWork := slices.Index(keys, metric.Get(metric.PromptTokens).JSONKey())
	lastScalar := slices.Index(keys, "output_target")
	outTokens := slices.IndexFunc(te.Lines, func(l string) bool { return strings.HasPrefix(l, "output tokens") })
	lastMetricRow := slices.IndexFunc(te.Rows, func(r feature.TableRow) bool { return r.Label == metric.Get(metric.OutputLen).Label })
	if lastCore < 0 || firstWork < 0 || lastScalar < 0 || outTokens < 0 || lastMetricRow < 0 {
		t.Fatalf("the summary's own anchors are missing: keys %v, lines %v", keys, te.Lines)
	}
	for _, f := range feature.All() {
		if f.JSON == nil && f.CSVHeader == nil && f.Lines == nil && f.Rows == nil {
			continue // no part of the summary (the capacity search: a document of its own)
		}
		shown := false
		if f.JSON != nil {
			for _, m := range f.JSON(e) {
				shown = true
				i := slices.Index(keys, m.Key)
				switch {
				case i < 0:
					t.Errorf("%s: JSON lacks %q", f.Name, m.Key)
				case f.JSONAt == feature.JSONMiddle && (i < lastCore || i > firstWork),
					f.JSONAt != feature.JSONMiddle && i < lastScalar:
					t.Errorf("%s: JSON key %q at %d, out of its slot (keys %v)", f.Name, m.Key, i, keys)
				}
			}
		}
		if f.CSVHeader != nil {
			if cols := f.CSVHeader(&snap); len(cols) > 0 {
				shown = true
				if !strings.Contains(header, ","+strings.Join(cols, ",")+",") {
					t.Errorf("%s: the CSV header lacks its columns %v", f.Name, cols)
				}
			}
		}
		if f.Lines != nil {
			for _, l := range f.Lines(&snap, e) {
				shown = true
				i := slices.Index(te.Lines, l)
				switch {
				case i < 0:
					t.Errorf("%s: the table lacks its line %q", f.Name, l)
				case (f.LinesAt == feature.LinesTail) != (i > outTokens):
					t.Errorf("%s: the table's line %q is on the wrong side of the output tokens", f.Name, l)
				}
			}
		}
		if f.Rows != nil {
			for _, r := range f.Rows(&snap, e) {
				shown = true
				if i := slices.IndexFunc(te.Rows, func(x feature.TableRow) bool { return x.Label == r.Label }); i <= lastMetricRow {
					t.Errorf("%s: the table's row %q at %d, want after the registered metrics' rows", f.Name, r.Label, i)
				}
			}
		}
		if !shown {
			t.Errorf("%s shows nothing in richSnapshot: give it figures there", f.Name)
		}
	}
}

// featureNamed is the feature of that name in feature.All().
func featureNamed(t *testing.T, name string) feature.Feature {
	t.Helper()
	for _, f := range feature.All() {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no feature %q in feature.All()", name)
	return feature.Feature{}
}
