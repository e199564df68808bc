package report

import (
	"bytes"
	"strings"
	"testing"

	"tokscope/sample"
)

// The "client and server" section appears when a server reported its clock, with the two
// TTFT and decode distributions and outside over time, and says when a request paid for
// loading the model; a run whose servers said nothing has no such section.
func TestClientAndServerSection(t *testing.T) {
	cfg, samples := synthRun(synthEndpoints[:1], 30, 2, false)
	var plain bytes.Buffer
	if err := Write(&plain, synthInput(t, cfg, samples)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), `id="client-server"`) || strings.Contains(plain.String(), "cs-ttft") {
		t.Error("a client-and-server section for servers that said nothing")
	}
	for i := range samples {
		s := &samples[i]
		if s.Outcome != sample.OutcomeOK {
			continue
		}
		st := sample.NoServerTiming("llamacpp")
		ttft, _ := s.TTFT()
		st.TTFTms, st.DecodeMs, st.DecodeTokens = sample.Figure(ttft)/1e6-12, sample.Figure(s.LastToken-s.FirstToken)/1e6*0.95, sample.Figure(s.Tokens)
		if s.Seq == 2 { // the first counted request paid for loading the model
			st.Source, st.LoadMs, st.TTFTms = "ollama", 400, 450
		}
		s.Server = &st
	}
	var page bytes.Buffer
	if err := Write(&page, synthInput(t, cfg, samples)); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{"Client and server", `id="cs-ttft"`, `id="cs-decode"`, `id="cs-outside"`,
		"model load 400 ms on request 2", "fast-gpu server"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
