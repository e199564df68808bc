package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"tokscope/config"
	"tokscope/probe"
	"tokscope/sample"
	"tokscope/sim"
)

// The same prompt raced to an Anthropic Messages endpoint and a chat endpoint of one
// simulated server, through the real Runner and the Stream view: both panes show the
// simulator's answer and their own figures, and a race pane never says which API it spoke
// for it to work.
func TestRaceAcrossAPIsInTheStreamView(t *testing.T) {
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "r", Model: "m", TTFT: 30 * time.Millisecond, TokensPerSecond: 200, ReasoningTokens: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	var eps []config.Endpoint
	for _, c := range []struct{ name, api string }{{"claude", config.APIAnthropic}, {"gpt", config.APIChat}} {
		eps = append(eps, config.Endpoint{Name: c.name, BaseURL: srv.BaseURLFor("r", c.api), Model: "m", API: c.api, MaxTokens: 12,
			Concurrency: 1, Timeout: 10 * time.Second, Stall: 5 * time.Second})
	}
	runner := probe.NewRunner(eps, probe.Options{})
	for i := range sample.EndpointIndex(len(eps)) {
		runner.SetPaused(i, true) // only the race
	}
	m := New(runner, eps, runner.Events(), Options{Prompt: "race me"})
	m = update(t, m, resize(120, 30))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	go func() { _ = runner.Run(ctx) }()

	m = press(t, m, "4", "/", "ctrl+r")
	done := 0
	for done < len(eps) {
		select {
		case ev := <-runner.Events():
			if d, ok := ev.(*sample.Done); ok && d.Stream != 0 {
				done++
				if d.Sample.Outcome != sample.OutcomeOK || d.Sample.API != eps[d.Endpoint].API {
					t.Errorf("%s: %s %s (api %q)", eps[d.Endpoint].Name, d.Sample.Outcome, d.Sample.ErrorMessage, d.Sample.API)
				}
			}
			m = update(t, m, eventsMsg{events: []sample.Event{ev}})
		case <-ctx.Done():
			t.Fatalf("the race did not finish: %d of %d done", done, len(eps))
		}
	}
	m = update(t, m, redrawMsg{})
	screen := ansi.Strip(m.View())
	run := m.streamScreen().run
	if run == nil || len(run.panes) != 2 {
		t.Fatalf("the race shows no two panes:\n%s", screen)
	}
	answer := sim.Text(3, 9) // the simulator's answer after 3 reasoning tokens, in both APIs
	for _, p := range run.panes {
		if p.done == nil || string(p.answer) != answer || len(p.reasoning) == 0 {
			t.Errorf("%s pane: done %v, answer %q, want %q; reasoning %q", p.name, p.done != nil, p.answer, answer, p.reasoning)
		}
		fig := ansi.Strip(m.streamScreen().figures(p, time.Now(), 60))
		if !strings.Contains(fig, "ttft ") || strings.Contains(fig, "ttft "+dash) || !strings.Contains(fig, " tok/s") || !strings.Contains(fig, "12 tok") {
			t.Errorf("%s pane figures %q: want a TTFT, a decode rate and 12 tokens", p.name, fig)
		}
	}
	for _, want := range []string{"claude", "gpt", strings.Fields(answer)[0]} {
		if !strings.Contains(screen, want) {
			t.Errorf("the stream view does not show %q:\n%s", want, screen)
		}
	}
}

// The cards, the compare table and the detail view name an endpoint's API when it is not
// chat; with every endpoint on chat nothing changes (the goldens hold that).
func TestViewsNameTheAPI(t *testing.T) {
	eps := testEndpoints(2)
	eps[1].API = config.APIAnthropic
	m := New(newFakeControls(), eps, make(chan sample.Event), Options{Now: pinned, Prompt: "Why is the sky blue?"})
	m = update(t, m, resize(120, 30))
	m = update(t, m, eventsMsg{events: history(m.eps, 20)})
	m = update(t, m, redrawMsg{})
	dash := ansi.Strip(m.View())
	if !strings.Contains(dash, " · anthropic") {
		t.Errorf("the dashboard's card does not name the API beside %s:\n%s", eps[1].Model, dash)
	}
	if strings.Contains(dash, "· chat") {
		t.Errorf("the dashboard names chat:\n%s", dash)
	}
	m = press(t, m, "2")
	cmp := ansi.Strip(m.View())
	var header, row string
	for _, l := range strings.Split(cmp, "\n") {
		switch {
		case strings.Contains(l, "endpoint") && header == "":
			header = l
		case strings.Contains(l, eps[1].Name) && row == "":
			row = l
		}
	}
	if f := strings.Fields(header); len(f) < 2 || f[len(f)-1] != "api" || f[len(f)-3] != "tok" {
		t.Errorf("compare header %q: want the api column last, after tok src", header)
	}
	if f := strings.Fields(row); len(f) < 2 || f[len(f)-1] != "anthropic" {
		t.Errorf("compare row %q: want anthropic last", row)
	}
	m = press(t, m, "esc", "right", "enter")
	det := ansi.Strip(m.View())
	if first := strings.SplitN(det, "\n", 3); len(first) < 2 || !strings.Contains(det, eps[1].Model+" · anthropic · "+eps[1].BaseURL) {
		t.Errorf("the detail view of %s does not name its API:\n%s", eps[1].Name, det)
	}
}
