package ui

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"tokscope/sample"
	"tokscope/stats"
)

func TestChooseCardRows(t *testing.T) {
	ess := func(extra ...int) []int { // the essentials and extra, in display order
		lines := append(slices.Clone(cardEssentials), extra...)
		slices.Sort(lines)
		return lines
	}
	for _, tc := range []struct {
		name    string
		h       int
		facts   cardFacts
		want    []int // lines shown, in display order
		inTitle bool
		chartH  int
	}{
		{"minimum card: the essentials", 5, cardFacts{}, ess(), false, 1},
		{"one spare row: the requests in flight", 6, cardFacts{}, ess(lineLive), false, 1},
		{"then decode and the time axis", 8, cardFacts{}, ess(lineLive, lineDecode, lineAxis), false, 1},
		{"80×24 with four endpoints: nine rows", 9, cardFacts{}, ess(lineLive, lineDecode, lineAxis, lineErrors), false, 1},
		{"errors come first once there are some", 6, cardFacts{errors: true, lastError: true}, ess(lineErrors), false, 1},
		{"no last error: its row goes to the model", 11, cardFacts{},
			ess(lineLive, lineDecode, lineAxis, lineErrors, lineModel), false, 1},
		{"last error shown when there is one", 11, cardFacts{errors: true, lastError: true},
			ess(lineErrors, lineLive, lineDecode, lineAxis, lineLastError, lineModel), false, 1},
		{"open loop: the queue after the axis", 9, cardFacts{openLoop: true},
			ess(lineLive, lineDecode, lineAxis, lineQueue), false, 1},
		{"TLS takes the first spare row", 6, cardFacts{tls: true}, ess(lineTLS), false, 1},
		{"TLS without a spare row joins the title", 5, cardFacts{tls: true}, ess(), true, 1},
		{"spare rows make the charts taller", 17, cardFacts{},
			ess(lineLive, lineDecode, lineAxis, lineErrors, lineModel), false, 4},
		{"objectives: the SLO after the errors line", 10, cardFacts{slo: true},
			ess(lineLive, lineDecode, lineAxis, lineErrors, lineSLO), false, 1},
		{"short of rows, errors 0 before a met SLO and the server", 9, cardFacts{slo: true, server: true},
			ess(lineLive, lineDecode, lineAxis, lineErrors), false, 1},
		{"with errors, the SLO and the server before the last error", 11, cardFacts{slo: true, server: true, errors: true, lastError: true},
			ess(lineErrors, lineLive, lineDecode, lineAxis, lineSLO, lineServer), false, 1},
		{"a breach goes first, even before errors", 6, cardFacts{slo: true, breach: true, errors: true}, ess(lineSLO), false, 1},
		{"the server after the SLO", 11, cardFacts{slo: true, server: true},
			ess(lineLive, lineDecode, lineAxis, lineErrors, lineSLO, lineServer), false, 1},
		{"the server before errors without objectives", 9, cardFacts{server: true, errors: true},
			ess(lineErrors, lineLive, lineDecode, lineAxis), false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := chooseCardRows(tc.h, tc.facts)
			var got []int
			for l := range nLines {
				if r.show[l] {
					got = append(got, l)
				}
			}
			if !slices.Equal(got, tc.want) || r.tlsInTitle != tc.inTitle || r.chartH != tc.chartH {
				t.Fatalf("chooseCardRows(%d) = lines %v, TLS in title %v, chart %d; want %v, %v, %d",
					tc.h, got, r.tlsInTitle, r.chartH, tc.want, tc.inTitle, tc.chartH)
			}
		})
	}
}

// A second with no request in flight is a gap; in flight without tokens, 0 tok/s; the
// current second's tok/s is over the part of it that is over, and it shows only once half
// of it is; a second without a first token has no TTFT.
func TestChartPoints(t *testing.T) {
	at := time.Unix(1000, 0)
	secs := []stats.Second{
		{At: at, Span: time.Second},                                // nothing in flight
		{At: at.Add(time.Second), Span: time.Second, Active: true}, // waiting for a first token
		{At: at.Add(2 * time.Second), Span: time.Second, Active: true, Tokens: 50, TTFT: 80, TTFTs: 2},
		{At: at.Add(3 * time.Second), Span: 600 * time.Millisecond, Active: true, Tokens: 30}, // now: 600 ms of it
	}
	if got := chartSeconds(secs, 10); len(got) != 4 {
		t.Errorf("600 ms into the current second: %d seconds shown, want 4", len(got))
	}
	early := slices.Clone(secs)
	early[3].Span = 200 * time.Millisecond
	if got := chartSeconds(early, 10); len(got) != 3 || !got[2].At.Equal(secs[2].At) {
		t.Errorf("200 ms into the current second: %d seconds shown, want the 3 whole ones", len(got))
	}
	if got := chartSeconds(secs, 2); len(got) != 2 || !got[1].At.Equal(secs[3].At) {
		t.Errorf("2 columns: %v, want the newest 2", got)
	}
	wantTPS := []chartPoint{{}, {0, true}, {50, true}, {50, true}}
	if got := tpsPoints(secs); !slices.Equal(got, wantTPS) {
		t.Errorf("tok/s points %v, want %v", got, wantTPS)
	}
	wantTTFT := []chartPoint{{}, {}, {80, true}, {}}
	if got := ttftPoints(secs); !slices.Equal(got, wantTTFT) {
		t.Errorf("TTFT points %v, want %v", got, wantTTFT)
	}
}

// Gaps are blank columns, zeros the lowest mark, any value above zero at least "▂", the
// largest value a full column; the chart is right-aligned and exactly w×h.
func TestDrawTimeChart(t *testing.T) {
	plain := lipgloss.NewStyle()
	pts := []chartPoint{{0, true}, {}, {1, true}, {50, true}, {100, true}}
	if got := drawTimeChart(plain, pts, 7, 1); got != "  ▁ ▂▅█" {
		t.Errorf("one row: %q", got)
	}
	got := drawTimeChart(plain, pts, 5, 2)
	if want := "   ▁█\n▁ ▂██"; got != want {
		t.Errorf("two rows:\n%s\nwant\n%s", got, want)
	}
	if got := drawTimeChart(plain, []chartPoint{{}, {}}, 3, 2); got != "   \n   " {
		t.Errorf("no data: %q", got)
	}
	if got := drawTimeChart(plain, []chartPoint{{0, true}, {0, true}}, 2, 1); got != "▁▁" {
		t.Errorf("all zero: %q", got)
	}
}

func TestTimeAxis(t *testing.T) {
	for _, tc := range []struct {
		n, w int
		want string
	}{
		{36, 36, "−36s┈┈┈┈┈┈┈┈┈┈┈−18s┈┈┈┈┈┈┈┈┈┈┈┈┈┈now"},
		{10, 20, "┈┈┈┈┈┈┈┈┈┈−10s┈┈┈now"},
		{5, 5, "┈┈now"},
		{8, 8, "−8s┈┈now"},
	} {
		got := timeAxis(tc.n, tc.w)
		if ansi.StringWidth(got) != tc.w || (tc.want != "" && got != tc.want) {
			t.Errorf("timeAxis(%d, %d) = %q, want %q", tc.n, tc.w, got, tc.want)
		}
		if !strings.HasSuffix(got, "now") {
			t.Errorf("timeAxis(%d, %d) = %q: no now at the right", tc.n, tc.w, got)
		}
	}
}

// The open-loop card line: one unit for both figures (a p99 of 12.8 s was printed
// "12.8s ms"), the arrivals still waiting and those dropped.
func TestQueueLine(t *testing.T) {
	st := DefaultStyles()
	for _, tc := range []struct {
		queue            stats.Dist
		waiting, dropped int
		w                int
		want             string
	}{
		{stats.Dist{Count: 5, P50: 148, P99: 296}, 0, 0, 36, "queue p50 148 p99 296 ms · drop 0"},
		{stats.Dist{Count: 5, P50: 6234, P99: 12800}, 16, 3, 60, "queue p50 6.2 p99 12.8 s · wait 16 · drop 3"},
		{stats.Dist{Count: 5, P50: 6234, P99: 12800}, 16, 3, 36, "q p50 6.2 p99 12.8 s wait 16 drop 3"},
		{stats.Dist{Count: 5, P50: 6234, P99: 12800}, 16, 3, 24, "q 6.2/12.8s w16 d3"},
		{stats.Dist{}, 0, 0, 36, "queue p50 — p99 — ms · drop 0"},
	} {
		es := &stats.EndpointStats{Queue: tc.queue, Waiting: tc.waiting, DroppedArrivals: uint64(tc.dropped)}
		if got := queueLine(&st, es, tc.w); got != tc.want {
			t.Errorf("queueLine(p50 %v p99 %v, w %d) = %q, want %q", tc.queue.P50, tc.queue.P99, tc.w, got, tc.want)
		}
	}
}

// A card's errors line keeps whole error kinds and counts the rest ("+2 more") rather than
// cutting one; the last error's line drops the status text its kind already says.
func TestErrorLinesShortenNotCut(t *testing.T) {
	s := DefaultStyles()
	es := &stats.EndpointStats{Errors: 9, ErrorKinds: map[string]int{"http_429": 6, "http_500": 1, "stream_error": 1, "truncated_x": 1}}
	for w, want := range map[int]string{
		80: "errors 9 http_429×6 http_500×1 stream_error×1 truncated_x×1",
		46: "errors 9 http_429×6 http_500×1 +2 more",
		20: "errors 9 +4 more",
	} {
		if got := ansi.Strip(errorsLine(&s, es, w)); got != want {
			t.Errorf("width %d: %q, want %q", w, got, want)
		}
	}
	if got := statusPrefix.ReplaceAllString("429 Too Many Requests: Rate limit reached (simulated)", ""); got != "Rate limit reached (simulated)" {
		t.Errorf("without the status: %q", got)
	}
}

// TestModelLineLeavesOutTheName: when an endpoint is named after its model (one --model, no
// name), the card's model line does not say the name a second time.
func TestModelLineLeavesOutTheName(t *testing.T) {
	eps := testEndpoints(1)
	eps[0].Name, eps[0].Model, eps[0].API = "fast-gpu", "fast-gpu", "anthropic"
	m := New(newFakeControls(), eps, make(chan sample.Event), Options{Now: pinned})
	m = update(t, m, resize(100, 30))
	m = update(t, m, eventsMsg{events: history(m.eps, 3)})
	m = update(t, m, redrawMsg{})
	view := m.View()
	if n := strings.Count(view, "fast-gpu"); n != 1 {
		t.Errorf("the card says its name %d times, want 1:\n%s", n, view)
	}
	if !strings.Contains(view, "anthropic") || !strings.Contains(view, "1 stream") {
		t.Errorf("the model line lost its API or its concurrency:\n%s", view)
	}
}

// TestCardsWordAFigureAlike: cards of one width in a frame word each figure line the same
// way, whatever the digits of their values (one card's 118 tok/s and another's 42.1 do not
// pick two forms), and the slow tail is not called "(slow)", which read as a verdict.
func TestCardsWordAFigureAlike(t *testing.T) {
	digits := regexp.MustCompile(`≈?[0-9]+(\.[0-9]+)?k?|—`)
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}} {
		m, _ := newTestModel(t, 4, size[0], size[1], 12)
		view := m.View()
		forms := map[string]map[string]bool{}
		for _, row := range strings.Split(view, "\n") {
			for _, seg := range strings.FieldsFunc(row, func(r rune) bool { return r == '│' || r == '┃' || r == '║' }) {
				seg = strings.TrimSpace(seg)
				for _, head := range []string{"dec", "ttft", "agg", "srv ttft"} {
					if strings.HasPrefix(seg, head+" ") || head == "dec" && strings.HasPrefix(seg, "decode ") {
						if forms[head] == nil {
							forms[head] = map[string]bool{}
						}
						forms[head][digits.ReplaceAllString(seg, "#")] = true
					}
				}
			}
		}
		if len(forms["dec"]) == 0 || len(forms["ttft"]) == 0 {
			t.Fatalf("%v: no decode or ttft line:\n%s", size, view)
		}
		for head, seen := range forms {
			if len(seen) > 1 {
				t.Errorf("%v: the %s line is worded %d ways: %v\n%s", size, head, len(seen), slices.Collect(maps.Keys(seen)), view)
			}
		}
		if strings.Contains(view, "(slow)") {
			t.Errorf("%v: the slow tail is labelled (slow):\n%s", size, view)
		}
	}
}

// Every feature's card line (cardFeatures) is offered by cardPriority when the card has it and
// not otherwise, whatever the other facts, and draws something then: a feature added to the
// list without a place among the card's lines fails here.
func TestEveryCardFeatureHasAPlace(t *testing.T) {
	t.Parallel()
	s := DefaultStyles()
	rate := 0.5
	es := &stats.EndpointStats{
		SLO: &stats.SLOStats{Counted: 3, Good: 2, Attainment: 2.0 / 3}, Server: &stats.ServerStats{},
		GPU: &stats.GPUStats{}, ServerTiming: stats.ServerTiming{Source: "vllm"}, CacheHitRate: &rate,
	}
	p := &panel{styles: &s, open: true}
	for _, c := range cardFeatures() {
		if c.line < 0 || c.fact == nil {
			t.Errorf("a feature's card line has no row in the card's layout: give it one in featureCardPlace")
			continue
		}
		if !c.has(p, es) {
			t.Errorf("card line %d: the test's endpoint does not have it: give it the figures", c.line)
			continue
		}
		for _, others := range []cardFacts{{}, {errors: true, lastError: true, server: true, gpu: true, slo: true, turns: true, openLoop: true, srvTime: true}} {
			*c.fact(&others) = true
			if !containsLine(cardPriority(others), c.line) {
				t.Errorf("card line %d: not offered with its fact set (%+v)", c.line, others)
			}
			*c.fact(&others) = false
			if containsLine(cardPriority(others), c.line) {
				t.Errorf("card line %d: offered without its fact (%+v)", c.line, others)
			}
		}
		if c.draw(p, es, 60) == "" {
			t.Errorf("card line %d draws nothing", c.line)
		}
	}
}

// The cards of one grid row draw each line on the same row: an endpoint with errors (two more
// lines) or a TLS warning beside a healthy one does not shift the other's figures and charts.
func TestCardsOfARowAlign(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {120, 40}} {
		for _, tls := range []bool{false, true} {
			m, _ := newTestModel(t, 4, size[0], size[1], 30) // endpoint 1's last request timed out
			if tls {
				m.states[1].tlsUnverified = true
				m.states[1].version++
			}
			m = update(t, m, eventsMsg{events: inFlight(m.eps, 31)})
			m = update(t, m, redrawMsg{})
			lines := strings.Split(ansi.Strip(m.View()), "\n")
			if end := slices.IndexFunc(lines, func(l string) bool { return strings.ContainsAny(l, "┛╝╯┘") }); end > 0 {
				lines = lines[:end] // the first row of cards: endpoints 0 and 1
			}
			for _, label := range []string{"ttft ", "agg ", "now "} {
				row := [2]int{-1, -1}
				for i, l := range lines {
					r := []rune(l)
					for side, half := range []string{string(r[:len(r)/2]), string(r[len(r)/2:])} {
						if row[side] < 0 && strings.Contains(half, label) {
							row[side] = i
						}
					}
				}
				if row[0] < 0 || row[0] != row[1] {
					t.Errorf("%dx%d, TLS %v: %q on rows %v:\n%s", size[0], size[1], tls, label, row, m.View())
				}
			}
		}
	}
}
