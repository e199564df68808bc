package feature

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"tokscope/config"
	"tokscope/metric"
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
	Title             // a view's or an endpoint's title
	Good              // an answer found, a step met
	Bad               // a miss
)

// Span is a piece of a line in its role. Fit: its text is cut to the line's width before it
// is styled (the line itself is cut to the width after).
type Span struct {
	Role Role
	Text string
	Fit  bool
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
func In(r Role) func(text string) Span { return func(t string) Span { return Span{Role: r, Text: t} } }

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
	// Breach reports whether the endpoint breaches what the feature watches (the SLO's
	// recent window): its card's border says so and the line gets the card's first spare
	// row. Nil: never.
	Breach func(e *stats.EndpointStats) bool
}

// Breached reports whether a feature's card line says endpoint e is in breach.
func Breached(e *stats.EndpointStats) bool {
	for _, f := range All() {
		if f.Card != nil && f.Card.Breach != nil && f.Card.Breach(e) {
			return true
		}
	}
	return false
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

// Dollars formats USD with about three significant digits: "12.3", "0.0123".
func Dollars(v float64) string {
	switch {
	case !finite(v):
		return Dash
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v <= 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'f', min(2-int(math.Floor(math.Log10(v))), 9), 64)
}

// Elapsed formats a duration for clocks: "3.2s", "4m05s", "2h03m".
func Elapsed(d time.Duration) string {
	switch {
	case d < 0:
		return Dash
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// KindFormat formats a value of a metric of kind k in its unit.
func KindFormat(k metric.Kind) func(float64) string {
	switch k {
	case metric.Duration:
		return Ms
	case metric.Count:
		return Toks
	}
	return Num
}

// DetailSlot is where a feature's lines go in the detail view's side column, under the
// reasoning split: after the prompt's lines, or last (above the recent errors).
type DetailSlot int

const (
	DetailMid DetailSlot = iota
	DetailLast
)

// DetailLine is one of a feature's lines in the detail view: its wordings, longest first
// (the first that fits the column, else the last cut to it); or, with Wrap, one text in one
// role wrapped at its spaces where the column is narrow, never cut (a " · " stays at the end
// of a line), with Then after its last line where it fits there, else on a line of its own.
type DetailLine struct {
	Forms []Form
	Wrap  *Span
	Then  *Span
}

// Column is a feature's column of the compare table.
type Column struct {
	Title  string
	Value  func(e *stats.EndpointStats) (float64, bool)
	Format func(float64) string
	Better int  // -1 lower is better, +1 higher is better, 0 neither (no highlight)
	Tokens bool // derived from token counts: marked ≈ for estimates
	Rank   int  // the narrowest table shows the lowest ranks (ranks are distinct)
}

// Compare is a feature's columns of the compare table: from the start when an endpoint's
// configuration asks for the feature (Has), or from when an endpoint's figures first have it
// (Joins) on; before the registered metrics' columns (First) or after them.
type Compare struct {
	Has     func(e *config.Endpoint) bool
	Joins   func(e *stats.EndpointStats) bool
	First   bool
	Columns func() []Column
	Legend  string // what the legend says of them; "" nothing
}

// RegistryColumns are the compare columns of the registered metrics that keep, in registry
// order (metric.Metric.Compare).
func RegistryColumns(keep func(metric.ID) bool) []Column {
	var cols []Column
	for _, id := range metric.IDs() {
		m := metric.Get(id)
		if !keep(id) {
			continue
		}
		for _, c := range m.Compare {
			q := quantileOf(c.Of)
			cols = append(cols, Column{Title: c.Title, Format: KindFormat(m.Kind), Better: int(m.Better), Tokens: m.FromOutputTokens, Rank: c.Rank,
				Value: func(e *stats.EndpointStats) (float64, bool) {
					d := e.Whole.Of(id)
					return q(d), d.Count > 0
				}})
		}
	}
	return cols
}

// quantileOf reads q off a distribution.
func quantileOf(q metric.Quantile) func(stats.Dist) float64 {
	switch q {
	case metric.P10:
		return func(d stats.Dist) float64 { return d.P10 }
	case metric.P90:
		return func(d stats.Dist) float64 { return d.P90 }
	case metric.P99:
		return func(d stats.Dist) float64 { return d.P99 }
	case metric.Max:
		return func(d stats.Dist) float64 { return d.Max }
	}
	return P50
}
