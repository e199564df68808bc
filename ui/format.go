package ui

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"tokscope/feature"

	"github.com/charmbracelet/x/ansi"

	"tokscope/stats"
)

// The terminal's number formats and its guard against a server's control characters are
// package feature's, shared with the features' card lines; these are their names here.
const dash = feature.Dash // a figure with no data; never 0, never NaN

var (
	num, ms, pct, toks, cardMs, share = feature.Num, feature.Ms, feature.Pct, feature.Toks, feature.CardMs, feature.Share
	pick, dollars, elapsed            = feature.Pick, feature.Dollars, feature.Elapsed
	oneLine, sanitize                 = feature.OneLine, feature.Sanitize
)

func itoa(n int) string { return strconv.Itoa(n) }

// count formats a whole number: "4821", "123k" from 100,000 on.
func count(v float64) string {
	if v >= 100000 {
		return strconv.FormatFloat(v/1000, 'f', 0, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// durMs formats a duration in ms, dash when absent (negative).
func durMs(d time.Duration) string {
	if d < 0 {
		return dash
	}
	return ms(float64(d) / float64(time.Millisecond))
}

func p10(d stats.Dist) float64  { return d.P10 }
func p50(d stats.Dist) float64  { return d.P50 }
func p95(d stats.Dist) float64  { return d.P95 }
func p99(d stats.Dist) float64  { return d.P99 }
func dmax(d stats.Dist) float64 { return d.Max }

// approx is the marker put before figures whose token counts are not the server's own.
func approx(source string) string {
	switch source {
	case "usage", "":
		return ""
	}
	return "≈"
}

// sourceLabel names a token-count source for the user; estimates are marked ≈.
func sourceLabel(source string) string {
	switch source {
	case "":
		return dash
	case "usage":
		return "usage"
	case "mixed":
		return "≈mixed"
	}
	return "≈" + source
}

// errorKinds renders {"http_429": 2, "timeout": 1} as ["http_429×2", "timeout×1"], most
// frequent first.
func errorKinds(kinds map[string]int) []string {
	if len(kinds) == 0 {
		return nil
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if kinds[a] != kinds[b] {
			return kinds[b] - kinds[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + "×" + itoa(kinds[k])
	}
	return parts
}

// truncateName cuts an endpoint's name to at most w columns in the middle, keeping both
// ends: names differ at the end (the model, a port) as often as at the start, so two
// llama-servers read "127.0…82/raw-model" and "127.0…81/raw-model", where cutting the end gave
// "127.0.0.1:8082/ra…" and "127.0.0.1:8081/ra…". The end keeps two thirds.
func truncateName(s string, w int) string {
	sw := ansi.StringWidth(s)
	switch {
	case w <= 0:
		return ""
	case sw <= w:
		return s
	case w < 3:
		return truncate(s, w)
	}
	head := (w - 1) / 3
	tail := w - 1 - head
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, sw-tail, "")
}
