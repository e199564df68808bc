package probe

import (
	"sync"
	"time"

	"tokscope/workload"
)

// Agent sessions (--sessions): each request loop of the lane is a lane of sessions. It takes
// the pool's next session, sends its turns one after the other with the recorded tool and
// think time between them (the gap policy), starts each sub-agent when its parent reaches it
// (on goroutines of the same loop, so they count toward the same endpoint) and joins it
// before the parent's next turn unless the trace shows it in the background (then at the
// session's end); when the session is over it takes the next. A session takes all its
// turns' tickets of Options.Requests when it starts (quota.takeConversation), sub-agents'
// included, and once started is finished: only the end of the run or of the stream (between
// two turns) stops it. A failed turn does not end its session: the next turn's prompt does not depend on the
// reply.

// sessionsOn reports that the lane replays agent sessions.
func (l *lane) sessionsOn() bool { return l.work != nil && l.work.Sessions() != nil }

// sessionLoop is request loop i of a session replay.
func (l *lane) sessionLoop(i int) {
	started := false
	for l.wanted(i) {
		if !l.waitReady(i) {
			continue
		}
		if l.warm.take() { // warm-ups are the endpoint's plain requests, as without sessions
			l.once(true, time.Time{}, l.nextRequest(), nil)
			continue
		}
		select {
		case <-l.warm.done():
		case <-l.ctx.Done():
			continue
		}
		if !started {
			started = true
			if !l.stagger(i) {
				continue
			}
		}
		run := l.work.NewSessionRun()
		if !l.quota.takeConversation(run.Turns()) {
			continue // every ticket is out: the loop ends
		}
		sent := l.runSession(run, i)
		if left := run.Turns() - sent; left > 0 && l.ctx.Err() == nil && l.quota.skip(left) {
			l.finish()
		}
	}
}

// sessionCtx is one context (the root agent or a sub-agent) of a session in progress.
type sessionCtx struct {
	run    *workload.SessionRun
	id     uint64
	root   uint64
	lane   int // the loop the session runs in, from 1
	parent uint64
	depth  int
	bg     *sync.WaitGroup // the session's background sub-agents
	mu     *sync.Mutex     // guards sent
	sent   *int            // turns sent in the whole session
}

// runSession replays one session; it returns how many of its turns were sent (all of them
// unless the run or the stream ended).
func (l *lane) runSession(run *workload.SessionRun, loop int) int {
	var bg sync.WaitGroup
	var mu sync.Mutex
	sent := 0
	id := run.NewContext()
	root := sessionCtx{run: run, id: id, root: id, lane: loop + 1, bg: &bg, mu: &mu, sent: &sent}
	l.runAgent(root, run.Steps())
	bg.Wait()
	return sent
}

// runAgent sends one context's turns (steps) and starts its sub-agents. Each turn is built
// before its wait (its prompt's tokenizing is not added to the recorded gap), and leaves the
// recorded gap after the context's previous turn ended, or after the sub-agents it joined;
// a context's first turn leaves at once (a replay started mid-way included).
func (l *lane) runAgent(c sessionCtx, steps []workload.Step) {
	gaps := l.work.SessionGaps()
	turn := 0
	th := workload.NewThread() // the context's messages, threaded turn on turn
	lastEnd := time.Now()      // the end of the context's previous turn
	var fg sync.WaitGroup      // sub-agents to join before the next turn
	joining := false
	for _, st := range steps {
		if l.ctx.Err() != nil {
			break
		}
		if st.Sub != nil {
			joining = joining || !st.Sub.Background
			l.startSub(c, st.Sub, lastEnd, gaps, &fg)
			continue
		}
		fg.Wait()
		from := lastEnd
		if joining {
			from, joining = time.Now(), false // the recorded gap runs from the last joined sub-agent's end
		}
		turn++
		req := c.run.Request(st.Turn, workload.SessionTurn{ID: c.id, Root: c.root, Lane: c.lane, Parent: c.parent, Depth: c.depth, Turn: turn}, th)
		if d := gaps.Wait(st.Turn.Gap) - time.Since(from); d > 0 && turn > 1 {
			l.sleep(d, 0)
		}
		l.holdWhilePaused()
		if !l.streamKept(c.lane - 1) {
			break // the run ended, or the stream was taken away (-, a search's smaller step)
		}
		if turn > 1 {
			req.Session.Gap = time.Since(lastEnd)
		}
		_, ok := l.once(false, time.Time{}, req, nil)
		c.mu.Lock()
		*c.sent++
		c.mu.Unlock()
		if !ok {
			break // abandoned with the run
		}
		lastEnd = time.Now()
	}
	fg.Wait()
}

// startSub starts a sub-agent after its recorded start (under the gap policy) from its
// parent's last turn's end: joined before the parent's next turn (fg), or in the background
// until the session ends.
func (l *lane) startSub(c sessionCtx, sub *workload.SubAgent, from time.Time, gaps workload.GapPolicy, fg *sync.WaitGroup) {
	wg := fg
	if sub.Background {
		wg = c.bg
	}
	child := c
	child.id, child.parent, child.depth = c.run.NewContext(), c.id, sub.Agent.Depth
	wg.Add(1)
	go func() {
		defer wg.Done()
		if d := gaps.Wait(sub.Start) - time.Since(from); d > 0 {
			l.sleep(d, 0)
		}
		l.runAgent(child, sub.Agent.Steps)
	}()
}

// streamKept reports that loop i is still one of the endpoint's streams: a session in
// progress goes on past the last ticket of Options.Requests (it is finished once begun), but
// not past its stream, so the sessions in flight never outnumber the streams.
func (l *lane) streamKept(i int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live && i < l.target && l.ctx.Err() == nil
}

// holdWhilePaused holds a session's next turn while the endpoint is paused (the TUI's p): a
// session in progress stops between turns, and goes on where it was.
func (l *lane) holdWhilePaused() {
	for {
		l.mu.Lock()
		paused, wake := l.paused && l.ctx.Err() == nil, l.wake
		l.mu.Unlock()
		if !paused {
			return
		}
		select {
		case <-wake:
		case <-l.ctx.Done():
			return
		}
	}
}
