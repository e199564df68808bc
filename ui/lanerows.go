package ui

import (
	"slices"
	"time"

	"tokscope/workload"
)

// What the Lanes view keeps of the turns it drew (lanes.go), lane by lane: each turn with the
// row it was drawn on, and each sub-agent's span on its row from its fork to its join.
//
// A lane's own row (row 0) holds its root agent's turns. A sub-agent takes the first row
// under its lane that no live sub-agent holds, when its first turn starts, and keeps it until
// it is joined: when its parent starts a turn while it has none in flight and its last turn
// ended before that turn started (a sub-agent in the foreground is joined exactly there; one
// in the background between two of its turns is joined too, and with its next turn goes on
// on its row when that is still free, else takes another), or when the lane's next session
// starts.
// So two sub-agents running at once are on two rows, and a row is free again once its
// sub-agent ended. A replay (Done events only) places each turn when it finishes, by its start.

// laneKeep bounds what a lane keeps: its last laneKeep turns, its sub-agents' included, and as
// many sub-agent spans. A lane of 60 s shows far fewer.
const laneKeep = 256

// laneTurn is one turn as drawn, and its breakdown once it finished.
type laneTurn struct {
	seq               uint64
	ctx               uint64               // the context: workload.SessionTurn.ID
	depth, row        int                  // row 0 is the lane's own; 1… the rows of its sub-agents
	start, first, end time.Time            // first zero before (or without) a first token, end zero in flight
	queued            time.Time            // the end of the server's queue, where its response reports one; else zero
	failed            bool                 // failed, or missed the endpoint's objectives
	text              string               // the breakdown (turnBreakdown), "" in flight
	session           workload.SessionTurn // where it runs: what an in-flight turn's breakdown says
}

// laneSpan is a sub-agent on its row: from its first turn's start to its last turn's end.
type laneSpan struct {
	ctx, parent uint64
	row, depth  int
	from, to    time.Time
	flying      int  // its turns in flight
	joined      bool // its row is free again
}

// lane is one loop of -n of an endpoint.
type lane struct {
	num    int
	root   uint64 // the session it runs (its root context)
	turns  []*laneTurn
	spans  []*laneSpan
	live   map[uint64]*laneSpan // by context: the sub-agents that hold a row
	rowOf  map[uint64]int       // by context: the row a joined sub-agent had, to take it again
	holder map[int]*laneSpan    // by row
}

func newLane(num int) *lane {
	return &lane{num: num, live: map[uint64]*laneSpan{}, rowOf: map[uint64]int{}, holder: map[int]*laneSpan{}}
}

// place adds a turn of st starting at start (in flight when flying) and returns it.
func (l *lane) place(st *workload.SessionTurn, seq uint64, start time.Time, flying bool) *laneTurn {
	if st.Root != l.root {
		for _, sp := range l.live {
			l.release(sp)
		}
		clear(l.rowOf)
		l.root = st.Root
	}
	l.join(st.ID, start)
	t := &laneTurn{seq: seq, ctx: st.ID, depth: st.Depth, start: start, session: *st}
	if st.Depth > 0 {
		sp := l.live[st.ID]
		if sp == nil {
			sp = l.fork(st, start)
		}
		t.row = sp.row
		if start.Before(sp.from) {
			sp.from = start
		}
		if flying {
			sp.flying++
		}
	}
	l.turns = append(l.turns, t)
	if len(l.turns) > laneKeep {
		l.turns = slices.Delete(l.turns, 0, len(l.turns)-laneKeep)
	}
	return t
}

// finish ends t at end: its sub-agent's span reaches its end.
func (l *lane) finish(t *laneTurn, end time.Time, wasFlying bool) {
	t.end = end
	sp := l.live[t.ctx]
	if t.depth == 0 || sp == nil {
		return
	}
	if wasFlying && sp.flying > 0 {
		sp.flying--
	}
	if end.After(sp.to) {
		sp.to = end
	}
}

// join frees the rows of parent's sub-agents that are idle since before at, and of theirs.
func (l *lane) join(parent uint64, at time.Time) {
	for _, sp := range l.live {
		if sp.parent == parent && sp.flying == 0 && !sp.to.After(at) {
			l.join(sp.ctx, at)
			l.release(sp)
		}
	}
}

func (l *lane) release(sp *laneSpan) {
	sp.joined = true
	delete(l.live, sp.ctx)
	if l.holder[sp.row] == sp {
		delete(l.holder, sp.row)
	}
	l.rowOf[sp.ctx] = sp.row
}

// fork gives st's sub-agent a row: the one it had when that is free, else the first free.
func (l *lane) fork(st *workload.SessionTurn, start time.Time) *laneSpan {
	row, ok := l.rowOf[st.ID]
	ok = ok && l.holder[row] == nil
	if !ok {
		row = 1
		for l.holder[row] != nil {
			row++
		}
	}
	if ok { // its row is still free and nobody had it since: the same span goes on
		for i := len(l.spans) - 1; i >= 0; i-- {
			if sp := l.spans[i]; sp.row == row {
				if sp.ctx == st.ID {
					sp.joined = false
					l.live[st.ID], l.holder[row] = sp, sp
					return sp
				}
				break
			}
		}
	}
	sp := &laneSpan{ctx: st.ID, parent: st.Parent, row: row, depth: st.Depth, from: start, to: start}
	l.live[st.ID], l.holder[row] = sp, sp
	l.spans = append(l.spans, sp)
	if drop := len(l.spans) - laneKeep; drop > 0 { // the oldest that ended
		l.spans = slices.DeleteFunc(l.spans, func(s *laneSpan) bool {
			if s.joined && drop > 0 {
				drop--
				return true
			}
			return false
		})
	}
	if len(l.rowOf) > laneKeep {
		clear(l.rowOf)
	}
	return sp
}

// rows are the lane's rows that show at now: its own while a turn of it is in flight or
// inside the window (a lane that -n gave up goes), and each sub-agent row held or with a span
// inside the window.
func (l *lane) rows(now time.Time) []int {
	var out []int
	from := now.Add(-lanesWindow)
	if slices.ContainsFunc(l.turns, func(t *laneTurn) bool { return t.end.IsZero() || t.end.After(from) }) {
		out = append(out, 0)
	}
	hi := 0
	for r := range l.holder {
		hi = max(hi, r)
	}
	for _, sp := range l.spans {
		if sp.to.After(from) {
			hi = max(hi, sp.row)
		}
	}
	for r := 1; r <= hi; r++ {
		shown := l.holder[r] != nil
		for _, sp := range l.spans {
			shown = shown || sp.row == r && sp.to.After(from)
		}
		if shown {
			out = append(out, r)
		}
	}
	if len(out) > 0 && out[0] != 0 { // a sub-agent shows under its lane's row
		out = append([]int{0}, out...)
	}
	return out
}

// depthOf is the depth of the sub-agent that holds row r, or last held it.
func (l *lane) depthOf(r int) int {
	if sp := l.holder[r]; sp != nil {
		return sp.depth
	}
	for i := len(l.spans) - 1; i >= 0; i-- {
		if l.spans[i].row == r {
			return l.spans[i].depth
		}
	}
	return 1
}

// onRow are the turns drawn on row r, by start.
func (l *lane) onRow(r int) []*laneTurn {
	var out []*laneTurn
	for _, t := range l.turns {
		if t.row == r {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b *laneTurn) int { return a.start.Compare(b.start) })
	return out
}
