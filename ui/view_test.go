package ui

import (
	"strings"
	"testing"
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
