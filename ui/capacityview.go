package ui

import (
	"strings"
	"time"

	"tokscope/feature"
)

// The Sweep view of a capacity search (--find-max): what it says is the capacity search's
// (feature.SearchView); here it is drawn into the view's w×h.

// capacitySearch is what the view reads of a sweep.Search, and its version for redraws (an
// interface so that tests can script one).
type capacitySearch interface {
	feature.Search
	Version() uint64
}

// renderSearch draws search over the endpoints named names into w×h; sel is the selected
// endpoint, now the clock.
func renderSearch(s *Styles, search capacitySearch, names []string, sel int, now time.Time, w, h int) string {
	return fit(renderForms(s, feature.SearchView(search, names, sel, now, h, sweepMarker, truncateName), w), w, h)
}

// renderForms draws lines of a feature's spans in the view's styles, one form a line; a
// span to fit is cut to w before it is styled.
func renderForms(s *Styles, lines []feature.Form, w int) string {
	out := make([]string, len(lines))
	for i, f := range lines {
		var b strings.Builder
		for _, sp := range f {
			text := sp.Text
			if sp.Fit {
				text = truncate(text, w)
			}
			if st := roleStyle(s, sp.Role); st != nil {
				text = st.Render(text)
			}
			b.WriteString(text)
		}
		out[i] = b.String()
	}
	return strings.Join(out, "\n")
}
