package ui

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/NimbleMarkets/ntcharts/linechart/timeserieslinechart"
	"github.com/charmbracelet/x/ansi"
)

// A detail chart's Y labels name the values drawn on their rows: a flat series is drawn on
// the row whose value, read from the labels, is within half a row of the series' value.
// (ntcharts labels a row with the top of its range: 75 ms was drawn on the row labelled 100.)
func TestTimeChartRowsMatchTheirLabels(t *testing.T) {
	st := DefaultStyles()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, h := range []int{8, 12, 17} {
		for _, v := range []float64{0.8, 3, 29.9, 60, 75, 100, 442, 599, 2560} {
			c := newTimeChart(&st, st.SparkTTFT)
			var pts []timeserieslinechart.TimePoint
			for i := range 40 {
				pts = append(pts, timeserieslinechart.TimePoint{Time: base.Add(time.Duration(i) * time.Second), Value: v})
			}
			c.Set("flat", pts, 50, h)
			value, inc, row := readFlatChart(t, ansi.Strip(c.View()))
			if got := value(row); math.Abs(got-v) > inc/2+1e-9 {
				t.Errorf("h=%d: %v drawn on the row the labels put at %v (rows %v apart)\n%s", h, v, got, inc, ansi.Strip(c.View()))
			}
		}
	}
}

// readFlatChart reads a drawn chart (title line first, then the graph rows "LABEL│…", the X
// axis and its labels): the value of each row as the labels give it (linear between the
// labelled rows), the value between two rows, and the row holding the most braille dots.
func readFlatChart(t *testing.T, view string) (value func(row int) float64, inc float64, row int) {
	t.Helper()
	lines := strings.Split(view, "\n")[1:]
	type labelled struct {
		row int
		v   float64
	}
	var labels []labelled
	row, most := -1, 0
	for i, line := range lines {
		label, graph, ok := strings.Cut(line, "│")
		if !ok {
			continue
		}
		if l := strings.TrimSpace(label); l != "" {
			v, err := strconv.ParseFloat(l, 64)
			if err != nil {
				t.Fatalf("Y label %q: %v\n%s", l, err, view)
			}
			labels = append(labels, labelled{i, v})
		}
		dots := 0
		for _, r := range graph {
			if r > 0x2800 && r <= 0x28ff {
				dots++
			}
		}
		if dots > most {
			row, most = i, dots
		}
	}
	if len(labels) < 2 || row < 0 {
		t.Fatalf("no two labels or no line in\n%s", view)
	}
	a, b := labels[0], labels[len(labels)-1]
	inc = (a.v - b.v) / float64(b.row-a.row)
	return func(r int) float64 { return a.v + float64(a.row-r)*inc }, inc, row
}
