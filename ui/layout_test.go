package ui

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		total, parts int
		want         []int
	}{
		{80, 2, []int{40, 40}},
		{81, 2, []int{41, 40}},
		{22, 3, []int{8, 7, 7}},
		{5, 0, nil},
	} {
		if got := split(tc.total, tc.parts); !slices.Equal(got, tc.want) {
			t.Fatalf("split(%d,%d) = %v, want %v", tc.total, tc.parts, got, tc.want)
		}
	}
}

func TestTile(t *testing.T) {
	for _, tc := range []struct {
		name             string
		n, w, h          int
		cols, rows, page int
	}{
		{"four at 80x24 make 2x2", 4, 80, 22, 2, 2, 4},
		{"four at 120x40 make 2x2", 4, 120, 38, 2, 2, 4},
		{"one fills the body", 1, 80, 22, 1, 1, 1},
		{"eight at 80x24 page by six", 8, 80, 22, 2, 3, 6},
		{"eight at 250x80 fit at once", 8, 250, 78, 2, 4, 8},
		{"nothing fits", 3, 20, 5, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tile(tc.n, tc.w, tc.h, cardMinWidth, cardMinHeight, cardAspect)
			if g.Cols != tc.cols || g.Rows != tc.rows || g.PerPage() != tc.page {
				t.Fatalf("tile(%d, %d×%d) = %d×%d (%d per page), want %d×%d (%d)", tc.n, tc.w, tc.h,
					g.Cols, g.Rows, g.PerPage(), tc.cols, tc.rows, tc.page)
			}
			sum := func(v []int) (s int) {
				for _, x := range v {
					s += x
				}
				return s
			}
			if g.Cols > 0 && (sum(g.Widths) != tc.w || sum(g.Heights) != tc.h) {
				t.Fatalf("tiles %v × %v do not fill %d×%d", g.Widths, g.Heights, tc.w, tc.h)
			}
		})
	}
}

func TestLayoutConstants(t *testing.T) {
	bw, bh := bodySize(minWidth, minHeight)
	if g := tile(1, bw, bh, cardMinWidth, cardMinHeight, cardAspect); g.PerPage() == 0 {
		t.Fatalf("a card (%d×%d) does not fit the minimum body %d×%d", cardMinWidth, cardMinHeight, bw, bh)
	}
	if g := tile(1, bw, bh-2, paneMinWidth, paneMinHeight, paneAspect); g.PerPage() == 0 {
		t.Fatalf("a stream pane (%d×%d) does not fit the minimum body %d×%d", paneMinWidth, paneMinHeight, bw, bh-2)
	}
}

func TestFit(t *testing.T) {
	got := fit("héllo wörld, a long line\nshort\n日本語のテキスト", 10, 4)
	lines := strings.Split(got, "\n")
	if len(lines) != 4 {
		t.Fatalf("fit gave %d lines, want 4", len(lines))
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w != 10 {
			t.Fatalf("line %q is %d wide, want 10", l, w)
		}
	}
}

// TestLayoutProperty renders every view at many terminal sizes: no line may be wider than
// the terminal and there may be no more lines than its height.
func TestLayoutProperty(t *testing.T) {
	wStep, hStep := 5, 4
	if testing.Short() || raceBuild {
		wStep, hStep = 13, 9
	}
	views := []struct {
		name string
		keys []string
	}{
		{"dashboard", nil},
		{"compare", []string{"2"}},
		{"detail", []string{"right", "right", "right", "enter"}},
		{"stream", []string{"4", "ctrl+r"}},
		{"typing", []string{"/"}},
		{"help", []string{"?"}},
	}
	for _, n := range []int{0, 1, 4, 8} {
		for _, v := range views {
			m, _ := newTestModel(t, n, 80, 24, 12)
			m = press(t, m, v.keys...)
			if v.name == "stream" {
				m = update(t, m, eventsMsg{events: raceEvents(m.eps, m.controls.(*fakeControls).nextID)})
				m = update(t, m, redrawMsg{})
			}
			for w := 20; w <= 250; w += wStep {
				for h := 5; h <= 80; h += hStep {
					m = update(t, m, resize(w, h))
					checkFits(t, m.View(), w, h, v.name, n)
				}
			}
		}
	}
}

// TestLayoutPropertyColor repeats a coarse sweep with colours on: styles must not change
// widths (a padded or bordered style that overflows only in colour would pass the Ascii run).
func TestLayoutPropertyColor(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	for _, keys := range [][]string{nil, {"2"}, {"enter"}, {"4", "ctrl+r"}, {"?"}} {
		m, _ := newTestModel(t, 5, 80, 24, 12)
		if m.styles.Plain {
			t.Fatal("styles are plain with a colour profile")
		}
		m = press(t, m, keys...)
		if len(keys) == 2 {
			m = update(t, m, eventsMsg{events: raceEvents(m.eps, 1)})
			m = update(t, m, redrawMsg{})
		}
		for w := 20; w <= 250; w += 23 {
			for h := 5; h <= 80; h += 11 {
				m = update(t, m, resize(w, h))
				checkFits(t, m.View(), w, h, strings.Join(keys, " "), 5)
			}
		}
	}
}

func checkFits(t *testing.T, out string, w, h int, view string, n int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) > h {
		t.Fatalf("%s with %d endpoints at %d×%d: %d lines\n%s", view, n, w, h, len(lines), out)
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Fatalf("%s with %d endpoints at %d×%d: line %d is %d wide\n%s", view, n, w, h, i, lw, out)
		}
	}
}
