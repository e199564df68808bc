package feature

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
	"time"
	"tokscope/stats"
	"tokscope/sweep"
)

func capacityReport() sweep.CapacityReport {
	ttft := stats.Dist{Count: 10, P50: 51.2, P99: 80}
	step := func(load float64, n, good int, v sweep.Verdict, again bool) sweep.Measurement {
		return sweep.Measurement{Load: load, Requests: n, Good: good, Attainment: float64(good) / float64(n),
			GoodputRPS: float64(good) / 2, OutputTPS: 100 * load, TTFT: ttft, Verdict: v, Remeasured: again,
			Pooled: float64(good) / float64(n)}
	}
	a := sweep.EndpointCapacity{Name: "a", Model: "m", Outcome: sweep.Outcome{
		Steps: []sweep.Measurement{
			step(1, 10, 10, sweep.Met, false), step(2, 20, 19, sweep.Pending, false), step(2, 20, 20, sweep.Met, true),
			step(4, 40, 20, sweep.Missed, false), step(3, 30, 28, sweep.Met, false),
		},
		Max: 3, AttainmentAtMax: 28.0 / 30, FirstMiss: 4, AttainmentAtMiss: 0.5, Done: true,
	}}
	b := sweep.EndpointCapacity{Name: "b", Model: "m", Outcome: sweep.Outcome{
		Steps: []sweep.Measurement{step(1, 10, 3, sweep.Missed, false)}, FirstMiss: 1, AttainmentAtMiss: 0.3, Done: true,
	}}
	return sweep.CapacityReport{Plan: sweep.SearchPlan{By: sweep.ByConcurrency, Limit: 256, StepDuration: 2 * time.Second, Target: 0.9},
		Endpoints: []sweep.EndpointCapacity{a, b}, TTFTFrom: "first-token", Complete: true}
}

func TestCapacityJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCapacityJSON(&buf, capacityReport()); err != nil {
		t.Fatal(err)
	}
	step := func(load, n int, att, goodput string, out int) string {
		return `{"load":` + itoa(load) + `,"requests":` + itoa(n) + `,"attainment":` + att + `,"goodput_rps":` + goodput +
			`,"output_tps":` + itoa(out) + `,"ttft_ms_p50":51.2,"ttft_ms_p99":80}`
	}
	want := `{"endpoints":[{"name":"a","model":"m","capacity":{"by":"concurrency","max":3,"attainment_at_max":0.933,"first_miss":4,"steps":[` +
		step(1, 10, "1", "5", 100) + "," + step(2, 20, "0.95", "9.5", 200) + "," + step(2, 20, "1", "10", 200) + "," +
		step(4, 40, "0.5", "10", 400) + "," + step(3, 30, "0.933", "14", 300) + `]}},` +
		`{"name":"b","model":"m","capacity":{"by":"concurrency","max":null,"attainment_at_max":null,"first_miss":1,"steps":[` +
		step(1, 10, "0.3", "1.5", 100) + `]}}],"slo_target":0.9}` + "\n"
	if buf.String() != want {
		t.Errorf("JSON\n%s\nwant\n%s", buf.String(), want)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCapacityTableAndCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCapacityTable(&buf, capacityReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, line := range []string{
		"a: max concurrency 3 (SLO met by 93 %), 4 missed (50 %); at 3: goodput 14.00 req/s, output 300.0 tok/s\n",
		"b: SLO missed even at concurrency 1 (30 %)\n",
		"within noise: re-measure", "met (re-measured)",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("table lacks %q:\n%s", line, out)
		}
	}
	buf.Reset()
	if err := WriteCapacityCSV(&buf, capacityReport()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 7 || len(rows[0]) != len(capacityHeader) {
		t.Fatalf("%d rows of %d cells", len(rows), len(rows[0]))
	}
	if got := strings.Join(rows[3], ","); got != "a,m,concurrency,3,0.933,4,3,2,20,1,10,200,51.2,80,met (re-measured)" {
		t.Errorf("row 3: %s", got)
	}
	if got := strings.Join(rows[6], ","); got != "b,m,concurrency,,,1,1,1,10,0.3,1.5,100,51.2,80,missed" {
		t.Errorf("row 6: %s", got)
	}
}

// A miss just under the target never reads as the target: percents are rounded down.
func TestCapacityAnswerRoundsDown(t *testing.T) {
	e := sweep.EndpointCapacity{Name: "a", Outcome: sweep.Outcome{Max: 18, AttainmentAtMax: 0.93, FirstMiss: 19, AttainmentAtMiss: 0.897, Done: true}}
	if got, want := CapacityAnswer(sweep.ByConcurrency, &e), "max concurrency 18 (SLO met by 93 %), 19 missed (89 %)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
