package stats

import (
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
)

// Interactive stream/race requests measure the user's own prompt: they must not enter the
// endpoint's request counts or distributions.
func TestInteractiveStreamsNotCounted(t *testing.T) {
	a := New([]config.Endpoint{{Name: "e", Model: "m"}})
	now := time.Now()
	s := sample.Sample{Endpoint: "e", Model: "m", Stream: 7, Start: now, Outcome: sample.OutcomeOK,
		Headers: 10 * time.Millisecond, FirstEvent: 11 * time.Millisecond, FirstToken: 12 * time.Millisecond,
		FirstAnswer: 12 * time.Millisecond, LastToken: 100 * time.Millisecond, End: 101 * time.Millisecond,
		Tokens: 10, Source: sample.SourceUsage, DNS: sample.Absent, Connect: sample.Absent, TLS: sample.Absent}
	a.Add(&s)
	got := a.Snapshot(now.Add(time.Second)).Endpoints[0]
	if got.Requests != 0 || got.OK != 0 || got.Whole.TTFT.Count != 0 {
		t.Fatalf("interactive sample counted: requests %d ok %d ttft count %d", got.Requests, got.OK, got.Whole.TTFT.Count)
	}
	s.Stream = 0
	a.Add(&s)
	if got := a.Snapshot(now.Add(time.Second)).Endpoints[0]; got.Requests != 1 || got.Whole.TTFT.Count != 1 {
		t.Fatalf("probe sample not counted: requests %d ttft count %d", got.Requests, got.Whole.TTFT.Count)
	}
}
