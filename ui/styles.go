package ui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Palette is the set of adaptive colours every style is built from (light, dark).
var (
	colorText     = lipgloss.AdaptiveColor{Light: "#1F2328", Dark: "#E6EDF3"}
	colorMuted    = lipgloss.AdaptiveColor{Light: "#6E7781", Dark: "#8B949E"}
	colorFaint    = lipgloss.AdaptiveColor{Light: "#AFB8C1", Dark: "#484F58"}
	colorAccent   = lipgloss.AdaptiveColor{Light: "#0969DA", Dark: "#58A6FF"}
	colorGood     = lipgloss.AdaptiveColor{Light: "#1A7F37", Dark: "#3FB950"}
	colorWarn     = lipgloss.AdaptiveColor{Light: "#9A6700", Dark: "#D29922"}
	colorBad      = lipgloss.AdaptiveColor{Light: "#CF222E", Dark: "#F85149"}
	colorDecode   = lipgloss.AdaptiveColor{Light: "#8250DF", Dark: "#BC8CFF"}
	colorTTFT     = lipgloss.AdaptiveColor{Light: "#BF3989", Dark: "#FF7B72"}
	colorReason   = lipgloss.AdaptiveColor{Light: "#57606A", Dark: "#9DA7B3"}
	colorSelected = lipgloss.AdaptiveColor{Light: "#0969DA", Dark: "#79C0FF"}
)

// Styles is every style the UI draws with. One value is built at start-up and passed down;
// nothing mutates it afterwards.
type Styles struct {
	// Plain is true without colours (NO_COLOR or an Ascii terminal): shapes and markers then
	// carry what colour would (selected and error card borders, best values).
	Plain bool

	App, Header, Tab, TabActive, Clock, Stopped lipgloss.Style
	Footer, Notice, NoticeError, PageInfo       lipgloss.Style

	Title, Muted, Faint, Label, Value, Unit lipgloss.Style
	Good, Warn, Bad, Best                   lipgloss.Style

	Card, CardSelected, CardError, CardErrorSelected lipgloss.Style
	CardBreach, CardBreachSelected                   lipgloss.Style // an SLO breach in the recent window
	Pane, PaneSelected                               lipgloss.Style

	StatusStreaming, StatusIdle, StatusPaused, StatusBackoff, StatusError, StatusStopped lipgloss.Style

	SparkDecode, SparkTTFT, SparkGap lipgloss.Style
	BarDecode, BarTTFT, BarITL       lipgloss.Style
	ChartAxis, ChartLabel            lipgloss.Style

	TableHeader, TableSorted, TableSelected lipgloss.Style
	Reasoning, Answer, Prompt               lipgloss.Style

	Help help.Styles
}

// DefaultStyles builds the styles for the current lipgloss colour profile; with the Ascii
// profile (NO_COLOR, dumb terminals, tests) they render plain text.
func DefaultStyles() Styles {
	plain := lipgloss.ColorProfile() == termenv.Ascii
	s := lipgloss.NewStyle
	fg := func(c lipgloss.TerminalColor) lipgloss.Style { return s().Foreground(c) }

	card := s().Border(lipgloss.RoundedBorder()).BorderForeground(colorFaint).Padding(0, 1)
	st := Styles{
		Plain: plain,

		App:       s(),
		Header:    s().Bold(true),
		Tab:       fg(colorMuted),
		TabActive: s().Foreground(colorAccent).Bold(true).Underline(true),
		Clock:     fg(colorMuted),
		Stopped:   fg(colorBad).Bold(true),

		Footer:      fg(colorMuted),
		Notice:      fg(colorAccent),
		NoticeError: fg(colorBad).Bold(true),
		PageInfo:    fg(colorMuted),

		Title: s().Foreground(colorText).Bold(true),
		Muted: fg(colorMuted),
		Faint: fg(colorFaint),
		Label: fg(colorMuted),
		Value: fg(colorText).Bold(true),
		Unit:  fg(colorMuted),
		Good:  fg(colorGood),
		Warn:  fg(colorWarn),
		Bad:   fg(colorBad),
		Best:  fg(colorGood).Bold(true),

		Card:               card,
		CardSelected:       card.BorderForeground(colorSelected),
		CardError:          card.BorderForeground(colorBad),
		CardErrorSelected:  card.Border(lipgloss.ThickBorder()).BorderForeground(colorBad),
		CardBreach:         card.BorderForeground(colorWarn),
		CardBreachSelected: card.Border(lipgloss.ThickBorder()).BorderForeground(colorWarn),
		Pane:               card,
		PaneSelected:       card.BorderForeground(colorSelected),

		StatusStreaming: fg(colorGood),
		StatusIdle:      fg(colorMuted),
		StatusPaused:    fg(colorWarn),
		StatusBackoff:   fg(colorWarn),
		StatusError:     fg(colorBad).Bold(true),
		StatusStopped:   fg(colorMuted),

		SparkDecode: fg(colorDecode),
		SparkTTFT:   fg(colorTTFT),
		SparkGap:    fg(colorWarn),
		BarDecode:   fg(colorDecode),
		BarTTFT:     fg(colorTTFT),
		BarITL:      fg(colorAccent),
		ChartAxis:   fg(colorFaint),
		ChartLabel:  fg(colorMuted),

		TableHeader:   fg(colorMuted).Bold(true),
		TableSorted:   fg(colorAccent).Bold(true),
		TableSelected: s().Reverse(true),

		Reasoning: fg(colorReason).Italic(true),
		Answer:    fg(colorText),
		Prompt:    fg(colorAccent).Bold(true),
	}
	if plain {
		// Without colour, the border shape says what its colour would: thick = selected,
		// double = error, square corners = an SLO breach (its card line says which).
		st.CardSelected = card.Border(lipgloss.ThickBorder())
		st.CardError = card.Border(lipgloss.DoubleBorder())
		st.CardErrorSelected = card.Border(lipgloss.ThickBorder())
		st.CardBreach = card.Border(lipgloss.NormalBorder())
		st.CardBreachSelected = card.Border(lipgloss.ThickBorder())
		st.PaneSelected = card.Border(lipgloss.ThickBorder())
	}
	st.Help = help.Styles{
		Ellipsis:       fg(colorFaint),
		ShortKey:       fg(colorAccent),
		ShortDesc:      fg(colorMuted),
		ShortSeparator: fg(colorFaint),
		FullKey:        fg(colorAccent),
		FullDesc:       fg(colorMuted),
		FullSeparator:  fg(colorFaint),
	}
	return st
}
