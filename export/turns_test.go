package export

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"tokscope/metric"
	"tokscope/stats"
)

// TestTurnsJSONAndCSV: "turns" by split with ttft_ms and prompt_tokens, "cache_hit_rate", and
// their CSV columns; without figures by turn there is no "turns" key.
func TestTurnsJSONAndCSV(t *testing.T) {
	snap := testSnapshot()
	rate := 0.4567
	e := &snap.Endpoints[0]
	e.CacheHitRate = &rate
	e.Turns = &stats.TurnStats{Splits: [][]stats.Dist{
		{dist(3, 40, 50, 60, 45, 30, 60), dist(3, 66, 66, 66, 66, 66, 66)},
		{dist(6, 20, 25, 30, 22, 15, 30), dist(6, 143, 218, 218, 180.5, 143, 218)},
	}}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, snap); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Endpoints []struct {
			CacheHitRate *float64                                 `json:"cache_hit_rate"`
			Turns        map[string]map[string]map[string]float64 `json:"turns"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := doc.Endpoints[0]
	if got.CacheHitRate == nil || *got.CacheHitRate != 0.457 {
		t.Errorf("cache_hit_rate %v", got.CacheHitRate)
	}
	if got.Turns["first"]["ttft_ms"]["p50"] != 40 || got.Turns["later"]["prompt_tokens"]["max"] != 218 || got.Turns["later"]["ttft_ms"]["mean"] != 22 {
		t.Errorf("turns %v", got.Turns)
	}
	if doc.Endpoints[1].Turns != nil || doc.Endpoints[1].CacheHitRate != nil {
		t.Errorf("the endpoint without figures: %+v", doc.Endpoints[1])
	}
	buf.Reset()
	if err := WriteCSV(&buf, snap); err != nil {
		t.Fatal(err)
	}
	rows, col := csvOf(t, buf.Bytes())
	for key, want := range map[string]string{"cache_hit_rate": "0.457", "turns_first_ttft_ms_p50": "40", "turns_later_prompt_tokens_p90": "218"} {
		i, ok := col[key]
		if !ok || rows[1][i] != want {
			t.Errorf("%s: %v %q, want %q", key, ok, rows[1][min(i, len(rows[1])-1)], want)
		}
	}
	if i := col["turns_later_ttft_ms_p50"]; rows[2][i] != "" {
		t.Errorf("the endpoint without turns: %q", rows[2][i])
	}
}

// TestTableSameRowsForEveryEndpoint: the table shows the figures by turn and the server's
// clock for every endpoint of a run where one endpoint has them (— for the others), and every
// row label of every endpoint starts in one column, however long the longest label.
func TestTableSameRowsForEveryEndpoint(t *testing.T) {
	snap := testSnapshot()
	rate := 0.4567
	e := &snap.Endpoints[0]
	e.CacheHitRate = &rate
	e.Turns = &stats.TurnStats{Splits: [][]stats.Dist{
		{dist(3, 40, 50, 60, 45, 30, 60), dist(3, 66, 66, 66, 66, 66, 66)},
		{dist(6, 20, 25, 30, 22, 15, 30), dist(6, 143, 218, 218, 180.5, 143, 218)},
	}}
	e.ServerTiming.Source = "vllm"
	e.Whole.Set(metric.ServerTTFT, dist(9, 30, 31, 32, 30, 29, 32))
	e.Whole.Set(metric.ServerDecodeTPS, dist(9, 88.5, 90, 91, 88, 80, 91))
	var buf bytes.Buffer
	if err := WriteTable(&buf, snap); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"cache hit rate 45.7%", "cache hit rate — ", "first turn TTFT ms", "later turns prompt tokens",
		"srv TTFT ms", "srv decode tok/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "srv queue ms") {
		t.Errorf("a server figure no endpoint has is a row:\n%s", out)
	}
	// Each endpoint's rows: the same labels in the same order, every label at one column.
	var labels [][]string
	labelCol := -1
	for _, block := range strings.Split(strings.SplitN(out, "\n\nend of the run", 2)[0], "\n\n") {
		var mine []string
		for _, line := range strings.Split(block, "\n")[1:] {
			if !strings.HasPrefix(line, "   ") || strings.HasPrefix(strings.TrimSpace(line), "p50") {
				continue // the endpoint's lines and the column header
			}
			col := len(line) - len(strings.TrimLeft(line, " "))
			if labelCol < 0 {
				labelCol = col
			}
			if col != labelCol {
				t.Errorf("label at column %d, want %d: %q", col, labelCol, line)
			}
			mine = append(mine, strings.Join(strings.Fields(line)[:len(strings.Fields(line))-6], " "))
		}
		labels = append(labels, mine)
	}
	if len(labels) != len(snap.Endpoints) {
		t.Fatalf("%d endpoints in the table, want %d:\n%s", len(labels), len(snap.Endpoints), out)
	}
	for i := 1; i < len(labels); i++ {
		if strings.Join(labels[i], "|") != strings.Join(labels[0], "|") {
			t.Errorf("endpoint %d has rows %q, endpoint 0 %q", i, labels[i], labels[0])
		}
	}
}
