package report

import (
	"regexp"
	"strings"
	"testing"

	"tokscope/config"
)

// The summary card names an endpoint's API beside its model when it is not chat, and the
// settings say it; a chat endpoint's card reads as it always did.
func TestSummaryCardNamesTheAPI(t *testing.T) {
	cfg, samples := synthRun(synthEndpoints[:2], 20, 2, false)
	cfg[1].API = config.APIAnthropic
	page := render(t, synthInput(t, cfg, samples))
	heads := regexp.MustCompile(`<div class="card"[^>]*>\s*<h3>(.*?)</h3>`).FindAllStringSubmatch(page, -1)
	if len(heads) != 2 {
		t.Fatalf("%d summary cards, want 2", len(heads))
	}
	if strings.Contains(heads[0][1], "api ") {
		t.Errorf("the chat endpoint's card names an API: %s", heads[0][1])
	}
	if want := `<span class="model">qwen2.5-7b-instruct-q4_k_m</span><span class="model">api anthropic</span>`; !strings.Contains(heads[1][1], want) {
		t.Errorf("the anthropic endpoint's card: %s, want it to hold %s", heads[1][1], want)
	}

	c := &config.Config{Endpoints: cfg}
	var got []string
	for _, s := range Settings(nil, c) {
		if strings.HasPrefix(s.Name, "endpoint ") {
			got = append(got, s.Value)
		}
	}
	if len(got) != 2 || strings.Contains(got[0], "api ") || !strings.Contains(got[1], "model qwen2.5-7b-instruct-q4_k_m · api anthropic") {
		t.Errorf("endpoint settings %q: want the API named for the anthropic endpoint only", got)
	}
}
