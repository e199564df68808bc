package probe

import (
	"strings"

	"tokscope/sample"

	"tokscope/workload"
)

// Conversations (--turns): a stream's conversation in progress, in the lane's request loop.
// Turn k re-sends every earlier turn with the reply as it streamed (the answer text, reasoning
// excluded), then a new user message (workload.Conversation). A conversation takes its turns'
// tickets of Options.Requests at its first turn (quota.takeConversation); a failed turn ends
// it, and its remaining turns count as done without being sent (quota.skip).

// convo is one loop's conversation state.
type convo struct {
	c      *workload.Conversation // nil between conversations
	answer strings.Builder        // the current turn's answer as it streams
}

// midway reports that a conversation was begun and has turns left to send.
func (cv *convo) midway() bool { return cv.c != nil && !cv.c.Done() }

// reply is the Delta sink that collects req's answer; nil outside conversations.
func (cv *convo) reply(req workload.Request) func(sample.Delta) {
	if req.Turn == 0 || cv.c == nil {
		return nil
	}
	cv.answer.Reset()
	return func(d sample.Delta) {
		if !d.Reasoning {
			cv.answer.WriteString(d.Text)
		}
	}
}

// tee calls both sinks; either may be nil.
func tee(a, b func(sample.Delta)) func(sample.Delta) {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(d sample.Delta) { a(d); b(d) }
}

// turns is how many requests a conversation of the lane has (1 without --turns).
func (l *lane) turns() int {
	if l.work == nil {
		return 1
	}
	return l.work.Turns()
}

// nextTurn is the loop's next request: a warm-up, a single request, or the next turn of the
// loop's conversation (a new one when the last is over).
func (l *lane) nextTurn(cv *convo, warm bool) workload.Request {
	if warm || l.work == nil || l.turns() <= 1 {
		return l.nextRequest()
	}
	if cv.c == nil || cv.c.Done() {
		cv.c = l.work.NewConversation()
	}
	return cv.c.Next()
}

// afterTurn threads the answer of a turn into its conversation; true when the conversation
// goes on (the loop then sends its next turn after the think time, not the interval). A turn
// that failed, or was abandoned or cut, ends its conversation.
func (l *lane) afterTurn(cv *convo, s *sample.Sample, ok bool) bool {
	if cv.c == nil || s.Turn == 0 {
		return false
	}
	if !ok || s.Cut || s.Outcome == sample.OutcomeError {
		l.endConversation(cv)
		return false
	}
	cv.c.Reply(cv.answer.String())
	if cv.c.Done() {
		cv.c = nil
		return false
	}
	l.sleep(l.work.ThinkTime(), 0)
	return true
}

// endConversation ends a conversation before its last turn: its remaining tickets count as
// finished, and the lane finishes if they were the last.
func (l *lane) endConversation(cv *convo) {
	if cv.c == nil {
		return
	}
	left := l.turns() - cv.c.Turn()
	cv.c.End()
	cv.c = nil
	if l.ctx.Err() != nil {
		return // the run (or the endpoint) is over: nothing waits for these tickets
	}
	if l.quota.skip(left) {
		l.finish()
	}
}

// wantedIn is wanted, except that a conversation begun is finished even when every ticket
// of Options.Requests is out: only the end of the run or of the stream stops it.
func (l *lane) wantedIn(i int, cv *convo) bool {
	if !cv.midway() {
		return l.wanted(i)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.live || i >= l.target || l.ctx.Err() != nil {
		l.running[i] = false
		return false
	}
	return true
}
