package ui

import (
	"slices"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/feature"
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
		eps   []stats.EndpointStats
		width int
		want  int
	}{
		{nil, 80, 10},                                                  // at least 8, plus the marker
		{named("a", "llama.cpp"), 80, 11},                              // the longest name
		{named("ollama", "ünïcödé-név"), 80, 13},                       // columns, not bytes
		{named("sglang-h100-with-a-very-long-endpoint-name"), 40, 20},  // at most 18 when narrow
		{named("sglang-h100-with-a-very-long-endpoint-name"), 80, 22},  // a quarter of the width
		{named("sglang-h100-with-a-very-long-endpoint-name"), 120, 32}, // a quarter of the width
		{named("127.0.0.1:8084/random-medium", "chat"), 120, 30},       // whole at 120
	} {
		if got := nameColumnWidth(tc.eps, tc.width); got != tc.want {
			t.Errorf("nameColumnWidth(%v, %d) = %d, want %d", tc.eps, tc.width, got, tc.want)
		}
	}
}

// The columns that matter most show at every width: requests and error % always, then the
// figures by rank; → turns to the next page of figures, and every figure is on some page.
func TestVisibleColumns(t *testing.T) {
	wd := compareWidths{name: 12, src: 8}
	titles := func(cols []int) []string {
		var ts []string
		for _, i := range cols {
			ts = append(ts, compareColumns[i].Title)
		}
		return ts
	}
	for _, tc := range []struct {
		w, page   int
		want      []string
		wantPages int
	}{
		{80, 0, []string{"reqs", "ttft p50", "ttft p99", "dec p50", "dec p10", "err %"}, 3},
		{80, 1, []string{"reqs", "ttfa p50", "e2e p50", "itl p99", "max gap", "err %"}, 3},
		{80, 2, []string{"reqs", "ttft p90", "tpot p50", "err %", "tok/chk"}, 3},
		{80, 7, []string{"reqs", "ttft p90", "tpot p50", "err %", "tok/chk"}, 3}, // clamped
		{100, 0, []string{"reqs", "ttft p50", "ttft p99", "dec p50", "dec p10", "e2e p50", "itl p99", "err %"}, 2},
		{140, 0, []string{"reqs", "ttft p50", "ttft p90", "ttft p99", "ttfa p50", "dec p50", "dec p10", "e2e p50", "itl p99", "max gap", "err %", "tok/chk"}, 2},
		{150, 0, []string{"reqs", "ttft p50", "ttft p90", "ttft p99", "ttfa p50", "dec p50", "dec p10", "e2e p50", "tpot p50", "itl p99", "max gap", "err %", "tok/chk"}, 1},
		{30, 0, []string{"reqs", "ttft p50", "err %"}, 11}, // at least one figure
	} {
		cols, _, pages := visibleColumns(compareColumns, tc.w, wd, tc.page)
		if got := titles(cols); !slices.Equal(got, tc.want) || pages != tc.wantPages {
			t.Errorf("w=%d page %d: %q on %d pages, want %q on %d", tc.w, tc.page, got, pages, tc.want, tc.wantPages)
		}
		if tc.w >= 80 {
			if width := wd.name + 1 + wd.src + fitWidth(cols); width > tc.w {
				t.Errorf("w=%d page %d: the table is %d wide", tc.w, tc.page, width)
			}
		}
	}
	seen := map[string]bool{}
	_, perPage, pages := visibleColumns(compareColumns, 80, wd, 0)
	for p := range pages {
		cols, _, _ := visibleColumns(compareColumns, 80, wd, p)
		for _, ti := range titles(cols) {
			seen[ti] = true
		}
	}
	if len(seen) != len(compareColumns) {
		t.Errorf("the pages at 80 columns (%d a page) show %d of %d columns", perPage, len(seen), len(compareColumns))
	}
}

func fitWidth(cols []int) int {
	n := 0
	for _, i := range cols {
		n += 1 + compareColumns[i].width()
	}
	return n
}

func TestBestRows(t *testing.T) {
	col := func(better int) column {
		return column{Column: feature.Column{Title: "t", Better: better, Value: func(es *stats.EndpointStats) (float64, bool) {
			return float64(es.Requests), es.Requests > 0
		}}}
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

// colsOf is the compare table's columns for eps (columnsFor without the legend).
func colsOf(eps []config.Endpoint) []column {
	cols, _ := columnsFor(eps)
	return cols
}

// The legend names the units of the feature columns the table has, and only those: turns'
// columns add nothing, the objectives their meaning, a price its currency.
func TestCompareLegendNamesItsColumns(t *testing.T) {
	slo := config.SLO{TTFT: 500 * time.Millisecond}
	for _, tc := range []struct {
		name string
		ep   func(e *config.Endpoint)
		want string
	}{
		{"plain", func(*config.Endpoint) {}, ""},
		{"turns", func(e *config.Endpoint) { e.Turns = 2 }, ""},
		{"slo", func(e *config.Endpoint) { e.SLO = slo }, " · slo %: met every objective"},
		{"price", func(e *config.Endpoint) { e.Price = &config.Price{} }, " · $ in USD"},
		{"both", func(e *config.Endpoint) { e.SLO, e.Price = slo, &config.Price{} }, " · slo %: met every objective · $ in USD"},
	} {
		ep := config.NewEndpoint("http://h/v1", "m")
		tc.ep(&ep)
		if _, got := columnsFor([]config.Endpoint{config.NewEndpoint("http://g/v1", "m"), ep}); got != tc.want {
			t.Errorf("%s: legend adds %q, want %q", tc.name, got, tc.want)
		}
	}
}
