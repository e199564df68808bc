package stats

import (
	"strings"
	"time"

	"tokscope/sample"
)

// Agent sessions (--sessions): an endpoint's cache hits ideal against served, and its session
// figures. Every non-warm-up, non-cut turn of a session enters them, whatever its outcome.

// SessionStats are an endpoint's session figures; nil in EndpointStats outside sessions.
type SessionStats struct {
	Turns int // session turns finished (any outcome)
	// IdealHitRate is the ideal cached tokens over the prompt tokens, both in the offline
	// tokenizer, over every turn: what a perfect prefix cache would have served.
	IdealHitRate *float64
	// ServedHitRate is cached over prompt tokens as the server reported them (usage
	// cached_tokens, else llama.cpp's timings cache_n), over the turns that reported both;
	// nil when none did. Efficiency is ServedHitRate / IdealHitRate (nil when either is
	// unknown or the ideal is 0).
	ServedHitRate, Efficiency *float64
	// Overflow counts the turns refused for their length (an HTTP 4xx naming the context or
	// the length); Invalid says that more than 1 % of the turns overflowed.
	Overflow int
	Invalid  bool
	// Completed is the number of sessions whose every turn finished; PerMinute is them per
	// minute of the sessions' span (first turn's start to last turn's end).
	Completed int
	PerMinute *float64
	// Per completed session: Duration (first start to last end), Model (time with at least
	// one of its turns in flight), Tool (the rest: tool and think time), all ms; TurnsPer (its
	// turns), OutputTPS (output tokens over model time).
	Duration, Model, Tool, TurnsPer, OutputTPS Dist
	// TTFT (ms) of sessions' first turns (the root's first) and of every later turn.
	FirstTTFT, LaterTTFT Dist
}

// OverflowLimit is the share of overflowing turns above which a session run is invalid.
const OverflowLimit = 0.01

type sessionAgg struct {
	want, seen int
	start, end time.Time
	spans      [][2]time.Time
	outputToks int
}

type sessionState struct {
	turns, overflow       int
	ideal, idealPrompt    int64
	served, servedPrompt  int64
	servedN               int
	open                  map[uint64]*sessionAgg
	first, last           time.Time
	completed             int
	dur, model, tool, tps series
	turnsPer              series
	firstTTFT, laterTTFT  series
	on                    bool
}

func (t *sessionState) reset() { *t = sessionState{} }

// observe takes a finished session turn.
func (t *sessionState) observe(s *sample.Sample, ttft func(*sample.Sample) (time.Duration, bool)) {
	st := s.Session
	if st == nil {
		return
	}
	if !t.on {
		*t = sessionState{on: true, open: map[uint64]*sessionAgg{}, dur: newSeries(), model: newSeries(), tool: newSeries(),
			tps: newSeries(), turnsPer: newSeries(), firstTTFT: newSeries(), laterTTFT: newSeries()}
	}
	t.turns++
	t.ideal += int64(st.IdealCached)
	t.idealPrompt += int64(st.PromptTokens)
	if Overflowed(s) {
		t.overflow++
	}
	if cached, prompt, ok := servedCache(s); ok {
		t.served += int64(cached)
		t.servedPrompt += int64(prompt)
		t.servedN++
	}
	end := s.Start.Add(max(s.End, 0))
	if t.first.IsZero() || s.Start.Before(t.first) {
		t.first = s.Start
	}
	t.last = later(t.last, end)
	if d, ok := ttft(s); ok && s.Counted() {
		if st.Depth == 0 && st.Turn == 1 {
			t.firstTTFT.recordDur(d)
		} else {
			t.laterTTFT.recordDur(d)
		}
	}
	t.addToSession(s, end)
}

func (t *sessionState) addToSession(s *sample.Sample, end time.Time) {
	st := s.Session
	root := st.Root
	if root == 0 {
		root = st.ID
	}
	a := t.open[root]
	if a == nil {
		a = &sessionAgg{want: st.SessionTurns, start: s.Start}
		t.open[root] = a
	}
	a.seen++
	if s.Start.Before(a.start) {
		a.start = s.Start
	}
	a.end = later(a.end, end)
	a.spans = append(a.spans, [2]time.Time{s.Start, end})
	if s.Counted() {
		a.outputToks += s.Tokens
	}
	if a.want > 0 && a.seen >= a.want {
		delete(t.open, root)
		t.complete(a)
	}
}

// complete adds a finished session's figures.
func (t *sessionState) complete(a *sessionAgg) {
	t.completed++
	dur := a.end.Sub(a.start)
	model := unionLength(a.spans)
	t.dur.recordDur(dur)
	t.model.recordDur(model)
	t.tool.recordDur(max(dur-model, 0))
	t.turnsPer.record(float64(a.seen))
	if model > 0 {
		t.tps.record(float64(a.outputToks) / model.Seconds())
	}
}

// unionLength is the time covered by at least one of spans.
func unionLength(spans [][2]time.Time) time.Duration {
	sorted := append([][2]time.Time(nil), spans...)
	for i := 1; i < len(sorted); i++ { // insertion sort: a session has tens of turns
		for j := i; j > 0 && sorted[j][0].Before(sorted[j-1][0]); j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	var total time.Duration
	var curStart, curEnd time.Time
	for i, sp := range sorted {
		if i == 0 || sp[0].After(curEnd) {
			total += curEnd.Sub(curStart)
			curStart, curEnd = sp[0], sp[1]
			continue
		}
		curEnd = later(curEnd, sp[1])
	}
	if len(sorted) > 0 {
		total += curEnd.Sub(curStart)
	}
	return total
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// servedCache is what the server says its prefix cache served: usage cached_tokens, else
// llama.cpp's timings (cache_n over cache_n + prompt_n).
func servedCache(s *sample.Sample) (cached, prompt int, ok bool) {
	if s.CachedTokens >= 0 && s.PromptTokens > 0 {
		return s.CachedTokens, s.PromptTokens, true
	}
	if sv := s.Server; sv != nil && sv.CachedTokens >= 0 && sv.PromptTokens >= 0 {
		c, p := int(sv.CachedTokens), int(sv.PromptTokens)
		if c+p > 0 {
			return c, c + p, true
		}
	}
	return 0, 0, false
}

// Overflowed says a session turn overflowed the model's context: refused for its length (a
// 4xx whose message names the context or the length: vLLM "maximum context length",
// llama.cpp "exceeds the available context size", OpenAI "context_length_exceeded"), or cut
// by it (it ended for length before the output it asked for: a session turn asks
// min_tokens = max_tokens = the recorded output, so only a full context stops it sooner; the
// count must be the server's, not an estimate).
func Overflowed(s *sample.Sample) bool {
	if strings.HasPrefix(s.ErrorKind, "http_4") {
		m := strings.ToLower(s.ErrorMessage)
		for _, w := range []string{"context", "too long", "too many tokens", "maximum length", "exceeds"} {
			if strings.Contains(m, w) {
				return true
			}
		}
		return false
	}
	return s.Outcome == sample.OutcomeOK && s.Source == sample.SourceUsage && s.OutputTarget > 0 &&
		s.Tokens < s.OutputTarget && (s.FinishReason == "length" || s.FinishReason == "max_tokens")
}

// fill sets st.Sessions.
func (t *sessionState) fill(st *EndpointStats) {
	if !t.on {
		return
	}
	out := &SessionStats{Turns: t.turns, Overflow: t.overflow, Completed: t.completed,
		Duration: t.dur.dist(), Model: t.model.dist(), Tool: t.tool.dist(), TurnsPer: t.turnsPer.dist().whole(),
		OutputTPS: t.tps.dist(), FirstTTFT: t.firstTTFT.dist(), LaterTTFT: t.laterTTFT.dist()}
	out.Invalid = float64(t.overflow) > OverflowLimit*float64(t.turns)
	if t.idealPrompt > 0 {
		r := float64(t.ideal) / float64(t.idealPrompt)
		out.IdealHitRate = &r
	}
	if t.servedN > 0 && t.servedPrompt > 0 {
		r := float64(t.served) / float64(t.servedPrompt)
		out.ServedHitRate = &r
		if out.IdealHitRate != nil && *out.IdealHitRate > 0 {
			e := r / *out.IdealHitRate
			out.Efficiency = &e
		}
	}
	if span := t.last.Sub(t.first); span > 0 {
		r := float64(t.completed) / span.Minutes()
		out.PerMinute = &r
	}
	st.Sessions = out
}
