package stats

import (
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample/sampletest"
)

// The bars count the same gaps as Recent.ITL: each of the window, none older.
func TestRecentITLCountsTheRecentGaps(t *testing.T) {
	a := New([]config.Endpoint{{Name: "a"}})
	// 11 chunks 10 ms apart: 10 gaps of 10 ms; then, 2 s later, 5 chunks 40 ms apart: 4 gaps.
	a.AddAt(0, sampletest.OK("a", "m", 0, t0).Stream(100*msD, 11, 10*msD, 11).Ptr())
	a.AddAt(0, sampletest.OK("a", "m", 0, t0.Add(2*time.Second)).Stream(100*msD, 5, 40*msD, 5).Ptr())
	bounds := []float64{5, 10, 30, 50, 1e18}
	now := t0.Add(5 * time.Second)
	got := a.RecentITL(0, now, bounds)
	want := []int{0, 10, 0, 4, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("bars %v, want %v", got, want)
		}
	}
	total := 0
	for _, n := range got {
		total += n
	}
	if rec := a.Snapshot(now).Endpoints[0].Recent.ITL.Count; total != rec {
		t.Fatalf("bars count %d gaps, Recent.ITL %d", total, rec)
	}
	// 61 s on, only the second one's gaps remain.
	late := a.RecentITL(0, t0.Add(61*time.Second), bounds)
	if late[1] != 0 || late[3] != 4 {
		t.Fatalf("bars %v after the first request left the window, want [0 0 0 4 0]", late)
	}
	if got := a.RecentITL(3, now, bounds); len(got) != len(bounds) || got[1] != 0 {
		t.Fatalf("an unknown endpoint: %v", got)
	}
}
