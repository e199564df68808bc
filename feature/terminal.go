package feature

import (
	"math"
	"strconv"
	"strings"

	"tokscope/stats"
)

// The live view's vocabulary (package ui draws it): a feature's line on a card as forms of
// styled pieces, and the terminal's number formats, which every view shares.

// Role is how a piece of a line is styled; the ui gives each its style.
type Role int

const (
	Plain Role = iota // no style
	Label             // a figure's name: "ttft ", " met"
	Value             // a figure
	Unit              // its unit
	Faint             // separators and quiet notes
	Muted             // a figure that is not there yet
	Warn              // what needs attention: a breach, a queue building
)

// Span is a piece of a line in its role.
type Span struct {
	Role Role
	Text string
}

// Form is one wording of a line. A line's forms are measured as plain text and only the
// chosen one is styled.
type Form []Span

// Join joins Spans and Forms into one Form.
func Join(parts ...any) Form {
	var out Form
	for _, p := range parts {
		switch p := p.(type) {
		case Span:
			out = append(out, p)
		case Form:
			out = append(out, p...)
		}
	}
	return out
}

// In is a piece-builder of one role: L := In(Label); L("ttft ").
func In(r Role) func(text string) Span { return func(t string) Span { return Span{r, t} } }

// Card is a feature's line on an endpoint's card in the live view. Where the line goes and
// when it gets a row is the card's layout (package ui); what it says is the feature's.
type Card struct {
	// Has reports whether the endpoint's card has the line.
	Has func(e *stats.EndpointStats) bool
	// Forms are its wordings, longest first: the card draws the first that fits its width,
	// else the last cut to it.
	Forms func(e *stats.EndpointStats) []Form
	// Shared: every card of one width in a frame words the line alike, taking the shortest
	// form any of them needs, so that two cards side by side never word one figure two ways.
	Shared bool
}

// Dash is a figure with no data: never 0, never NaN.
const Dash = "—"

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Num formats a non-negative figure with about three significant digits.
func Num(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return Dash
	case v >= 10000:
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + "k"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// Ms formats milliseconds: "234", "1.2s" above ten seconds.
func Ms(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return Dash
	case v >= 10000:
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + "s"
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
}

// CardMs formats milliseconds for a line whose unit is ms: whole ms from 10 on, however
// large (Ms would switch to seconds and contradict the unit).
func CardMs(v float64) string {
	switch {
	case !finite(v):
		return Dash
	case v >= 10:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// Pct formats a percentage with one decimal.
func Pct(v float64) string {
	if !finite(v) {
		return Dash
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// Share formats a 0–1 share as a percentage: "97.3%".
func Share(v float64) string { return Pct(100*v) + "%" }

// Toks formats a token count: "785", "12.3k".
func Toks(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return Dash
	case v >= 10000:
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

// Pick is d's figure f formatted by format; Dash without data.
func Pick(d stats.Dist, f func(stats.Dist) float64, format func(float64) string) string {
	if d.Count == 0 {
		return Dash
	}
	return format(f(d))
}

// P50 is d's median (for Pick).
func P50(d stats.Dist) float64 { return d.P50 }

// OneLine flattens a message for a single table cell or card line.
func OneLine(s string) string {
	return strings.Join(strings.Fields(Sanitize(s)), " ")
}

// Sanitize removes what a server could use to drive the terminal: every control character
// except newline (tabs become spaces), and C1 controls. Streamed text is shown as text only.
func Sanitize(s string) string {
	clean := true
	for _, r := range s {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\uFFFD' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString("  ")
		case r == '\n':
			b.WriteByte('\n')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\uFFFD':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
