package export

import (
	"fmt"

	"tokscope/stats"
)

// A replay that merged the records of several shards (--shard, docs/fleet.md "Beyond one
// machine") says so: the top-level "shards": N of the JSON summary, a line under the table.
// One shard's records alone are not a merge and say nothing here.

func shardsJSON(snap *stats.Snapshot) int {
	if snap.Shards < 2 {
		return 0
	}
	return snap.Shards
}

// ShardsLine is the table's line for a merged replay: "" unless it merged several shards.
func ShardsLine(snap *stats.Snapshot) string {
	if snap.Shards < 2 {
		return ""
	}
	return fmt.Sprintf("merged: the records of %d shards, as one run", snap.Shards)
}
