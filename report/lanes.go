package report

import (
	"fmt"
	"image/color"
	"slices"
	"strconv"

	"tokscope/sample"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Agent sessions (--sessions): the lanes of each endpoint over the run, as the live view
// would draw them. One row per lane (a loop of -n), time left to right; each turn a bar from
// its t0 to its end, thin until its first token (wait and prefill) and thick after (decode);
// a sub-agent's turns just under its lane, one step per depth; the blanks between bars are
// the tool and think time; a failed turn, or one that missed the objectives, in the error
// colour. And a table of the ideal and
// served cache hits.

// laneTurn is a request's place in a session's lane.
type laneTurn struct {
	lane, depth int   // lane from 1; 0 outside sessions
	first       int64 // Unix ns of its first token; 0 when none came
}

func laneTurnOf(s *sample.Sample, f sample.TTFTFrom) laneTurn {
	if s.Session == nil || s.Session.Lane <= 0 {
		return laneTurn{}
	}
	t := laneTurn{lane: s.Session.Lane, depth: s.Session.Depth}
	if d, ok := f.TTFT(s); ok {
		t.first = s.Start.Add(d).UnixNano()
	}
	return t
}

// errorColor draws failed turns.
var errorColor = color.NRGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}

// addSegments draws l's point pairs as lines of l.width points.
func addSegments(p *plot.Plot, l *layer, col color.NRGBA) error {
	if l.failed {
		col = errorColor
	}
	for i := 0; i+1 < len(l.xs); i += 2 {
		ln, err := plotter.NewLine(plotter.XYs{{X: l.xs[i], Y: l.ys[i]}, {X: l.xs[i+1], Y: l.ys[i+1]}})
		if err != nil {
			return err
		}
		ln.Color, ln.Width = col, vg.Points(l.width)
		p.Add(ln)
	}
	return nil
}

// hasLanes reports whether an endpoint of the report replayed sessions.
func hasLanes(eps []endpointRef) bool {
	for i := range eps {
		if eps[i].series != nil && slices.ContainsFunc(eps[i].series.requests, func(r request) bool { return r.turn.lane > 0 }) {
			return true
		}
	}
	return false
}

// laneChart is one endpoint's lanes over the run's time (seconds from first).
func laneChart(ep endpointRef, first int64) *chart {
	c := &chart{id: "lanes-" + strconv.Itoa(ep.idx), title: ep.name + ": lanes", xLabel: "time since start (s)",
		yLabel: "lane", yInteger: true, xFromZero: true,
		note: "One row per lane (-n); each turn from t0 to its end, thin until its first token, thick while it decodes; " +
			"sub-agents just under their lane; blanks are tool and think time; failed turns in red."}
	wait := layer{ep: ep.idx, kind: drawSegments, width: 1.5}
	decode := layer{ep: ep.idx, kind: drawSegments, width: 5}
	failed := layer{ep: ep.idx, kind: drawSegments, width: 5, failed: true}
	sec := func(ns int64) float64 { return float64(ns-first) / 1e9 }
	lanes := 0
	for _, r := range ep.series.requests {
		t := r.turn
		if t.lane == 0 {
			continue
		}
		lanes = max(lanes, t.lane)
		y := float64(t.lane) - 0.25*float64(t.depth)
		switch {
		case r.outcome != sample.OutcomeOK || r.sloCounted && !r.sloGood:
			failed.xs, failed.ys = append(failed.xs, sec(r.start), sec(r.end)), append(failed.ys, y, y)
		case t.first > 0:
			wait.xs, wait.ys = append(wait.xs, sec(r.start), sec(t.first)), append(wait.ys, y, y)
			decode.xs, decode.ys = append(decode.xs, sec(t.first), sec(r.end)), append(decode.ys, y, y)
		default:
			wait.xs, wait.ys = append(wait.xs, sec(r.start), sec(r.end)), append(wait.ys, y, y)
		}
	}
	for _, l := range []layer{wait, decode, failed} {
		if len(l.xs) > 0 {
			c.layers = append(c.layers, l)
		}
	}
	hi := float64(lanes) + 0.5
	c.yMax, c.yFromZero = &hi, true
	return c
}

// laneCharts are the lanes of every endpoint that replayed sessions.
func laneCharts(eps []endpointRef, first int64) []*chart {
	var out []*chart
	for i := range eps {
		if eps[i].series == nil {
			continue
		}
		if c := laneChart(eps[i], first); c.hasData() {
			out = append(out, c)
		}
	}
	return out
}

// sessionsTable: per endpoint, the ideal and served cache hits and the sessions completed.
func sessionsTable(eps []endpointRef) *SectionTable {
	t := &SectionTable{Header: []string{"endpoint", "turns", "sessions completed", "ideal cache hit", "served cache hit", "cache efficiency", "overflowed turns"}}
	pct := func(v *float64) string {
		if v == nil {
			return "—"
		}
		return strconv.FormatFloat(*v*100, 'f', 1, 64) + "%"
	}
	for i := range eps {
		st := eps[i].stats
		if st == nil || st.Sessions == nil {
			continue
		}
		s := st.Sessions
		t.Rows = append(t.Rows, []string{eps[i].name, strconv.Itoa(s.Turns), strconv.Itoa(s.Completed), pct(s.IdealHitRate),
			pct(s.ServedHitRate), pct(s.Efficiency), fmt.Sprintf("%d", s.Overflow)})
	}
	return t
}

// addLanesSection adds the sessions section when an endpoint replayed sessions.
func addLanesSection(p *page, in *Input, eps []endpointRef) error {
	if in.Requests == nil || !hasLanes(eps) {
		return nil
	}
	s, err := sectionOf("lanes", "Agent sessions", "Each endpoint's lanes over the run, and its prefix-cache hits: what a perfect cache would have served (ideal) against what the server says it served.",
		laneCharts(eps, in.Requests.first))
	if err != nil {
		return err
	}
	s.Table = sessionsTable(eps)
	p.Sections = append(p.Sections, s)
	return nil
}
