package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"

	"tokscope/config"
	"tokscope/fanout"
	"tokscope/sample"
	"tokscope/servermetrics"
	"tokscope/stats"
)

// sloModel is the test model with objectives on every endpoint (ollama's and openrouter's
// TTFTs miss them: breaches), prices on two, and the server-metrics scraper reporting: a vLLM behind endpoint
// 0 whose queue builds up, a llama.cpp behind endpoint 1 (no KV gauge), a 404 behind 2.
func sloModel(t testing.TB, w, h int) Model {
	t.Helper()
	eps := testEndpoints(4)
	for i := range eps {
		eps[i].SLO = config.SLO{TTFT: 400 * time.Millisecond, ITL: 250 * time.Millisecond}
	}
	eps[0].Price = &config.Price{GPUHour: 2.5}
	eps[3].Price = &config.Price{Input: 0.8, Output: 4}
	m := New(newFakeControls(), eps, make(chan sample.Event), Options{Now: pinned})
	m = update(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	m = update(t, m, eventsMsg{events: history(m.eps, 30)})
	for _, u := range serverUpdates() {
		m = update(t, m, eventsMsg{events: []sample.Event{&fanout.Scrape{Update: u}}})
	}
	return update(t, m, redrawMsg{})
}

func serverUpdates() []servermetrics.Update {
	v := func(x float64) servermetrics.Value { return servermetrics.Value{V: x, OK: true} }
	var out []servermetrics.Update
	for i := range 90 {
		at := t0.Add(time.Duration(i-90) * time.Second)
		out = append(out,
			servermetrics.Update{Endpoint: 0, Reading: servermetrics.Reading{
				Kind: servermetrics.KindVLLM, At: at, Running: v(8), Waiting: v(float64(i / 15)),
				KVCacheUsage: v(0.2 + 0.007*float64(i)), PrefixCacheHitRate: v(0.12), GenTPS: v(941), GenLive: true,
				GenTokens: v(941), GenSpan: time.Second,
			}},
			servermetrics.Update{Endpoint: 1, Reading: servermetrics.Reading{
				Kind: servermetrics.KindLlamaCpp, At: at, Running: v(1), Waiting: v(0), GenTPS: v(41.5), GenLive: true,
			}},
			servermetrics.Update{Endpoint: 2, State: servermetrics.StateUnavailable, Note: "HTTP 404"},
		)
	}
	return out
}

// TestGoldenSLOServer renders the views that show objectives, costs and the servers' own
// figures; `go test ./ui -run TestGoldenSLOServer -update` rewrites them.
func TestGoldenSLOServer(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, v := range []struct {
			name string
			keys []string
		}{
			{"dashboard", nil},
			{"compare", []string{"2"}},
			{"detail_vllm", []string{"enter"}},
			{"detail_404", []string{"right", "right", "enter"}},
		} {
			t.Run(fmt.Sprintf("%s_%dx%d", v.name, size[0], size[1]), func(t *testing.T) {
				m := press(t, sloModel(t, size[0], size[1]), v.keys...)
				golden.RequireEqual(t, []byte(m.View()))
			})
		}
	}
}

func TestCardsShowSLOAndServer(t *testing.T) {
	m := sloModel(t, 120, 40)
	view := m.View()
	for _, want := range []string{
		"⚠ slo breach: ttft",       // ollama's TTFTs of ~450 ms miss the 400 ms objective
		"srv run 8 wait 5",         // vLLM's queue
		"server metrics: HTTP 404", // a quiet note, not an error
	} {
		if !strings.Contains(view, want) {
			t.Errorf("dashboard lacks %q:\n%s", want, view)
		}
	}
	if m.snap.Endpoints[2].Errors != 0 {
		t.Error("an unreachable /metrics counted as an error")
	}
	if got := markOf(&m.snap.Endpoints[2], m.states[2]); got != markBreach {
		t.Errorf("ollama's card mark %v, want a breach", got)
	}
	if got := markOf(&m.snap.Endpoints[3], m.states[3]); got != markError {
		t.Errorf("openrouter's card mark %v, want error (it wins over a breach)", got)
	}
	// Compare: the SLO and cost columns join the table.
	cols := colsOf(m.eps)
	if n := len(cols) - len(compareColumns) - len(workloadColumns); n != 4 {
		t.Fatalf("%d extra columns, want slo %%, good/s, $ run, $/1M out", n)
	}
	if len(colsOf(testEndpoints(2))) != len(compareColumns)+len(workloadColumns) {
		t.Error("no objectives or prices: no extra columns")
	}
}

// A server scrape is an event of the run's stream: it reaches the statistics and marks them
// for the next redraw; the end of the Runner's events (End) marks the run stopped while the
// scrapes that follow still count.
func TestServerScrapeEvent(t *testing.T) {
	m := New(newFakeControls(), testEndpoints(2), make(chan sample.Event), Options{Now: pinned})
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	u := servermetrics.Update{Endpoint: 1, Reading: servermetrics.Reading{Kind: servermetrics.KindTGI, At: t0,
		Running: servermetrics.Value{V: 3, OK: true}}}
	next, cmd := m.Update(feed(m, eventsMsg{events: []sample.Event{&fanout.Scrape{Update: u}}}))
	m = next.(Model)
	if cmd == nil || !m.statsDirty {
		t.Fatal("no re-armed read, or nothing to redraw")
	}
	m = update(t, m, redrawMsg{})
	if s := m.snap.Endpoints[1].Server; s == nil || s.Scrapes != 1 || s.Kind != servermetrics.KindTGI {
		t.Fatalf("server stats %+v", s)
	}
	m = update(t, m, eventsMsg{events: []sample.Event{&fanout.End{}, &fanout.Scrape{Update: u}}})
	m = update(t, m, redrawMsg{})
	if !m.stopped || !strings.Contains(m.View(), "stopped") {
		t.Fatal("End did not mark the run stopped")
	}
	if s := m.snap.Endpoints[1].Server; s == nil || s.Scrapes != 2 {
		t.Fatalf("a scrape after End: server stats %+v, want 2 scrapes", s)
	}
}

// The SLO, cost and server lines, columns and charts fit every size, in colour too.
func TestLayoutPropertySLOServer(t *testing.T) {
	step := 7
	if testing.Short() || raceBuild {
		step = 17
	}
	for _, color := range []bool{false, true} {
		if color {
			lipgloss.SetColorProfile(termenv.TrueColor)
		}
		for _, keys := range [][]string{nil, {"2"}, {"enter"}, {"right", "right", "enter"}} {
			m := press(t, sloModel(t, 80, 24), keys...)
			for w := 20; w <= 250; w += step {
				for h := 5; h <= 80; h += step {
					m = update(t, m, resize(w, h))
					checkFits(t, m.View(), w, h, "slo/server "+strings.Join(keys, " "), 4)
				}
			}
		}
		lipgloss.SetColorProfile(termenv.Ascii)
	}
}

// The card's server line says whose hit rate it shows ("prefix hit", the server's own), and a
// long quiet note is shortened rather than cut at a card's width (46 columns at 100×30).
func TestServerLineLabelsAndNotes(t *testing.T) {
	s := DefaultStyles()
	ok := &stats.ServerStats{State: servermetrics.StateOK, Scrapes: 3, Latest: servermetrics.Reading{
		Running: servermetrics.Value{V: 1, OK: true}, Waiting: servermetrics.Value{OK: true},
		KVCacheUsage: servermetrics.Value{V: 0.012, OK: true}, GenTPS: servermetrics.Value{V: 99.3, OK: true},
		PrefixCacheHitRate: servermetrics.Value{V: 0.12, OK: true}}}
	if got := ansi.Strip(featureLine(&s, "server", &stats.EndpointStats{Server: ok}, 80)); !strings.Contains(got, "prefix hit 12.0%") {
		t.Errorf("server line %q lacks \"prefix hit 12.0%%\"", got)
	}
	for _, note := range []string{
		`no series for model "gpt-4o-mini" (the server lists deepseek-r1-distill-qwen-14b, llama-3.1-8b-instruct)`,
		"HTTP 404", "", "connection refused",
	} {
		st := &stats.ServerStats{State: servermetrics.StateUnavailable, Note: note}
		for _, w := range []int{36, 46, 60} {
			got := ansi.Strip(featureLine(&s, "server", &stats.EndpointStats{Server: st}, w))
			if strings.HasSuffix(got, "…") || ansi.StringWidth(got) > w {
				t.Errorf("width %d, note %q: %q", w, note, got)
			}
		}
	}
	st := &stats.ServerStats{State: servermetrics.StateUnavailable, Note: `no series for model "gpt-4o-mini" (the server lists a, b)`}
	for w, want := range map[int]string{
		60: `server metrics: no series for model "gpt-4o-mini"`,
		46: `srv metrics: no series for model "gpt-4o-mini"`,
		36: `srv: no series for this model`,
	} {
		if got := ansi.Strip(featureLine(&s, "server", &stats.EndpointStats{Server: st}, w)); got != want {
			t.Errorf("at %d columns: %q, want %q", w, got, want)
		}
	}
}
