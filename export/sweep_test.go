package export

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"tokscope/stats"
	"tokscope/sweep"
)

// testSweep has two endpoints over three steps: figures everywhere, an estimated token
// count, a step with errors only.
func testSweep() sweep.Report {
	step := func(i, conc int, name, model string, req, ok, errs int, src string, agg float64, dec, ttft stats.Dist) sweep.Result {
		return sweep.Result{Step: i, Endpoint: name, Model: model, Concurrency: conc, Duration: 2 * time.Second,
			Requests: req, OK: ok, Errors: errs, TokenSource: src, AggregateTPS: agg, DecodeTPS: dec, TTFT: ttft}
	}
	none := stats.Dist{}
	return sweep.Report{
		Plan:     sweep.Plan{Concurrency: []int{1, 2, 4}, StepDuration: 2 * time.Second},
		TTFTFrom: "first-token",
		Complete: true,
		Results: []sweep.Result{
			step(1, 1, "local", "llama", 9, 9, 0, "usage", 178.8234, dist(9, 199.7, 0, 0, 0, 0, 0), dist(9, 21.1234, 0, 22.01, 0, 0, 0)),
			step(1, 1, "cpu", "qwen", 2, 2, 0, "estimate", 35.5, dist(2, 40.2, 0, 0, 0, 0, 0), dist(2, 610, 0, 650.5, 0, 0, 0)),
			step(2, 2, "local", "llama", 18, 18, 0, "usage", 357.9, dist(18, 200.3, 0, 0, 0, 0, 0), dist(18, 21.2, 0, 23.9, 0, 0, 0)),
			step(2, 2, "cpu", "qwen", 4, 3, 1, "estimate", 52.25, dist(3, 38.9, 0, 0, 0, 0, 0), dist(3, 700, 0, 910, 0, 0, 0)),
			step(3, 4, "local", "llama", 37, 37, 0, "usage", 718.4, dist(37, 200.1, 0, 0, 0, 0, 0), dist(37, 21.1, 0, 30.3, 0, 0, 0)),
			step(3, 4, "cpu", "qwen", 5, 0, 5, "", 0, none, none),
		},
	}
}

func TestWriteSweepGolden(t *testing.T) {
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer, sweep.Report) error
	}{
		{"sweep.json", func(b *bytes.Buffer, r sweep.Report) error { return WriteSweepJSON(b, r) }},
		{"sweep.csv", func(b *bytes.Buffer, r sweep.Report) error { return WriteSweepCSV(b, r) }},
		{"sweep.txt", func(b *bytes.Buffer, r sweep.Report) error { return WriteSweepTable(b, r) }},
	} {
		var buf bytes.Buffer
		if err := f.write(&buf, testSweep()); err != nil {
			t.Fatal(err)
		}
		golden(t, f.name, buf.Bytes())
	}
}

// The sweep document has exactly the documented keys per row, in order, and nothing else
// unless asked for.
func TestWriteSweepJSONShape(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSweepJSON(&buf, testSweep()); err != nil {
		t.Fatal(err)
	}
	var doc map[string][]map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc) != 1 || len(doc["sweep"]) != 6 {
		t.Fatalf("document %v: want only \"sweep\" with 6 rows", doc)
	}
	for _, row := range doc["sweep"] {
		if len(row) != len(sweepHeader) {
			t.Errorf("row has %d keys, want %d", len(row), len(sweepHeader))
		}
		for _, k := range sweepHeader {
			if _, ok := row[k]; !ok {
				t.Errorf("row lacks %q", k)
			}
		}
	}
	last := doc["sweep"][5]
	for _, k := range []string{"decode_tps_p50", "ttft_ms_p50", "ttft_ms_p99", "token_source"} {
		if last[k] != nil {
			t.Errorf("%s = %v for a step without an ok request, want null", k, last[k])
		}
	}
	if last["error_pct"] != 100.0 || last["aggregate_tps"] != 0.0 {
		t.Errorf("error_pct %v aggregate_tps %v, want 100 and 0", last["error_pct"], last["aggregate_tps"])
	}

	rep := testSweep()
	rep.Complete, rep.TTFTFrom, rep.Results = false, "first-event", rep.Results[:2]
	buf.Reset()
	if err := WriteSweepJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if s := buf.String(); !strings.Contains(s, `"ttft_from":"first-event"`) || !strings.Contains(s, `"interrupted":true`) {
		t.Errorf("interrupted first-event sweep: %s", s)
	}
	// Key order: the CSV header's.
	var keys []string
	dec := json.NewDecoder(strings.NewReader(buf.String()))
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
			}
		case string:
			if depth == 3 && len(keys) < len(sweepHeader) {
				keys = append(keys, v)
				dec.Token() // the value
			}
		}
	}
	if !slices.Equal(keys, sweepHeader) {
		t.Errorf("JSON key order %v, want %v", keys, sweepHeader)
	}
}

func TestWriteSweepCSVParses(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSweepCSV(&buf, testSweep()); err != nil {
		t.Fatal(err)
	}
	rows, _ := csvOf(t, buf.Bytes())
	if len(rows) != 7 {
		t.Fatalf("%d rows, want header + 6", len(rows))
	}
	for _, r := range rows {
		if len(r) != len(sweepHeader) {
			t.Fatalf("row %v has %d cells", r, len(r))
		}
	}
}

// A step with cut requests gets a "cut" column in the table (and a note saying what it is);
// JSON and CSV always carry the count.
func TestSweepTableCut(t *testing.T) {
	rep := testSweep()
	if SweepTableOf(&rep).Header[4] == "cut" {
		t.Fatal("a cut column without cut requests")
	}
	rep.Plan.Grace = 30 * time.Second
	rep.Results[5].Cut = 3
	tab := SweepTableOf(&rep)
	if tab.Header[4] != "cut" || tab.Rows[5][4] != "3" || tab.Rows[0][4] != "0" {
		t.Errorf("header %v, rows %v", tab.Header, tab.Rows)
	}
	if note := tab.Notes[len(tab.Notes)-1]; !strings.Contains(note, "30s after their step ended") {
		t.Errorf("note %q", note)
	}
	var buf bytes.Buffer
	if err := WriteSweepJSON(&buf, rep); err != nil || !strings.Contains(buf.String(), `"truncated":0,"cut":3,`) {
		t.Errorf("JSON %s %v", buf.String(), err)
	}
}
