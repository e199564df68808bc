package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"tokscope/watch"
)

var watchT0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func watchTarget(t *testing.T, raw string) watch.Target {
	t.Helper()
	tg, err := watch.NewTarget(raw, "url")
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func scrapeOf(t *testing.T, tg watch.Target, file string, at time.Time) watch.Instant {
	t.Helper()
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	in, err := watch.ParseInstant(tg.Key(), at, body)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// fleetModel is a fleet of a vLLM (two scrapes 10 s apart), a llama.cpp with two busy slots
// and a dead server, with the clock pinned at the last scrape.
func fleetModel(t *testing.T, w, h int, canary func(context.Context, watch.Target) watch.CanaryResult) *watchModel {
	t.Helper()
	vllm, llama, dead := watchTarget(t, "127.0.0.1:8000"), watchTarget(t, "127.0.0.1:8086"), watchTarget(t, "127.0.0.1:9")
	now := watchT0.Add(10 * time.Second)
	m := newWatchModel(context.Background(), WatchOptions{Targets: []watch.Target{vllm, llama, dead}, Window: 10 * time.Second,
		Canary: canary, Now: func() time.Time { return now }})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	dir := filepath.Join("..", "watch", "testdata")
	llamaDir := filepath.Join(dir, "llamacpp-b10470-watch")
	busy := scrapeOf(t, llama, filepath.Join(llamaDir, "metrics-busy.txt"), watchT0)
	busy.Slots = []watch.Slot{{ID: 0, Task: 10, Processing: true, Decoded: 7, Prompt: 57, Context: 2048}, {ID: 1, Task: 8, Processing: true, Decoded: 5, Prompt: 57, Context: 2048}}
	later := scrapeOf(t, llama, filepath.Join(llamaDir, "metrics-busy.txt"), now)
	busy.Version, later.Version = "b10470-34af94cd9", "b10470-34af94cd9"
	later.Slots = []watch.Slot{{ID: 0, Task: 10, Processing: true, Decoded: 27, Prompt: 57, Context: 2048}, {ID: 1, Task: 8, Processing: true, Decoded: 25, Prompt: 57, Context: 2048}}
	for _, in := range []watch.Instant{
		scrapeOf(t, vllm, filepath.Join(dir, "vllm-hist-1.txt"), watchT0), busy,
		{Target: dead.Key(), At: watchT0, Error: "connection refused"},
		scrapeOf(t, vllm, filepath.Join(dir, "vllm-hist-2.txt"), now), later,
	} {
		m.Update(instantMsg{in})
	}
	return m
}

func watchKey(m *watchModel, k string) tea.Cmd {
	var msg tea.KeyMsg
	switch k {
	case "enter":
		msg = tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		msg = tea.KeyMsg{Type: tea.KeyEsc}
	case "down":
		msg = tea.KeyMsg{Type: tea.KeyDown}
	default:
		msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
	}
	_, cmd := m.Update(msg)
	return cmd
}

// TestWatchTableShowsTheFleet: one row per server with the figures its exposition gives,
// – where it gives none, estimates marked, the dead server STALE with its error.
func TestWatchTableShowsTheFleet(t *testing.T) {
	m := fleetModel(t, 260, 30, nil) // wide enough for every column
	view := ansi.Strip(m.View())
	lines := strings.Split(view, "\n")
	row := func(server string) string {
		for _, l := range lines {
			if strings.Contains(l, server) {
				return l
			}
		}
		t.Fatalf("no row for %s:\n%s", server, view)
		return ""
	}
	vllm := strings.Fields(strings.TrimPrefix(row("127.0.0.1:8000"), "▸"))
	// SERVER KIND RUN WAIT GEN PROMPT KV HIT TTFT50 TTFT99 ITL50 ITL99 QUEUE50 QUEUE99 E2E50 E2E99 PREEMPT SPEC ...
	want := []string{"127.0.0.1:8000", "vllm", "8", "5", "345.6", "300.0", "62%", "75%", "~100ms", "~247ms", "~17.5ms", "~48.8ms", "~150ms", "~297ms", "~2.17s", "~2.49s", "3", "75%"}
	for i, w := range want {
		if i >= len(vllm) || vllm[i] != w {
			t.Errorf("vLLM row cell %d = %q, want %q\nrow: %v", i, at(vllm, i), w, vllm)
		}
	}
	llama := row("127.0.0.1:8086")
	if f := strings.Fields(llama); len(f) < 6 || f[3] != "2" || f[5] != "4.0" { // 40 tokens decoded by the slots in 10 s
		t.Errorf("llama.cpp row %q: want running 2, gen 4.0", llama)
	}
	if dead := row("127.0.0.1:9"); !strings.Contains(dead, "STALE: connection refused") {
		t.Errorf("dead row %q", dead)
	}
	if !strings.Contains(view, "~ estimated within the server's histogram buckets") {
		t.Error("no estimate legend")
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// TestWatchSortAndFilter: s cycles the sort column, S reverses, / filters as typed.
func TestWatchSortAndFilter(t *testing.T) {
	m := fleetModel(t, 200, 30, nil)
	for m.sortCol < 0 || watch.Columns[m.sortCol].Key != "gen" {
		watchKey(m, "s")
	}
	if m.rows[0].Server != "127.0.0.1:8000" || m.rows[2].Server != "127.0.0.1:9" {
		t.Errorf("by gen, descending: %v %v %v; want vLLM first, the unknown last", m.rows[0].Server, m.rows[1].Server, m.rows[2].Server)
	}
	watchKey(m, "S")
	if m.rows[0].Server != "127.0.0.1:8086" || m.rows[2].Server != "127.0.0.1:9" {
		t.Errorf("by gen, ascending: %v first, %v last; unknown stays last", m.rows[0].Server, m.rows[2].Server)
	}
	if !strings.Contains(ansi.Strip(m.View()), "GEN t/s↑") {
		t.Error("the sorted column is not marked")
	}
	watchKey(m, "/")
	for _, r := range "8086" {
		watchKey(m, string(r))
	}
	watchKey(m, "enter")
	if len(m.rows) != 1 || m.rows[0].Server != "127.0.0.1:8086" || !strings.Contains(ansi.Strip(m.View()), "filter: 8086") {
		t.Errorf("filter 8086: %d rows", len(m.rows))
	}
	watchKey(m, "esc")
	if len(m.rows) != 3 {
		t.Errorf("esc: %d rows, want the filter cleared", len(m.rows))
	}
}

// TestWatchDrillDown: Enter shows one server: its slots, its charts; c sends the canary and
// shows its client figures beside the server's; esc returns.
func TestWatchDrillDown(t *testing.T) {
	sent := 0
	canary := func(_ context.Context, tg watch.Target) watch.CanaryResult {
		sent++
		ttft, rate, sttft, srate := 120.0, 45.5, 110.0, 47.25
		return watch.CanaryResult{Target: tg.Key(), Model: "random-medium", At: watchT0.Add(8 * time.Second), Tokens: 32,
			TTFTms: &ttft, DecodeTPS: &rate, ServerTTFTms: &sttft, ServerDecodeTPS: &srate}
	}
	m := fleetModel(t, 120, 40, canary)
	watchKey(m, "down")
	watchKey(m, "enter")
	view := ansi.Strip(m.View())
	for _, want := range []string{"127.0.0.1:8086", "llamacpp b10470-34af94cd9", "SLOT  TASK  STATE", "10  processing", "27", "generation tok/s: 4", "c sends one short request"} {
		if !strings.Contains(view, want) {
			t.Errorf("drill-down lacks %q:\n%s", want, view)
		}
	}
	cmd := watchKey(m, "c")
	if cmd == nil {
		t.Fatal("c sent nothing")
	}
	if !strings.Contains(ansi.Strip(m.View()), "one request in flight") {
		t.Error("no in-flight note")
	}
	m.Update(cmd())
	view = ansi.Strip(m.View())
	if sent != 1 || !strings.Contains(view, "client gets (tokscope): TTFT 120ms, decode 45.5 tok/s") ||
		!strings.Contains(view, "server says:          TTFT 110ms, decode 47.2 tok/s") {
		t.Errorf("canary sent %d times; view:\n%s", sent, view)
	}
	watchKey(m, "esc")
	if m.drill != "" || !strings.Contains(ansi.Strip(m.View()), "SERVER") {
		t.Error("esc did not return to the table")
	}
}

// TestWatchFitsEverySize: at any terminal size, no line is wider than the terminal and the
// frame has exactly its height, on the table and in the drill-down.
func TestWatchFitsEverySize(t *testing.T) {
	m := fleetModel(t, 80, 24, func(context.Context, watch.Target) watch.CanaryResult { return watch.CanaryResult{} })
	for _, drill := range []bool{false, true} {
		if drill {
			watchKey(m, "enter")
		}
		for w := 30; w <= 220; w += 19 {
			for h := 6; h <= 60; h += 9 {
				m.Update(tea.WindowSizeMsg{Width: w, Height: h})
				lines := strings.Split(m.View(), "\n")
				if len(lines) != h {
					t.Errorf("%dx%d drill=%v: %d lines", w, h, drill, len(lines))
				}
				for i, l := range lines {
					if ansi.StringWidth(l) > w {
						t.Errorf("%dx%d drill=%v: line %d is %d wide", w, h, drill, i, ansi.StringWidth(l))
						break
					}
				}
			}
		}
	}
}

// TestWatchBeforeTheFirstScrape: a server not yet scraped says so, with – for every figure.
func TestWatchBeforeTheFirstScrape(t *testing.T) {
	m := newWatchModel(context.Background(), WatchOptions{Targets: []watch.Target{watchTarget(t, "127.0.0.1:8000")},
		Now: func() time.Time { return watchT0 }})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 10})
	view := ansi.Strip(m.View())
	if !strings.Contains(view, "127.0.0.1:8000") || !strings.Contains(view, "waiting for the first scrape") {
		t.Errorf("view:\n%s", view)
	}
}
