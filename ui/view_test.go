package ui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// Every view is in the model's table with a name, a number key that shows it and its own
// footer help: a view added without its entry fails here rather than on a key press.
func TestViewTable(t *testing.T) {
	m, _ := newTestModel(t, 2, 120, 40, 0)
	keys := m.keys.viewKeys()
	names := map[string]bool{}
	for v := range nViews {
		s := m.views[v]
		if s == nil {
			t.Fatalf("view %d has no screen", v)
		}
		name := s.Name()
		if name == "" || names[name] {
			t.Errorf("view %d is named %q: empty or taken", v, name)
		}
		names[name] = true
		if len(keys[v].Keys()) == 0 {
			t.Errorf("no key shows the %s view", name)
		}
		if len(s.ShortHelp()) == 0 {
			t.Errorf("the %s view has no footer help", name)
		}
		if m.viewShown(v) {
			if tab := itoa(int(v)+1) + " " + name; !strings.Contains(m.header, tab) {
				t.Errorf("header %q lacks %q", m.header, tab)
			}
		}
		if got := press(t, m, keys[v].Keys()[0]); got.view != v {
			t.Errorf("key %q shows view %d, want %d (%s)", keys[v].Keys()[0], got.view, v, name)
		}
	}
}

// lastErrorLine is a card's last error: "kind: the server's message", the one line whose text
// is not tokscope's and may be longer than a card.
var lastErrorLine = regexp.MustCompile(`^(http_\d{3}|stream_error|timeout|stall|connect|dns|tls|canceled)\b[^:]*: `)

// No line of a view ends cut ("…") at 80, 100 or 120 columns where a shorter wording exists:
// notes, hints, titles and figure lines are said shorter first. The footer's key help (the
// help component's own "…") and a card's last error (the server's message) are left out.
// With server metrics (sloModel), the detail view's server charts are checked too.
func TestNoViewLineCut(t *testing.T) {
	for _, w := range []int{80, 100, 120} {
		for _, v := range []string{"1", "2", "3", "4", "server 3"} {
			m, _ := newTestModel(t, 4, w, 40, 30)
			if key, ok := strings.CutPrefix(v, "server "); ok {
				m, v = sloModel(t, w, 40), key
			}
			m = press(t, m, v)
			lines := strings.Split(ansi.Strip(m.View()), "\n")
			for _, l := range lines[:len(lines)-1] {
				for _, part := range strings.FieldsFunc(l, func(r rune) bool { return strings.ContainsRune("│┃║", r) }) {
					text := strings.TrimSpace(part)
					if strings.HasSuffix(text, "…") && !lastErrorLine.MatchString(text) {
						t.Errorf("%d columns, view %s: a line is cut: %q", w, v, text)
					}
				}
			}
		}
	}
}
