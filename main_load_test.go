package main

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"tokscope/sim"
)

// The built binary, headless, sweeps 1, 2, 4 streams × 2 s against the simulator (whose
// streams do not slow each other down): the JSON document is the sweep's, one row per step
// and endpoint with exactly the documented keys, and aggregate tok/s grows with concurrency.
func TestHeadlessSweepJSON(t *testing.T) {
	srv, err := sim.Start(sim.Options{},
		sim.Profile{Name: "a", Model: "m-a", TTFT: 20 * time.Millisecond, TokensPerSecond: 300, MaxTokens: 40},
		sim.Profile{Name: "b", Model: "m-b", TTFT: 60 * time.Millisecond, TokensPerSecond: 150, TokensPerChunk: 2, MaxTokens: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	start := time.Now()
	r := runBinary(t, nil, "--no-tui", "-o", "json", "--sweep", "1,2,4", "--step-duration", "2s", "--max-tokens", "40",
		"-u", srv.BaseURL("a"), "-m", "m-a", "-u", srv.BaseURL("b"), "-m", "m-b")
	took := time.Since(start)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	var doc map[string][]map[string]any
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON document (%v):\n%s", err, r.stdout)
	}
	rows := doc["sweep"]
	if len(doc) != 1 || len(rows) != 6 {
		t.Fatalf("want only \"sweep\" with 3 steps × 2 endpoints, got:\n%s", r.stdout)
	}
	keys := []string{"step", "endpoint", "model", "concurrency", "duration_s", "requests", "ok", "errors", "truncated", "cut",
		"error_pct", "token_source", "aggregate_tps", "decode_tps_p50", "ttft_ms_p50", "ttft_ms_p99"}
	num := func(row map[string]any, k string) float64 {
		n, ok := row[k].(json.Number)
		if !ok {
			t.Fatalf("%s = %v in %v, want a number", k, row[k], row)
		}
		f, _ := n.Float64()
		return f
	}
	agg := map[string][]float64{}
	for i, row := range rows {
		if len(row) != len(keys) {
			t.Errorf("row %d has %d keys, want %d: %v", i, len(row), len(keys), row)
		}
		for _, k := range keys {
			if _, ok := row[k]; !ok {
				t.Errorf("row %d lacks %q", i, k)
			}
		}
		step, conc := num(row, "step"), num(row, "concurrency")
		if want := []float64{1, 2, 4}[i/2]; step != float64(i/2+1) || conc != want {
			t.Errorf("row %d: step %v concurrency %v, want step %d at %v", i, step, conc, i/2+1, want)
		}
		if d := num(row, "duration_s"); d < 1.99 || d > 2.3 {
			t.Errorf("row %d: duration_s %v, want 2", i, d)
		}
		if num(row, "error_pct") != 0 || num(row, "requests") < 2 || row["token_source"] != "usage" {
			t.Errorf("row %d: %v", i, row)
		}
		ep := row["endpoint"].(string)
		agg[ep] = append(agg[ep], num(row, "aggregate_tps"))
		t.Logf("%s c%v: %v requests, aggregate %v tok/s, decode p50 %v, TTFT p50 %v ms",
			ep, conc, row["requests"], row["aggregate_tps"], row["decode_tps_p50"], row["ttft_ms_p50"])
	}
	for ep, a := range agg {
		for i := 1; i < len(a); i++ {
			if a[i] < 1.4*a[i-1] {
				t.Errorf("%s: aggregate tok/s %v does not grow with concurrency 1, 2, 4", ep, a)
			}
		}
	}
	if took > 20*time.Second {
		t.Errorf("a 3 × 2 s sweep took %v", took)
	}
}

// An open-loop headless run reports the client queue and the arrivals in every format, and
// keeps the endpoints' objects of the JSON contract as they are.
func TestHeadlessRate(t *testing.T) {
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "a", Model: "m-a", TTFT: 30 * time.Millisecond, TokensPerSecond: 200, MaxTokens: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	args := []string{"--no-tui", "--rate", "20", "-n", "2", "--duration", "2s", "--max-tokens", "20", "-u", srv.BaseURL("a"), "-m", "m-a"}

	r := runBinary(t, nil, append(args, "-o", "json")...)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	var doc struct {
		Endpoints   []map[string]any `json:"endpoints"`
		ClientQueue []struct {
			Endpoint          string
			Rate              float64
			Arrivals, Dropped int
			QueueMS           map[string]float64 `json:"queue_ms"`
		} `json:"client_queue"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(doc.ClientQueue) != 1 || len(doc.Endpoints) != 1 || len(doc.Endpoints[0]) != len(endpointKeys) {
		t.Fatalf("document: %s", r.stdout)
	}
	q := doc.ClientQueue[0]
	t.Logf("rate %v: %d arrivals, %d dropped, queue %v", q.Rate, q.Arrivals, q.Dropped, q.QueueMS)
	if q.Rate != 20 || q.Arrivals < 20 || q.Arrivals > 60 || q.QueueMS["p50"] <= 0 {
		t.Errorf("client_queue %+v: want about 40 arrivals in 2 s at 20/s, a measured queue", q)
	}
	if ttft := doc.Endpoints[0]["ttft_ms"].(map[string]any)["p50"].(float64); ttft < 30 || ttft > 200 {
		t.Errorf("TTFT p50 %v ms, the simulator's is 30", ttft)
	}

	r = runBinary(t, nil, append(args, "-o", "csv")...)
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil || len(rows) != 2 || !strings.Contains(strings.Join(rows[0], ",")+",", ",queue_ms_max,arrivals,dropped,waiting,") {
		t.Fatalf("CSV (%v):\n%s", err, r.stdout)
	}
	r = runBinary(t, nil, append(args, "-o", "table")...)
	if !strings.Contains(r.stdout, "client queue ms") || !strings.Contains(r.stdout, "arrivals ") {
		t.Errorf("table lacks the client queue:\n%s", r.stdout)
	}
}
