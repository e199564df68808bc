package promexport

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/sample/sampletest"
	"tokscope/sweep"
	"tokscope/workload"
)

// TestDocsNameEveryFamily keeps docs/outputs.md's Prometheus table whole: every family the
// exporter exposes after a request of each kind (plain, with the server's clock, a later turn,
// an error) and a tier search's boundary is a row of that table, and every row names a family
// that exists.
func TestDocsNameEveryFamily(t *testing.T) {
	raw, err := os.ReadFile("../docs/outputs.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	row := regexp.MustCompile("^\\| (`tokscope_[^|]*)\\|")
	name := regexp.MustCompile("`(tokscope_[a-z0-9_]+)")
	for _, line := range strings.Split(string(raw), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			for _, n := range name.FindAllStringSubmatch(m[1], -1) {
				documented[n[1]] = true
			}
		}
	}
	e := New([]config.Endpoint{{Name: "e", Model: "m", API: config.APIChat}})
	t0 := time.Unix(1000, 0)
	for i, turn := range []int{1, 2} {
		e.Observe(sampletest.OK("e", "m", uint64(i+1), t0).Chunks(3, 50*time.Millisecond, 10*time.Millisecond, 3).
			Tokens(3, sample.SourceUsage).With(func(s *sample.Sample) {
			s.Turn, s.PromptTokens, s.CachedTokens = turn, 100, 40
			if turn == 2 { // an agent session's turn: the session counters are created at the first
				s.Session = &workload.SessionTurn{ID: 1, Root: 1, Lane: 1, Turn: 1, SessionTurns: 1, PromptTokens: 90, IdealCached: 64}
			}
			s.Server = &sample.ServerTiming{Source: "vllm", TTFTms: 40, QueueMs: 2, DecodeMs: 20, DecodeTokens: -1,
				PromptTokens: -1, CachedTokens: -1, DraftN: -1, DraftAccepted: -1, DecodeTPS: 100, LoadMs: -1}
		}).Ptr())
	}
	e.Observe(&sample.Sample{Endpoint: "e", Model: "m", Seq: 3, Outcome: sample.OutcomeError, ErrorKind: "http_500"})
	e.ObserveTier("e", &sweep.TierOutcome{Name: "fast", Boundary: 4, Confirmed: true})
	fams, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	exposed := map[string]bool{}
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "tokscope_") {
			exposed[f.GetName()] = true
			if !documented[f.GetName()] {
				t.Errorf("%s is exposed but not a row of docs/outputs.md's Prometheus table", f.GetName())
			}
		}
	}
	if len(exposed) < 20 {
		t.Fatalf("only %d families exposed: the samples above no longer reach every family", len(exposed))
	}
	for n := range documented {
		if !exposed[n] {
			t.Errorf("docs/outputs.md documents %s, which the exporter does not expose", n)
		}
	}
}
