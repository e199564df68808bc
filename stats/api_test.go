package stats

import (
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/sample/sampletest"
)

// Every endpoint's snapshot names its API: a configured endpoint's from its config, a
// replayed one's (added by its first Sample) from its records, an unknown one as chat.
func TestSnapshotNamesTheAPI(t *testing.T) {
	claude := config.NewEndpoint("http://127.0.0.1:1/v1", "m")
	claude.Name, claude.API = "claude", config.APIAnthropic
	bare := config.Endpoint{Name: "bare", Model: "m"} // built without an API: the probe speaks chat
	a := New([]config.Endpoint{claude, bare})
	start := time.Now()
	a.Add(sampletest.OK("replayed", "m", 1, start).Chunks(3, 10*time.Millisecond, time.Millisecond, 4).Tokens(3, sample.SourceUsage).
		With(func(s *sample.Sample) { s.API = config.APIOllama }).Ptr())
	a.Add(sampletest.OK("claude", "m", 1, start).Chunks(3, 10*time.Millisecond, time.Millisecond, 4).Tokens(3, sample.SourceUsage).
		With(func(s *sample.Sample) { s.API = config.APIChat }).Ptr()) // never overrides the config's
	got := map[string]string{}
	for _, e := range a.Snapshot(start.Add(time.Second)).Endpoints {
		got[e.Name] = e.API
	}
	want := map[string]string{"claude": "anthropic", "bare": "chat", "replayed": "ollama"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: API %q, want %q", k, got[k], v)
		}
	}
	a.Reset()
	if e := a.Snapshot(start).Endpoints[2]; e.API != "ollama" {
		t.Errorf("after Reset the replayed endpoint's API is %q, want it kept", e.API)
	}
}
