package export

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/stats"
)

// A replay that merged several shards says "shards": N at the top of the JSON and one line
// under the table; one shard's records alone, and every live run, say nothing.
func TestShardsInTheSummary(t *testing.T) {
	snap := stats.New([]config.Endpoint{{Name: "a", Model: "m"}}).Snapshot(time.Now())
	for _, c := range []struct {
		shards    int
		json, tab string
	}{{0, "", ""}, {1, "", ""}, {3, `,"shards":3}`, "merged: the records of 3 shards, as one run"}} {
		snap.Shards = c.shards
		var j, tab bytes.Buffer
		if err := WriteJSON(&j, snap); err != nil {
			t.Fatal(err)
		}
		if err := WriteTable(&tab, snap); err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(j.String(), `"shards"`); has != (c.json != "") || !strings.Contains(j.String(), c.json) {
			t.Errorf("%d shards: JSON %s, want %q", c.shards, j.String(), c.json)
		}
		if has := strings.Contains(tab.String(), "merged"); has != (c.tab != "") || !strings.Contains(tab.String(), c.tab) {
			t.Errorf("%d shards: table %s, want %q", c.shards, tab.String(), c.tab)
		}
	}
}
