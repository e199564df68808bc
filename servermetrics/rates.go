package servermetrics

import "time"

type point struct {
	at time.Time
	v  float64
}

// counterWindow turns successive values of a cumulative counter into increments and a rate
// over RateWindow. It keeps the points of the last RateWindow plus the one just before, so
// that the window is spanned: about a dozen points at one scrape a second.
type counterWindow struct {
	pts []point // oldest first
}

// add records the counter's value v at at. It returns the increment since the last point
// kept and the time it took; ok is false on the first value and after a reset. A value lower
// than the last is either a restart of the server (below half: the window starts again) or a
// momentary dip (two reads that were not taken at the same instant, such as llama.cpp's
// counters and /slots): the value is skipped, and the next one's increment covers both.
func (w *counterWindow) add(at time.Time, v float64) (delta float64, span time.Duration, ok bool) {
	if n := len(w.pts); n > 0 {
		last := w.pts[n-1]
		switch {
		case v >= last.v:
			delta, span, ok = v-last.v, at.Sub(last.at), true
		case v >= last.v/2:
			return 0, 0, false
		default:
			w.pts = w.pts[:0]
		}
	}
	w.pts = append(w.pts, point{at, v})
	for len(w.pts) > 2 && at.Sub(w.pts[1].at) >= RateWindow {
		w.pts = append(w.pts[:0], w.pts[1:]...)
	}
	return delta, span, ok
}

// increase is the counter's rise over the points kept, and the time it spans.
func (w *counterWindow) increase() (float64, time.Duration) {
	if len(w.pts) < 2 {
		return 0, 0
	}
	first, last := w.pts[0], w.pts[len(w.pts)-1]
	return last.v - first.v, last.at.Sub(first.at)
}

// rate is the counter's increase per second over the points kept.
func (w *counterWindow) rate() Value {
	inc, span := w.increase()
	if span <= 0 {
		return Value{}
	}
	return some(inc / span.Seconds())
}

// tracker turns one endpoint's successive instants into Readings.
type tracker struct {
	kind               Kind
	gen, hits, queries counterWindow
	lastAt             time.Time // previous recognised scrape
}

func (t *tracker) reading(at time.Time, in instant) Reading {
	if t.kind != in.kind {
		*t = tracker{kind: in.kind} // another server answers there now: nothing carries over
	}
	r := Reading{Kind: in.kind, At: at, Running: in.running, Waiting: in.waiting, KVCacheUsage: in.kv}

	// Generation: a live counter, else the server's throughput gauge, else a counter that
	// rises when requests end.
	switch {
	case in.gen.OK && (in.genLive || !in.genGauge.OK):
		if d, span, ok := t.gen.add(at, in.gen.V); ok {
			r.GenTokens, r.GenSpan = some(d), span
		}
		r.GenTPS, r.GenLive = t.gen.rate(), in.genLive
	case in.genGauge.OK:
		r.GenTPS, r.GenLive = some(max(in.genGauge.V, 0)), true
		if !t.lastAt.IsZero() {
			span := at.Sub(t.lastAt)
			r.GenTokens, r.GenSpan = some(r.GenTPS.V*span.Seconds()), span
		}
	}

	// Prefix cache: hit and query counters over the window, else a hit-rate gauge.
	if in.hits.OK && in.queries.OK {
		r.PrefixFromCounters = true
		dh, _, okh := t.hits.add(at, in.hits.V)
		dq, _, okq := t.queries.add(at, in.queries.V)
		if okh && okq {
			r.PrefixHits, r.PrefixQueries = dh, dq
		}
		hits, _ := t.hits.increase()
		if queries, _ := t.queries.increase(); queries > 0 {
			r.PrefixCacheHitRate = ratio(some(hits / queries))
		}
	} else {
		r.PrefixCacheHitRate = in.hitGauge
	}
	t.lastAt = at
	return r
}
