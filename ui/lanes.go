package ui

import (
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/stats"
)

// The Lanes view (agent sessions, --sessions): one row per lane of the selected endpoint
// (a loop of -n), time flowing left to right up to now; each turn in ▁ while in the server's
// queue where the server reports it, from then (or its t0) to its first token (under
// --ttft-from) in ░ (wait and prefill), then to its end in █ (decode), a turn in
// flight up to now, a failed turn, or one that missed the endpoint's objectives, in the error
// colour (× without colour); each sub-agent on a row of its own under its lane (lanerows.go)
// from its fork ╭ to its join ╯, ─ between its turns; blanks on a lane's row are tool and
// think time. A strip under the rows draws the endpoint's requests in flight per column
// (lanesdraw.go). It is in the header and the Tab cycle once a session turn was seen.
//
// Keys: ←/→ select the previous or next turn on a row (the first press, the last finished
// turn), ↑/↓ the nearest turn on the row above or below; Esc returns to following the last
// finished turn. While following, ↑/↓ choose the endpoint as in the other views. The turn
// shown (selected or last) is highlighted and its breakdown is under the strip.

// lanesWindow is the time the rows span.
const lanesWindow = 60 * time.Second

// flightKeep bounds the finished requests an endpoint keeps for its in-flight strip.
const flightKeep = 1024

// interval is one request of the endpoint, from t0 to its end.
type interval struct{ from, to time.Time }

// epLanes is what the view keeps of one endpoint.
type epLanes struct {
	lanes  map[int]*lane
	flying map[uint64]*laneTurn // session turns in flight, by Seq
	laneOf map[uint64]*lane
	last   *laneTurn            // the last finished turn
	open   map[uint64]time.Time // every request of the endpoint in flight, by Seq: its t0
	closed []interval           // its last flightKeep finished requests
}

type lanesView struct {
	common
	names    []string
	slos     []config.SLO    // by endpoint: a turn that misses its objectives is drawn as a failure
	ttftFrom sample.TTFTFrom // --ttft-from: the first token drawn and judged
	eps      []*epLanes
	seen     bool
	stopped  bool
	// The selection: endpoint selEp's turn selSeq; following the last finished turn when off.
	selOn  bool
	selEp  int
	selSeq uint64
	drawn  time.Time // the now of the last Render
}

func newLanesView(c common, eps []config.Endpoint, ttftFrom sample.TTFTFrom) *lanesView {
	v := &lanesView{common: c, ttftFrom: ttftFrom}
	for _, ep := range eps {
		v.names, v.slos = append(v.names, ep.Name), append(v.slos, ep.SLO)
		v.eps = append(v.eps, &epLanes{lanes: map[int]*lane{}, flying: map[uint64]*laneTurn{}, laneOf: map[uint64]*lane{},
			open: map[uint64]time.Time{}})
	}
	return v
}

func (v *lanesView) Name() string { return "Lanes" }

// InTabs: only once a session's turn was seen.
func (v *lanesView) InTabs() bool { return v.seen }

// Live: the rows move with the clock (tool gaps included) until the events end.
func (v *lanesView) Live() bool { return v.seen && !v.stopped }
func (v *lanesView) Stop()      { v.stopped = true }

func (v *lanesView) Info() string {
	switch {
	case !v.seen:
		return ""
	case v.selOn:
		return "turn selected · esc: follow the last"
	}
	return "following the last turn · ←/→: select"
}

// ShortHelp names the arrows and Esc as this view uses them.
func (v *lanesView) ShortHelp() []key.Binding {
	k := v.keys
	turn := key.NewBinding(key.WithKeys("left", "right"), key.WithHelp("←/→", "turn"))
	row := key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "row"))
	follow := key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "follow"))
	return []key.Binding{k.Help, k.NextView, turn, row, follow, k.Pause, k.Quit}
}

// Observe takes every request's Started and Done (the in-flight strip) and the session
// turns' Progress; it never claims an event (the model goes on counting it).
func (v *lanesView) Observe(ev sample.Event) bool {
	switch e := ev.(type) {
	case *sample.Started:
		if !e.Endpoint.In(len(v.eps)) {
			return false
		}
		el := v.eps[e.Endpoint]
		el.open[e.Seq] = e.At
		if st := e.Session; st != nil && st.Lane > 0 {
			v.seen = true
			l := el.lane(st.Lane)
			el.flying[e.Seq], el.laneOf[e.Seq] = l.place(st, e.Seq, e.At, true), l
		}
	case *sample.Progress:
		if e.Endpoint.In(len(v.eps)) {
			if t := v.eps[e.Endpoint].flying[e.Seq]; t != nil && t.first.IsZero() {
				if d, ok := e.TTFT(v.ttftFrom); ok {
					t.first = e.Start.Add(d)
				}
			}
		}
	case *sample.Done:
		v.done(e)
	}
	return false
}

func (el *epLanes) lane(num int) *lane {
	l := el.lanes[num]
	if l == nil {
		l = newLane(num)
		el.lanes[num] = l
	}
	return l
}

func (v *lanesView) done(e *sample.Done) {
	if !e.Endpoint.In(len(v.eps)) {
		return
	}
	s, el := &e.Sample, v.eps[e.Endpoint]
	delete(el.open, s.Seq)
	el.closed = append(el.closed, interval{s.Start, s.Start.Add(max(s.End, 0))})
	if len(el.closed) > flightKeep {
		el.closed = slices.Delete(el.closed, 0, len(el.closed)-flightKeep)
	}
	st := s.Session
	if st == nil || st.Lane <= 0 {
		return
	}
	v.seen = true
	t, l := el.flying[s.Seq], el.laneOf[s.Seq]
	flew := t != nil
	delete(el.flying, s.Seq)
	delete(el.laneOf, s.Seq)
	if t == nil { // a replay: no Started
		l = el.lane(st.Lane)
		t = l.place(st, s.Seq, s.Start, false)
	}
	counted, good := stats.MeetsSLO(v.slos[e.Endpoint], s, v.ttftFrom)
	t.failed = s.Outcome != sample.OutcomeOK || counted && !good
	t.first = time.Time{}
	if d, ok := v.ttftFrom.TTFT(s); ok {
		t.first = s.Start.Add(d)
	}
	t.queued = time.Time{}
	if srv := s.Server; srv != nil && srv.QueueMs >= 0 { // from the request's sending
		t.queued = s.Start.Add(max(s.Wrote, 0) + time.Duration(float64(srv.QueueMs)*float64(time.Millisecond)))
	}
	t.text = turnBreakdown(s, v.ttftFrom, t.failed && s.Outcome == sample.OutcomeOK)
	l.finish(t, s.Start.Add(max(s.End, 0)), flew)
	if !s.Warmup {
		el.last = t
	}
}

// laneRowRef is one drawn row: a lane and its row.
type laneRowRef struct {
	l   *lane
	row int
}

// rowsOf are endpoint ep's rows at now, by lane then row.
func (v *lanesView) rowsOf(ep int, now time.Time) []laneRowRef {
	el := v.eps[ep]
	nums := make([]int, 0, len(el.lanes))
	for n := range el.lanes {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	var out []laneRowRef
	for _, n := range nums {
		for _, r := range el.lanes[n].rows(now) {
			out = append(out, laneRowRef{el.lanes[n], r})
		}
	}
	return out
}

// shown is the turn whose breakdown shows, and its lane: the selected one, else the last
// finished; nil when there is none (or the selected one is no longer kept).
func (v *lanesView) shown(ep int) (*laneTurn, *lane) {
	el := v.eps[ep]
	want := el.last
	if v.selOn && v.selEp == ep {
		want = nil
	}
	for _, l := range el.lanes {
		for _, t := range l.turns {
			if t == want || want == nil && v.selOn && v.selEp == ep && t.seq == v.selSeq {
				return t, l
			}
		}
	}
	return nil, nil
}

// Move (mover): ←/→ select along the row, ↑/↓ across rows; while following, ←/→ select the
// last finished turn and ↑/↓ choose the endpoint.
func (v *lanesView) Move(sel, dx, dy int) int {
	n := len(v.eps)
	if sel < 0 || sel >= n {
		return sel
	}
	cur, l := v.shown(sel)
	if !v.selOn || v.selEp != sel || cur == nil {
		v.selOn = false
		if dx == 0 {
			return (sel + dy + n) % n
		}
		if cur != nil {
			v.selOn, v.selEp, v.selSeq = true, sel, cur.seq
		}
		return sel
	}
	if dx != 0 {
		turns := l.onRow(cur.row)
		i := slices.Index(turns, cur) + dx
		if i >= 0 && i < len(turns) {
			v.selSeq = turns[i].seq
		}
		return sel
	}
	rows := v.rowsOf(sel, v.drawn) // the rows as last drawn
	i := slices.IndexFunc(rows, func(r laneRowRef) bool { return r.l == l && r.row == cur.row })
	for i += dy; i >= 0 && i < len(rows); i += dy {
		if t := nearest(rows[i].l.onRow(rows[i].row), cur.start); t != nil {
			v.selSeq = t.seq
			break
		}
	}
	return sel
}

// nearest is the turn of turns that starts nearest at.
func nearest(turns []*laneTurn, at time.Time) *laneTurn {
	var best *laneTurn
	for _, t := range turns {
		if best == nil || t.start.Sub(at).Abs() < best.start.Sub(at).Abs() {
			best = t
		}
	}
	return best
}

// Esc returns to following, when a turn is selected; else it is the model's (back).

func (v *lanesView) Captures() bool { return false }

func (v *lanesView) Owns(msg tea.KeyMsg, shown bool) bool {
	return shown && v.selOn && key.Matches(msg, v.keys.Back)
}

func (v *lanesView) HandleKey(tea.KeyMsg, *frame, bool) keyResult {
	v.selOn = false
	return keyResult{}
}
