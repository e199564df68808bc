package ui

import (
	"math"
	"strings"

	"github.com/NimbleMarkets/ntcharts/sparkline"
	"github.com/charmbracelet/lipgloss"
)

// spark is a sparkline that is redrawn only when its values or size change, scaled to the
// values it shows: ntcharts' own auto-scale only grows, so one old spike would flatten it
// for good.
type spark struct {
	style lipgloss.Style
	drawn[float64]
	model sparkline.Model
}

func newSpark(style lipgloss.Style) *spark { return &spark{style: style} }

// Set draws the newest w values (values oldest first). NaN, Inf and negatives are drawn as 0.
func (s *spark) Set(values []float64, w, h int) {
	if w <= 0 || h <= 0 {
		s.drawn = drawn[float64]{w: w, h: h}
		return
	}
	if len(values) > w {
		values = values[len(values)-w:]
	}
	if !s.stale(values, w, h) {
		return
	}
	top := 0.0
	for _, v := range values {
		if finite(v) && v > top {
			top = v
		}
	}
	if top <= 0 {
		top = 1
	}
	if s.model.Width() != w || s.model.Height() != h {
		s.model = sparkline.New(w, h, sparkline.WithStyle(s.style), sparkline.WithNoAutoMaxValue())
	} else {
		s.model.Clear()
	}
	s.model.SetMax(top)
	for _, v := range values {
		if !finite(v) || v < 0 {
			v = 0
		}
		s.model.Push(v)
	}
	s.model.Draw()
	s.view = s.model.View()
}

// View is the drawn sparkline, exactly w×h.
func (s *spark) View() string { return s.view }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// bar is a horizontal bar of v/top of w cells, with eighth-cell resolution.
func bar(v, top float64, w int) string {
	if w <= 0 || !finite(v) || v <= 0 || !finite(top) || top <= 0 {
		return ""
	}
	eighths := int(math.Round(min(v/top, 1) * float64(w*8)))
	if eighths == 0 {
		eighths = 1 // a figure that exists is never drawn as nothing
	}
	partial := []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}
	return strings.Repeat("█", eighths/8) + partial[eighths%8]
}
