package report

import (
	"cmp"
	"fmt"
	"image/color"
	"maps"
	"slices"
	"strconv"
	"time"

	"tokscope/sample"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Agent sessions (--sessions): the lanes of each endpoint over the run, as the live view
// would draw them. One row per lane (a loop of -n), time left to right; each turn a bar from
// its t0 to its end, dashed while it waits in the server's queue where the server reports
// it (vLLM), thin until its first token (wait and prefill, to the instant of --ttft-from) and
// thick after (decode); each sub-agent on a row of its own under its lane
// (the first row no other sub-agent of the lane holds from its first turn's start to its last
// turn's end, so sub-agents running at once are on rows of their own, and a row is free again
// once its sub-agent ended), tied to its parent's row by a thin line down at its fork and up
// at its join, and a thin line along its row between them; the blanks on a lane's row are the
// tool and think time; a failed turn, or one that missed the objectives, in the error colour.
// And a table of the ideal and served cache hits.

// laneTurn is a request's place in a session's lane.
type laneTurn struct {
	lane, depth int    // lane from 1; 0 outside sessions
	ctx, parent uint64 // its context (workload.SessionTurn.ID) and the one that started it
	first       int64  // Unix ns of its first token (--ttft-from); 0 when none came
	queued      int64  // Unix ns of the end of the server's queue, where it reports one; else 0
}

func laneTurnOf(s *sample.Sample, f sample.TTFTFrom) laneTurn {
	if s.Session == nil || s.Session.Lane <= 0 {
		return laneTurn{}
	}
	t := laneTurn{lane: s.Session.Lane, depth: s.Session.Depth, ctx: s.Session.ID, parent: s.Session.Parent}
	if d, ok := f.TTFT(s); ok {
		t.first = s.Start.Add(d).UnixNano()
	}
	if srv := s.Server; srv != nil && srv.QueueMs >= 0 { // from the request's sending
		t.queued = s.Start.Add(max(s.Wrote, 0) + time.Duration(float64(srv.QueueMs)*float64(time.Millisecond))).UnixNano()
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
		if l.dashed {
			ln.Dashes = []vg.Length{vg.Points(2), vg.Points(1.5)}
		}
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

// laneCtx is one context (root agent or sub-agent) of an endpoint's sessions.
type laneCtx struct {
	ctx, parent uint64
	lane, depth int
	from, to    int64 // its first turn's start, its last turn's end (Unix ns)
	row         int   // 0 its lane's own row; 1… a sub-agent's row under it
	y           float64
}

// laneLayout places every context of reqs on its row and the rows on the Y axis, the first
// lane at the top; it returns the contexts by id and the axis's ticks (a lane's row labelled
// with its number, a sub-agent's row "sub" while they fit).
func laneLayout(reqs []request) (map[uint64]*laneCtx, []plot.Tick) {
	ctxs := map[uint64]*laneCtx{}
	for _, r := range reqs {
		t := r.turn
		if t.lane == 0 {
			continue
		}
		c := ctxs[t.ctx]
		if c == nil {
			c = &laneCtx{ctx: t.ctx, parent: t.parent, lane: t.lane, depth: t.depth, from: r.start, to: r.end}
			ctxs[t.ctx] = c
		}
		c.from, c.to = min(c.from, r.start), max(c.to, r.end)
	}
	subs := map[int][]*laneCtx{} // by lane, sub-agents by their start
	for _, c := range ctxs {
		if c.depth > 0 {
			subs[c.lane] = append(subs[c.lane], c)
		} else if _, ok := subs[c.lane]; !ok {
			subs[c.lane] = nil
		}
	}
	lanes := slices.Sorted(maps.Keys(subs))
	rows := map[int]int{} // by lane: its sub-agent rows
	for _, ln := range lanes {
		l := subs[ln]
		slices.SortFunc(l, func(a, b *laneCtx) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.ctx, b.ctx)) })
		var freeAt []int64 // by row-1: when its last sub-agent ended
		for _, c := range l {
			c.row = slices.IndexFunc(freeAt, func(end int64) bool { return end < c.from }) + 1
			if c.row == 0 {
				freeAt = append(freeAt, 0)
				c.row = len(freeAt)
			}
			freeAt[c.row-1] = c.to
		}
		rows[ln] = len(freeAt)
	}
	total := 0
	for _, ln := range lanes {
		total += 1 + rows[ln]
	}
	var ticks []plot.Tick
	top := make(map[int]float64, len(lanes)) // by lane: its own row's y
	k := 0
	for _, ln := range lanes {
		top[ln] = float64(total - k)
		ticks = append(ticks, plot.Tick{Value: top[ln], Label: strconv.Itoa(ln)})
		for r := 1; r <= rows[ln]; r++ {
			label := ""
			if total <= 24 {
				label = "sub"
			}
			ticks = append(ticks, plot.Tick{Value: top[ln] - float64(r), Label: label})
		}
		k += 1 + rows[ln]
	}
	for _, c := range ctxs {
		c.y = top[c.lane] - float64(c.row)
	}
	return ctxs, ticks
}

// laneChart is one endpoint's lanes over the run's time (seconds from first).
func laneChart(ep endpointRef, first int64) *chart {
	c := &chart{id: "lanes-" + strconv.Itoa(ep.idx), title: ep.name + ": lanes", xLabel: "time since start (s)",
		yLabel: "lane", xFromZero: true,
		note: "One row per lane (-n); each turn from t0 to its end, dashed while in the server's queue (where the server reports it), thin until its first token, thick while it decodes; " +
			"each sub-agent on a row of its own under its lane, a thin line down from its parent's row at its fork and back up at its join; " +
			"blanks are tool and think time; failed turns and turns that missed the objectives in red."}
	wait := layer{ep: ep.idx, kind: drawSegments, width: 1.5}
	decode := layer{ep: ep.idx, kind: drawSegments, width: 5}
	failed := layer{ep: ep.idx, kind: drawSegments, width: 5, failed: true}
	links := layer{ep: ep.idx, kind: drawSegments, width: 0.5}
	queue := layer{ep: ep.idx, kind: drawSegments, width: 0.75, dashed: true}
	sec := func(ns int64) float64 { return float64(ns-first) / 1e9 }
	ctxs, ticks := laneLayout(ep.series.requests)
	for _, r := range ep.series.requests {
		t := r.turn
		if t.lane == 0 {
			continue
		}
		y := ctxs[t.ctx].y
		switch {
		case r.outcome != sample.OutcomeOK || r.missedSLO():
			failed.xs, failed.ys = append(failed.xs, sec(r.start), sec(r.end)), append(failed.ys, y, y)
		case t.first > 0:
			from := r.start
			if t.queued > r.start && t.queued < t.first {
				queue.xs, queue.ys = append(queue.xs, sec(r.start), sec(t.queued)), append(queue.ys, y, y)
				from = t.queued
			}
			wait.xs, wait.ys = append(wait.xs, sec(from), sec(t.first)), append(wait.ys, y, y)
			decode.xs, decode.ys = append(decode.xs, sec(t.first), sec(r.end)), append(decode.ys, y, y)
		default:
			wait.xs, wait.ys = append(wait.xs, sec(r.start), sec(r.end)), append(wait.ys, y, y)
		}
	}
	for _, cx := range ctxs {
		if cx.depth == 0 {
			continue
		}
		py := float64(len(ticks)) // a parent not in the report: the top of the chart
		if p := ctxs[cx.parent]; p != nil {
			py = p.y
		}
		from, to := sec(cx.from), sec(cx.to)
		links.xs = append(links.xs, from, from, from, to, to, to)
		links.ys = append(links.ys, py, cx.y, cx.y, cx.y, cx.y, py)
	}
	for _, l := range []layer{links, queue, wait, decode, failed} {
		if len(l.xs) > 0 {
			c.layers = append(c.layers, l)
		}
	}
	hi := float64(len(ticks)) + 0.5
	c.yMax, c.yFromZero, c.yTicks = &hi, true, ticks
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
