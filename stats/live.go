package stats

import (
	"slices"
	"time"

	"tokscope/sample"
)

// Live figures: tokens count at the instant their chunk arrives, not when their request ends
// (docs/metrics.md, "Live figures"). A request in flight reports Progress (probe/progress.go); its
// tokens enter the endpoint's token timeline as they come, its TTFT enters the per-second
// TTFT series as soon as its first token arrives, and its decode rate so far and progress show
// in EndpointStats.InFlight. When the request ends, what it added live is taken back and its
// Sample is added as before: the figures of finished requests are exactly those of a replay
// of the record, whatever the live estimate was, and a request that fails leaves nothing in
// the speed figures (docs/metrics.md: errors never count in speed statistics).

// Bounds of the live state.
const (
	// SecondsKept is how many seconds of per-second series a Snapshot carries (Seconds).
	SecondsKept = 120
	// timelineBuckets: the token timeline covers SecondsKept in aggBucket steps.
	timelineBuckets = SecondsKept * int(time.Second/aggBucket)
	// maxLive bounds the requests followed in flight per endpoint: one whose Done never comes
	// (cut by the end of a run) must not stay for ever.
	maxLive = 4096
)

// Second is one second of an endpoint's activity, for time-series charts.
type Second struct {
	At time.Time // the second's start
	// Span is how much of the second is over: a second, except for the snapshot's own
	// second, which is not (its tok/s is Tokens / Span).
	Span time.Duration
	// Active: a counted request was in flight during some of the second. A second that is not
	// active has no data (a gap in a chart), which is not the same as 0 tok/s.
	Active bool
	// Tokens is the tokens that arrived during the second, the aggregate tok/s over it.
	Tokens float64
	// TTFT is the mean TTFT (ms) of the requests whose TTFT instant (first token, or the
	// --ttft-from instant) fell in the second, TTFTs how many; 0 means no data.
	TTFT  float64
	TTFTs int
}

// InFlight is what is known of an endpoint's counted requests in flight that have received
// a first token (from their Progress).
type InFlight struct {
	Requests int
	// Tokens so far: the least and the most advanced request; MaxTokens their max_tokens
	// (the largest, 0 when a request has no limit).
	TokensMin, TokensMax float64
	MaxTokens            int
	// DecodeTPS is the median of their decode rates so far (docs/metrics.md's formula on what has
	// arrived); DecodeOK says whether any has one yet.
	DecodeTPS float64
	DecodeOK  bool
	// Estimated: some count so far is an estimate (no per-chunk usage from the server).
	Estimated bool
}

// Latest is the newest TTFT of an endpoint, in flight or finished, and the newest decode rate:
// in flight (the median so far) when requests are streaming, else the last finished one.
type Latest struct {
	TTFT   float64 // ms
	TTFTAt time.Time
	TTFTOK bool

	DecodeTPS  float64
	DecodeOK   bool
	DecodeLive bool // DecodeTPS is of requests in flight
}

// liveReq is one counted request in flight, as its Progress told.
type liveReq struct {
	start   time.Time
	seen    time.Time // last Progress
	tokens  float64   // counted in the timeline so far
	adds    []tokenAdd
	ttft    float64 // ms, in the TTFT series at ttftSec when ttftIn
	ttftSec int64
	ttftIn  bool
	decode  float64
	decOK   bool
	est     bool
	chunks  int
	max     int
}

// tokenAdd is what a live request added to one timeline bucket.
type tokenAdd struct {
	key    int64
	tokens float64
}

// secSlot is one second of the per-second ring.
type secSlot struct {
	sec     int64
	used    bool
	active  bool
	ttftSum float64
	ttftN   int
}

// live is an endpoint's live state.
type live struct {
	timeline [timelineBuckets]tokBucket
	seconds  [SecondsKept]secSlot
	reqs     map[uint64]*liveReq
	// firstToken is the earliest first-token instant of a counted request: aggregate tok/s of
	// a run younger than AggregateWindow is per second since then.
	firstToken time.Time
	// lastTTFT is the newest TTFT of a finished counted request (by its TTFT instant).
	lastTTFT   float64
	lastTTFTAt time.Time
	lastDecode float64
	lastDecOK  bool
}

func newLive() live { return live{reqs: map[uint64]*liveReq{}} }

func (l *live) reset() {
	clear(l.timeline[:])
	clear(l.seconds[:])
	// Requests in flight go on: keep what they already counted out of the new figures.
	for _, r := range l.reqs {
		r.adds, r.ttftIn = nil, false
	}
	l.firstToken, l.lastTTFT, l.lastTTFTAt = time.Time{}, 0, time.Time{}
	l.lastDecode, l.lastDecOK = 0, false
}

// addTokens puts tokens into the timeline bucket of t; false when t is older than the
// timeline.
func (l *live) addTokens(t time.Time, tokens float64) (key int64, ok bool) {
	k := aggKey(t)
	b := &l.timeline[int(mod(k, int64(timelineBuckets)))]
	switch {
	case b.key == k:
		b.tokens += tokens
	case b.key < k:
		b.key, b.tokens = k, tokens
	default:
		return k, false // the bucket holds a later time: t is older than the timeline
	}
	return k, true
}

// takeTokens removes tokens from bucket key, if the bucket still holds that time.
func (l *live) takeTokens(key int64, tokens float64) {
	if b := &l.timeline[int(mod(key, int64(timelineBuckets)))]; b.key == key {
		b.tokens -= tokens
	}
}

// second returns the slot of Unix second sec, claiming it if it holds an older second; nil
// when it holds a newer one (sec is older than the ring).
func (l *live) second(sec int64) *secSlot {
	sl := &l.seconds[int(mod(sec, SecondsKept))]
	switch {
	case sl.used && sl.sec == sec:
	case !sl.used || sl.sec < sec:
		*sl = secSlot{sec: sec, used: true}
	default:
		return nil
	}
	return sl
}

// markActive marks the seconds from start to end as having a request in flight.
func (l *live) markActive(start, end time.Time) {
	lo, hi := start.Unix(), end.Unix()
	lo = max(lo, hi-SecondsKept+1)
	for s := lo; s <= hi; s++ {
		if sl := l.second(s); sl != nil {
			sl.active = true
		}
	}
}

// addTTFT puts a finished (or cut) request's TTFT into the per-second series at its instant,
// and makes it the newest TTFT if it is.
func (l *live) addTTFT(f *figures) {
	if !f.HasTTFT {
		return
	}
	d := f.TTFT
	at := f.s.Start.Add(d)
	l.addTTFTAt(at, ms(d))
	if !at.Before(l.lastTTFTAt) {
		l.lastTTFT, l.lastTTFTAt = ms(d), at
	}
}

func (l *live) addTTFTAt(at time.Time, v float64) (sec int64, ok bool) {
	sec = at.Unix()
	sl := l.second(sec)
	if sl == nil {
		return sec, false
	}
	sl.ttftSum += v
	sl.ttftN++
	return sec, true
}

func (l *live) takeTTFT(sec int64, v float64) {
	if sl := &l.seconds[int(mod(sec, SecondsKept))]; sl.used && sl.sec == sec && sl.ttftN > 0 {
		sl.ttftSum -= v
		sl.ttftN--
	}
}

func (l *live) sawFirstToken(t time.Time) {
	if l.firstToken.IsZero() || t.Before(l.firstToken) {
		l.firstToken = t
	}
}

// observeProgress counts what a counted request in flight received since its last Progress.
func (a *Aggregator) observeProgress(e *endpoint, p *sample.Progress) {
	l := &e.live
	r := l.reqs[p.Seq]
	if r == nil {
		if len(l.reqs) >= maxLive {
			l.forgetOldest()
		}
		r = &liveReq{start: p.Start}
		l.reqs[p.Seq] = r
	}
	r.seen = p.Start.Add(p.At)
	if d := p.Tokens - r.tokens; d > 0 {
		if k, ok := l.addTokens(r.seen, d); ok {
			if n := len(r.adds); n > 0 && r.adds[n-1].key == k {
				r.adds[n-1].tokens += d
			} else {
				r.adds = append(r.adds, tokenAdd{k, d})
			}
		}
		r.tokens = p.Tokens
	}
	if ft, ok := p.TTFT(sample.TTFTFirstToken); ok {
		l.sawFirstToken(p.Start.Add(ft))
	}
	if d, ok := p.TTFT(a.ttftFrom); ok && !r.ttftIn && r.ttft == 0 {
		r.ttft = ms(d)
		r.ttftSec, r.ttftIn = l.addTTFTAt(p.Start.Add(d), r.ttft)
		if !r.ttftIn {
			r.ttft = -1 // too old for the series: never again
		}
	}
	r.decode, r.decOK = p.DecodeRate()
	r.est, r.chunks, r.max = p.Estimated, p.Chunks, p.MaxTokens
}

// forgetOldest drops the request whose last Progress is the oldest (its Done never came).
func (l *live) forgetOldest() {
	var oldest uint64
	var at time.Time
	for seq, r := range l.reqs {
		if at.IsZero() || r.seen.Before(at) {
			oldest, at = seq, r.seen
		}
	}
	delete(l.reqs, oldest)
}

// finish takes back what request seq added live, before its Sample is accounted.
func (l *live) finish(seq uint64) {
	r := l.reqs[seq]
	if r == nil {
		return
	}
	delete(l.reqs, seq)
	for _, add := range r.adds {
		l.takeTokens(add.key, add.tokens)
	}
	if r.ttftIn {
		l.takeTTFT(r.ttftSec, r.ttft)
	}
}

// addSample accounts a finished counted request in the live state: its tokens at their
// chunks' arrival (TokenArrivals), its TTFT at its instant, and its seconds as active.
func (l *live) addSample(f *figures) {
	s := f.s
	if s.Tokens > 0 {
		TokenArrivals(s, func(at time.Time, tokens float64) { l.addTokens(at, tokens) })
	}
	if ft, ok := s.TTFT(); ok {
		l.sawFirstToken(s.Start.Add(ft))
	}
	l.addTTFT(f)
	if f.HasDecode {
		l.lastDecode, l.lastDecOK = f.Decode, true
	}
}

// aggregateTPS is the tokens that arrived in the AggregateWindow ending at now, per second of
// that window — or per second since the first token of the run, when that is more recent.
func (l *live) aggregateTPS(now time.Time) float64 {
	if l.firstToken.IsZero() {
		return 0
	}
	hi := aggKey(now)
	var sum float64
	for k := hi - int64(aggBuckets) + 1; k <= hi; k++ {
		if b := &l.timeline[int(mod(k, int64(timelineBuckets)))]; b.key == k {
			sum += b.tokens
		}
	}
	span := min(AggregateWindow, now.Sub(l.firstToken))
	if span <= 0 || sum <= 1e-9 {
		return 0
	}
	return sum / span.Seconds()
}

// fill sets the live figures of st as of now.
func (l *live) fill(st *EndpointStats, now time.Time) {
	st.AggregateTPS = l.aggregateTPS(now)
	st.Latest = Latest{TTFT: l.lastTTFT, TTFTAt: l.lastTTFTAt, TTFTOK: !l.lastTTFTAt.IsZero(),
		DecodeTPS: l.lastDecode, DecodeOK: l.lastDecOK}

	var decodes []float64
	in := &st.InFlight
	for _, r := range l.reqs {
		l.markActive(r.start, now)
		if r.ttftIn && !r.start.IsZero() {
			at := r.start.Add(time.Duration(r.ttft * float64(time.Millisecond)))
			if !at.Before(st.Latest.TTFTAt) {
				st.Latest.TTFT, st.Latest.TTFTAt, st.Latest.TTFTOK = r.ttft, at, true
			}
		}
		if in.Requests == 0 || r.tokens < in.TokensMin {
			in.TokensMin = r.tokens
		}
		in.TokensMax = max(in.TokensMax, r.tokens)
		if r.max == 0 || in.Requests == 0 {
			in.MaxTokens = r.max
		} else if in.MaxTokens > 0 {
			in.MaxTokens = max(in.MaxTokens, r.max)
		}
		in.Estimated = in.Estimated || r.est
		in.Requests++
		if r.decOK {
			decodes = append(decodes, r.decode)
		}
	}
	if len(decodes) > 0 {
		slices.Sort(decodes)
		n := len(decodes)
		in.DecodeTPS, in.DecodeOK = (decodes[(n-1)/2]+decodes[n/2])/2, true
		st.Latest.DecodeTPS, st.Latest.DecodeOK, st.Latest.DecodeLive = in.DecodeTPS, true, true
	}
	st.Seconds = l.secondsUpTo(now)
}

// secondsUpTo is the SecondsKept seconds ending with now's own, oldest first; now's second,
// not over yet, has the Span so far.
func (l *live) secondsUpTo(now time.Time) []Second {
	out := make([]Second, SecondsKept)
	last := now.Unix()
	first := last - SecondsKept + 1
	for i := range out {
		sec := first + int64(i)
		out[i].At, out[i].Span = time.Unix(sec, 0), time.Second
		if sl := &l.seconds[int(mod(sec, SecondsKept))]; sl.used && sl.sec == sec {
			out[i].Active = sl.active
			if sl.ttftN > 0 {
				out[i].TTFT, out[i].TTFTs = sl.ttftSum/float64(sl.ttftN), sl.ttftN
			}
		}
	}
	out[len(out)-1].Span = now.Sub(out[len(out)-1].At)
	per := int64(time.Second / aggBucket)
	lo, hi := first*per, aggKey(now) // bucket keys [lo, hi]
	for i := range l.timeline {
		b := &l.timeline[i]
		if b.key >= lo && b.key <= hi && b.tokens > 1e-9 {
			out[(b.key-lo)/per].Tokens += b.tokens
		}
	}
	return out
}
