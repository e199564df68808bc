package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
)

// dashboard is the default view: one card per endpoint in a grid filling the body, paged
// when they do not all fit.
type dashboard struct {
	common
	grid   grid
	panels []*panel
	page   int
	body   string
}

// newDashboard builds the cards of n endpoints; openLoop: they show the client queue line
// (--rate).
func newDashboard(c common, n int, openLoop bool) *dashboard {
	d := &dashboard{common: c, panels: make([]*panel, n)}
	for i := range d.panels {
		d.panels[i] = newPanel(c.styles)
		d.panels[i].open = openLoop
	}
	return d
}

func (d *dashboard) Name() string { return "Dashboard" }

func (d *dashboard) ShortHelp() []key.Binding {
	k := d.keys
	return []key.Binding{k.Help, k.NextView, k.Enter, k.Pause, k.MoreStreams, k.FewerStreams, k.Prompt, k.Quit}
}

// SetSize lays the cards out for a body of w×h.
func (d *dashboard) SetSize(w, h int) {
	d.w, d.h = w, h
	d.grid = tile(len(d.panels), w, h, cardMinWidth, cardMinHeight, cardAspect)
	if d.grid.PerPage() == 0 {
		return
	}
	for i, p := range d.panels {
		slot := i % d.grid.PerPage()
		p.SetSize(d.grid.Widths[slot%d.grid.Cols], d.grid.Heights[slot/d.grid.Cols])
	}
}

// Move returns the selection after moving dx cards across or dy rows down, clamped.
func (d *dashboard) Move(sel, dx, dy int) int {
	cols := max(1, d.grid.Cols)
	return clamp(sel+dx+dy*cols, 0, len(d.panels)-1)
}

// Info is the footer's page indicator.
func (d *dashboard) Info() string {
	if pages := d.grid.Pages(len(d.panels)); pages > 1 {
		return "page " + itoa(d.page+1) + "/" + itoa(pages)
	}
	return ""
}

// Render draws the page holding the selected card.
func (d *dashboard) Render(f *frame) string {
	if len(d.panels) == 0 {
		return fit(d.styles.Muted.Render("no endpoints configured"), d.w, d.h)
	}
	per := d.grid.PerPage()
	if per == 0 {
		return fit(d.styles.Muted.Render("too small for a card"), d.w, d.h)
	}
	d.page = f.sel / per
	first := d.page * per
	last := min(len(d.panels), first+per)

	d.shareForms(f, first, last)
	d.shareRows(f, first, last)
	rows := make([]string, 0, d.grid.Rows)
	for r := 0; r < d.grid.Rows; r++ {
		cards := make([]string, 0, d.grid.Cols)
		for c := 0; c < d.grid.Cols; c++ {
			i := first + r*d.grid.Cols + c
			if i >= last {
				break
			}
			p, st := d.panels[i], f.states[i]
			p.Update(&f.snap.Endpoints[i], st, f.snapVersion, f.now)
			cards = append(cards, p.View(i == f.sel, markOf(&f.snap.Endpoints[i], st)))
		}
		if len(cards) == 0 {
			break
		}
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, cards...))
	}
	d.body = fit(strings.Join(rows, "\n"), d.w, d.h)
	return d.body
}

// shareForms sets, for the cards first to last of the page, the form of each shared figure
// line: the shortest that a card of the same width needs, so that cards side by side word a
// figure alike whatever its digits.
func (d *dashboard) shareForms(f *frame, first, last int) {
	least := map[int]lineForms{}
	for i := first; i < last; i++ {
		p, es := d.panels[i], &f.snap.Endpoints[i]
		forms := least[p.w]
		for _, l := range sharedLines {
			forms[l] = max(forms[l], formIndex(p.w-4, figureForms(l, d.styles, es)))
		}
		least[p.w] = forms
	}
	for i := first; i < last; i++ {
		d.panels[i].forms = least[d.panels[i].w]
	}
}

// shareRows lays out each grid row's cards alike (rowLayout): each line on the same row, so a
// card with a line the others lack (a dead endpoint's error, a TLS warning) does not shift
// its neighbours' figures and charts.
func (d *dashboard) shareRows(f *frame, first, last int) {
	cols := max(1, d.grid.Cols)
	for row := first; row < last; row += cols {
		end := min(row+cols, last)
		rs := make([]cardRows, 0, end-row)
		for i := row; i < end; i++ {
			rs = append(rs, d.panels[i].rows(&f.snap.Endpoints[i], f.states[i]))
		}
		blanks, chartH := rowLayout(d.panels[row].h-2, rs)
		for i := row; i < end; i++ {
			d.panels[i].blanks, d.panels[i].chartCap = blanks[i-row], chartH
		}
	}
}

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return max(lo, min(v, hi))
}
