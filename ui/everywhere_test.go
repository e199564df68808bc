package ui

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"html"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/export"
	"tokscope/feature"
	"tokscope/metric"
	"tokscope/promexport"
	"tokscope/record"
	"tokscope/report"
	"tokscope/sample"
	"tokscope/sample/sampletest"
	"tokscope/stats"
)

// everySample is an ok request that defines every registered metric: a new connection (DNS,
// connect, TLS), reasoning then an answer, usage with prompt and cached tokens.
func everySample(t0 time.Time) sample.Sample {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	// The server's own clock: a llama.cpp-style timing with speculative decoding and a queue.
	st := sample.NoServerTiming("llamacpp")
	st.TTFTms, st.QueueMs, st.DecodeMs, st.DecodeTokens, st.DraftN, st.DraftAccepted = 31.25, 2.5, 80.5, 9, 12, 9
	b := sampletest.OK("e", "m", 1, t0).NewConn(ms(1.5), ms(2.25), ms(4.5)).Times(ms(9), ms(30)).Role(ms(35))
	for i, at := range []float64{40, 50, 60, 65, 70, 90, 110, 130} {
		if i < 4 {
			b.Chunk(ms(at), 0, 5)
		} else {
			b.Chunk(ms(at), 5, 0)
		}
	}
	return b.Tokens(9, sample.SourceUsage).Prompt(500, 100).EndAfter(ms(1)).With(func(s *sample.Sample) {
		s.ReasoningTokens, s.HTTPStatus, s.Server = 4, 200, &st
	}).Sample()
}

func values(m *metric.Metric, s *sample.Sample) []float64 {
	var vs []float64
	m.Read(s, metric.Context{}, metric.AddFunc(func(v float64) { vs = append(vs, v) }))
	return vs
}

// Every registered metric reaches every output its entry names: the aggregator, the record and
// replay, the JSON, CSV and table summaries, the Prometheus exposition, the compare view and
// the report. Adding an entry is all it takes; an output that skips one fails here.
func TestEveryMetricEverywhere(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	s := everySample(t0)
	eps := []config.Endpoint{{Name: "e", Model: "m"}}

	// The record: every value survives a line written and read back.
	line, err := json.Marshal(record.FromSample(&s))
	if err != nil {
		t.Fatal(err)
	}
	var rec record.Record
	if err := json.Unmarshal(line, &rec); err != nil {
		t.Fatal(err)
	}
	replayed := rec.Sample()

	agg := stats.New(eps)
	agg.Add(&replayed)
	snap := agg.Snapshot(t0.Add(time.Second))
	es := &snap.Endpoints[0]

	var js, cs, table, page bytes.Buffer
	for _, err := range []error{export.WriteJSON(&js, snap), export.WriteCSV(&cs, snap), export.WriteTable(&table, snap),
		report.Write(&page, report.Input{Summary: snap, Requests: collected(eps, &replayed)})} {
		if err != nil {
			t.Fatal(err)
		}
	}
	var doc struct {
		Endpoints []map[string]json.RawMessage `json:"endpoints"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cell := func(key string) string {
		if i := slices.Index(rows[0], key); i >= 0 {
			return rows[1][i]
		}
		return ""
	}
	prom := exposition(t, eps, &s)
	cols := colsOf(eps)
	for _, f := range feature.All() { // as the view has them once every feature's columns joined (the server reported)
		if f.Compare != nil && f.Compare.Joins != nil {
			cols = append(cols, columnsOf(f.Compare.Columns())...)
		}
	}

	for _, id := range metric.IDs() {
		m := metric.Get(id)
		want := values(m, &s)
		if len(want) == 0 {
			t.Errorf("%s: the test's sample does not define it", m.Key)
			continue
		}
		if got := values(m, &replayed); !slices.Equal(got, want) {
			t.Errorf("%s: %v read back from the record, %v live", m.Key, got, want)
		}
		if d := es.Whole.Of(id); d.Count != len(want) {
			t.Errorf("%s: the aggregator counted %d values, want %d", m.Key, d.Count, len(want))
		}
		obj := doc.Endpoints[0]
		if m.Group == metric.Server { // the block export's struct tag names
			b := "server_timing"
			obj = nil
			if err := json.Unmarshal(doc.Endpoints[0][b], &obj); err != nil {
				t.Errorf("%s: JSON block %s: %v", m.Key, b, err)
			}
		}
		switch m.JSON {
		case metric.Dist:
			if v := obj[m.JSONKey()]; len(v) == 0 || string(v) == "null" {
				t.Errorf("%s: JSON %q", m.Key, v)
			}
			if cell(m.Key+"_p50") == "" || cell(m.Key+"_max") == "" {
				t.Errorf("%s: no CSV cells %s_p50 … _max", m.Key, m.Key)
			}
		case metric.Mean:
			if v := obj[m.JSONKey()]; len(v) == 0 || string(v) == "null" {
				t.Errorf("%s: JSON %q", m.Key, v)
			}
			if cell(m.Key) == "" {
				t.Errorf("%s: no CSV cell", m.Key)
			}
		}
		if m.Table {
			if !tableHasRow(table.String(), m.Label) {
				t.Errorf("%s: the table has no row %q with figures:\n%s", m.Key, m.Label, table.String())
			}
			if !strings.Contains(page.String(), html.EscapeString(m.Label)) {
				t.Errorf("%s: the report's summary table has no row %q", m.Key, m.Label)
			}
		}
		if m.Chart != nil && !strings.Contains(page.String(), `id="dist-`+m.Chart.ID+`"`) {
			t.Errorf("%s: the report has no chart dist-%s", m.Key, m.Chart.ID)
		}
		if m.Prom != nil && !strings.Contains(prom, m.Prom.Name+"_count{endpoint=\"e\",model=\"m\"} "+strconv.Itoa(len(want))) {
			t.Errorf("%s: the exposition has no %s_count of %d", m.Key, m.Prom.Name, len(want))
		}
		for _, c := range m.Compare {
			i := slices.IndexFunc(cols, func(col column) bool { return col.Title == c.Title })
			if i < 0 {
				t.Errorf("%s: the compare view has no column %q", m.Key, c.Title)
				continue
			}
			if _, ok := cols[i].Value(es); !ok {
				t.Errorf("%s: the compare column %q has no value", m.Key, c.Title)
			}
		}
	}
}

// tableHasRow reports whether the table has a row labelled label whose p50 is a figure.
func tableHasRow(table, label string) bool {
	for _, l := range strings.Split(table, "\n") {
		l = strings.TrimSpace(l)
		if rest, ok := strings.CutPrefix(l, label); ok {
			f := strings.Fields(rest)
			return len(f) >= 6 && f[0] != "—"
		}
	}
	return false
}

func collected(eps []config.Endpoint, s *sample.Sample) *report.Collector {
	c := report.NewCollector(eps)
	c.AddAt(0, s)
	return c
}

// exposition is the Prometheus text of an Exporter that observed s.
func exposition(t *testing.T, eps []config.Endpoint, s *sample.Sample) string {
	t.Helper()
	exp := promexport.New(eps)
	exp.Observe(s)
	var b strings.Builder
	fams, err := exp.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				labels := ""
				for _, l := range m.GetLabel() {
					labels += l.GetName() + "=\"" + l.GetValue() + "\","
				}
				b.WriteString(f.GetName() + "_count{" + strings.TrimSuffix(labels, ",") + "} " + strconv.Itoa(int(h.GetSampleCount())) + "\n")
			}
		}
	}
	return b.String()
}
