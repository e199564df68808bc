package ui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// TestGolden renders every view at 80×24 and 120×40 with the Ascii profile and a pinned
// clock. `go test ./ui -update` rewrites testdata/TestGolden/*.golden: read the diff like a
// screenshot.
func TestGolden(t *testing.T) {
	views := []struct {
		name string
		n    int
		keys []string
	}{
		{"dashboard", 4, nil},
		{"dashboard_paged", 8, []string{"down", "down", "down"}},
		{"compare", 4, []string{"2"}},
		{"compare_sorted", 8, []string{"2", "s", "s", "s", "s", "s", "s", "down"}},
		{"detail", 4, []string{"right", "right", "enter"}},
		{"detail_errors", 4, []string{"right", "right", "right", "enter"}},
		{"stream", 4, []string{"4", "ctrl+r"}},
		{"help", 4, []string{"?"}},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, v := range views {
			t.Run(fmt.Sprintf("%s_%dx%d", v.name, size[0], size[1]), func(t *testing.T) {
				m, _ := newTestModel(t, v.n, size[0], size[1], 30)
				if v.name == "dashboard" || v.name == "dashboard_paged" {
					m = update(t, m, eventsMsg{events: inFlight(m.eps, 31)})
					m = update(t, m, redrawMsg{})
				}
				m = press(t, m, v.keys...)
				if v.name == "stream" {
					m = update(t, m, eventsMsg{events: raceEvents(m.eps, m.controls.(*fakeControls).nextID)})
					m = update(t, m, redrawMsg{})
				}
				golden.RequireEqual(t, []byte(m.View()))
			})
		}
	}
	t.Run("too_small", func(t *testing.T) {
		m, _ := newTestModel(t, 4, 30, 8, 3)
		golden.RequireEqual(t, []byte(m.View()))
	})
}
