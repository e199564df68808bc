package export

import (
	"bytes"
	"encoding/json"
	"testing"

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
