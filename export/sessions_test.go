package export

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"tokscope/stats"
)

// The session figures in each output: JSON "sessions" with null where unknown, the CSV's
// sessions_* columns (empty cells where unknown), the table's line; none of it without
// sessions.
func TestSessionsOutputs(t *testing.T) {
	snap := testSnapshot()
	ideal := 0.8
	snap.Endpoints[0].Sessions = &stats.SessionStats{Turns: 12, IdealHitRate: &ideal, Completed: 2,
		Duration: stats.Dist{Count: 2, P50: 1000, P90: 1500, P99: 1500, Mean: 1250, Min: 1000, Max: 1500}}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, snap); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Endpoints []map[string]json.RawMessage `json:"endpoints"`
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	got := string(out.Endpoints[0]["sessions"])
	for _, want := range []string{`"turns":12`, `"ideal_hit_rate":0.8`, `"served_hit_rate":null`, `"cache_efficiency":null`, `"duration_ms":{"p50":1000,`, `"model_ms":null`} {
		if !strings.Contains(got, want) {
			t.Errorf("JSON sessions %s lacks %s", got, want)
		}
	}
	if _, ok := out.Endpoints[1]["sessions"]; ok {
		t.Errorf("an endpoint without sessions has a sessions key")
	}
	buf.Reset()
	if err := WriteCSV(&buf, snap); err != nil {
		t.Fatal(err)
	}
	rows, col := csvOf(t, buf.Bytes())
	if rows[1][col["sessions_ideal_hit_rate"]] != "0.8" || rows[1][col["sessions_served_hit_rate"]] != "" || rows[1][col["sessions_duration_ms_p50"]] != "1000" || rows[2][col["sessions_turns_total"]] != "" {
		t.Errorf("CSV sessions cells: %v / %v", rows[1][col["sessions_turns_total"]:], rows[2][col["sessions_turns_total"]:])
	}
	buf.Reset()
	if err := WriteTable(&buf, snap); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "sessions 2 completed of 12 turns  cache hit ideal 80.0%  served —") {
		t.Errorf("table: %s", buf.String())
	}
	plain := testSnapshot()
	buf.Reset()
	WriteCSV(&buf, plain)
	if strings.Contains(buf.String(), "sessions_") {
		t.Error("a run without sessions has session columns")
	}
}
