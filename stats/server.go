package stats

import (
	"time"

	"tokscope/servermetrics"
)

// serverHistoryLen bounds the server time series: ten minutes at one scrape a second.
const serverHistoryLen = 600

// ServerPoint is one scrape of an endpoint's server, for time-series charts.
type ServerPoint struct {
	At                 time.Time
	Running, Waiting   servermetrics.Value
	KVCacheUsage       servermetrics.Value // 0–1
	PrefixCacheHitRate servermetrics.Value // 0–1
	GenTPS             servermetrics.Value
}

// ServerStats are an endpoint's server-side figures (servermetrics); nil in EndpointStats
// until the scraper has reported on the endpoint.
type ServerStats struct {
	// State and Note of the latest scrape: StateOK, or why there is no reading now.
	State servermetrics.State
	Note  string
	// Latest is the latest recognised reading; Scrapes counts them (0: nothing recognised
	// yet, and every other field is empty).
	Latest  servermetrics.Reading
	Scrapes int
	Kind    servermetrics.Kind

	// Distributions over recognised scrapes.
	Running, Waiting, KVCacheUsage Dist
	// Run-level: prefix-cache hits ÷ queries over the run where the server counts them, else
	// the mean of its hit-rate gauge; generation tokens ÷ the time they were counted over.
	PrefixCacheHitRate servermetrics.Value
	GenTPS             servermetrics.Value
	GenLive            bool // the latest reading's GenTPS rises while tokens stream

	History []ServerPoint // bounded, oldest first
}

type serverState struct {
	seen    bool
	state   servermetrics.State
	note    string
	latest  servermetrics.Reading
	scrapes int

	running, waiting, kv series
	genTokens            float64
	genSpan              time.Duration
	hits, queries        float64
	fromCounters         bool
	hitGaugeSum          float64
	hitGaugeN            int
	history              ring[ServerPoint]
}

func newServerState() serverState {
	return serverState{running: newSeries(), waiting: newSeries(), kv: newSeries(), history: newRing[ServerPoint](serverHistoryLen)}
}

func (s *serverState) reset() {
	*s = serverState{
		seen: s.seen, state: s.state, note: s.note, // the server's state is not a statistic
		running: s.running, waiting: s.waiting, kv: s.kv, history: s.history,
	}
	s.running.reset()
	s.waiting.reset()
	s.kv.reset()
	s.history.reset()
}

// ObserveServer feeds one scraper Update into the statistics; it reports whether they changed.
func (a *Aggregator) ObserveServer(u servermetrics.Update) bool {
	if u.Endpoint < 0 || u.Endpoint >= len(a.eps) {
		return false
	}
	if u.Source == servermetrics.SourceGPU {
		return a.observeGPU(u)
	}
	s := &a.eps[u.Endpoint].server
	s.seen, s.state, s.note = true, u.State, u.Note
	if u.State != servermetrics.StateOK {
		return true
	}
	r := u.Reading
	s.latest = r
	s.scrapes++
	for _, x := range []struct {
		v servermetrics.Value
		s *series
	}{{r.Running, &s.running}, {r.Waiting, &s.waiting}, {r.KVCacheUsage, &s.kv}} {
		if x.v.OK {
			x.s.record(x.v.V)
		}
	}
	if r.GenTokens.OK && r.GenSpan > 0 {
		s.genTokens += r.GenTokens.V
		s.genSpan += r.GenSpan
	}
	if r.PrefixFromCounters {
		s.fromCounters = true
		s.hits += r.PrefixHits
		s.queries += r.PrefixQueries
	} else if r.PrefixCacheHitRate.OK {
		s.hitGaugeSum += r.PrefixCacheHitRate.V
		s.hitGaugeN++
	}
	s.history.push(ServerPoint{
		At: r.At, Running: r.Running, Waiting: r.Waiting, KVCacheUsage: r.KVCacheUsage,
		PrefixCacheHitRate: r.PrefixCacheHitRate, GenTPS: r.GenTPS,
	})
	return true
}

func (s *serverState) stats() *ServerStats {
	if !s.seen {
		return nil
	}
	st := &ServerStats{State: s.state, Note: s.note, Latest: s.latest, Scrapes: s.scrapes}
	if s.scrapes == 0 {
		return st
	}
	st.Kind = s.latest.Kind
	st.Running, st.Waiting, st.KVCacheUsage = s.running.dist(), s.waiting.dist(), s.kv.dist()
	switch {
	case s.fromCounters && s.queries > 0:
		st.PrefixCacheHitRate = servermetrics.Value{V: min(s.hits/s.queries, 1), OK: true}
	case !s.fromCounters && s.hitGaugeN > 0:
		st.PrefixCacheHitRate = servermetrics.Value{V: s.hitGaugeSum / float64(s.hitGaugeN), OK: true}
	}
	if s.genSpan > 0 {
		st.GenTPS = servermetrics.Value{V: s.genTokens / s.genSpan.Seconds(), OK: true}
	}
	st.GenLive = s.latest.GenLive
	st.History = s.history.slice()
	return st
}
