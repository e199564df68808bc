package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestTruncateName: a name too long for its column is cut in the middle, so that two
// servers of one model (which differ by port) still differ, and both ends show.
func TestTruncateName(t *testing.T) {
	a, b := "127.0.0.1:8082/raw-model", "127.0.0.1:8081/raw-model"
	for w := 5; w <= 23; w++ {
		ta, tb := truncateName(a, w), truncateName(b, w)
		if ansi.StringWidth(ta) != w || !strings.Contains(ta, "…") {
			t.Errorf("width %d: %q is not %d columns cut with …", w, ta, w)
		}
		if !strings.HasPrefix(ta, "1") || !strings.HasSuffix(ta, "l") {
			t.Errorf("width %d: %q lost an end", w, ta)
		}
		if w >= 17 && ta == tb { // from 17 columns the end reaches the port
			t.Errorf("width %d: %q and %q read the same", w, ta, tb)
		}
	}
	if got := truncateName(a, 18); got != "127.0…82/raw-model" {
		t.Errorf("at 18 columns %q", got)
	}
	for _, tt := range []struct {
		s    string
		w    int
		want string
	}{{a, 24, a}, {a, 30, a}, {a, 0, ""}, {a, 1, "…"}, {a, 2, "1…"}, {"qwen3-8b", 8, "qwen3-8b"}} {
		if got := truncateName(tt.s, tt.w); got != tt.want {
			t.Errorf("truncateName(%q, %d) = %q, want %q", tt.s, tt.w, got, tt.want)
		}
	}
}
