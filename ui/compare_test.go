package ui

import (
	"slices"
	"testing"

	"tokscope/stats"
)

func TestNameColumnWidth(t *testing.T) {
	named := func(names ...string) []stats.EndpointStats {
		eps := make([]stats.EndpointStats, len(names))
		for i, n := range names {
			eps[i].Name = n
		}
		return eps
	}
	for _, tc := range []struct {
		eps  []stats.EndpointStats
		want int
	}{
		{nil, 10},                     // at least 8, plus the marker
		{named("a", "llama.cpp"), 11}, // the longest name
		{named("ollama", "ünïcödé-név"), 13},                      // runes, not bytes
		{named("sglang-h100-with-a-very-long-endpoint-name"), 20}, // at most 18
	} {
		if got := nameColumnWidth(tc.eps); got != tc.want {
			t.Errorf("nameColumnWidth(%v) = %d, want %d", tc.eps, got, tc.want)
		}
	}
}

func TestVisibleColumns(t *testing.T) {
	wd := compareWidths{name: 10, col: 8, src: 8}
	for _, tc := range []struct {
		name                string
		n, w, offset        int
		wantShown, wantFrom int
	}{
		{"all fit", 11, 120, 0, 11, 0},
		{"as many as fit", 11, 80, 0, 6, 0}, // (80-10-8-1)/9
		{"scrolled", 11, 80, 3, 6, 3},
		{"scrolled past the end", 11, 80, 9, 2, 9}, // fewer remain than fit: shown shrinks
		{"at least one", 11, 20, 0, 1, 0},
		{"offset clamped", 11, 20, 20, 1, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown, from := visibleColumns(tc.n, tc.w, wd, tc.offset)
			if shown != tc.wantShown || from != tc.wantFrom {
				t.Fatalf("visibleColumns(%d, %d, offset %d) = %d from %d, want %d from %d",
					tc.n, tc.w, tc.offset, shown, from, tc.wantShown, tc.wantFrom)
			}
		})
	}
}

func TestBestRows(t *testing.T) {
	col := func(better int) column {
		return column{better: better, value: func(es *stats.EndpointStats) (float64, bool) {
			return float64(es.Requests), es.Requests > 0
		}}
	}
	withRequests := func(reqs ...int) []stats.EndpointStats {
		eps := make([]stats.EndpointStats, len(reqs))
		for i, r := range reqs {
			eps[i].Requests = r
		}
		return eps
	}
	for _, tc := range []struct {
		name string
		cols []column
		eps  []stats.EndpointStats
		want []int
	}{
		{"lower and higher is better", []column{col(-1), col(+1)}, withRequests(5, 3, 9), []int{1, 2}},
		{"no direction, no best", []column{col(0)}, withRequests(5, 3), []int{-1}},
		{"endpoints without a value are skipped", []column{col(-1)}, withRequests(0, 7, 4), []int{2}},
		{"one value is no contest", []column{col(-1)}, withRequests(0, 7, 0), []int{-1}},
		{"ties go to the first", []column{col(+1)}, withRequests(4, 9, 9), []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bestRows(tc.cols, tc.eps); !slices.Equal(got, tc.want) {
				t.Fatalf("bestRows = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFirstRow(t *testing.T) {
	order := []int{3, 0, 2, 1, 4}
	for _, tc := range []struct{ sel, room, want int }{
		{3, 2, 0}, // first row visible
		{2, 2, 1}, // third row: scrolled by one
		{4, 2, 3}, // last row at the bottom
		{4, 9, 0}, // all fit
		{7, 2, 0}, // not in the table
	} {
		if got := firstRow(order, tc.sel, tc.room); got != tc.want {
			t.Errorf("firstRow(sel %d, room %d) = %d, want %d", tc.sel, tc.room, got, tc.want)
		}
	}
}
