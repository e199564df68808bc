package ui

import (
	"strings"
	"testing"
)

// TestWorkloadInViews: the compare table ends with prefill tok/s, prompt and cached tokens
// (scrolled to with →), a card names its cache mode, and the detail view has the prompt line
// ("not reported" where the server gave no cached count, which is not 0).
func TestWorkloadInViews(t *testing.T) {
	m, _ := newTestModel(t, 4, 120, 40, 30)

	view := m.View()
	for _, want := range []string{"cache bust · 1 stream", "cache reuse · 1 stream"} {
		if !strings.Contains(view, want) {
			t.Errorf("dashboard lacks %q:\n%s", want, view)
		}
	}

	m = press(t, m, "2", "right", "right", "right", "right", "right")
	m = update(t, m, redrawMsg{})
	view = m.View()
	lines := strings.Split(view, "\n")
	header := lines[1]
	for _, col := range []string{"prefill", "prompt", "cached"} {
		if !strings.Contains(header, col) {
			t.Fatalf("compare header after scrolling lacks %q:\n%s", col, view)
		}
	}
	// The last page ends with the workload columns (the registry's Group Workload, in order)
	// and the token source: a row's cells by column title, counted from its end.
	rows := map[string]map[string]string{}
	for _, l := range lines[2:6] {
		f := strings.Fields(strings.TrimLeft(l, "▶ "))
		tail := f[len(f)-len(workloadColumns)-1:]
		cells := map[string]string{}
		for i, c := range workloadColumns {
			cells[c.Title] = tail[i]
		}
		rows[f[0]] = cells
	}
	// llama.cpp reuses its prompts: 528 of 530 cached from its second request on; OpenRouter
	// reports no cached count (—); every prompt is 530 tokens.
	for name, want := range map[string]string{"llama.cpp": "530 528", "openrouter": "530 —", "vllm-a100": "530 0"} {
		if got := rows[name]["prompt"] + " " + rows[name]["cached"]; got != want {
			t.Errorf("%s row's prompt and cached are %q, want %q\n%s", name, got, want, view)
		}
	}

	m = press(t, m, "esc", "1", "right", "right", "right", "enter")
	m = update(t, m, redrawMsg{})
	if view = m.View(); !strings.Contains(view, "prompt 530 tok  cached not reported  prefill") {
		t.Errorf("openrouter's detail lacks its prompt line:\n%s", view)
	}
}
