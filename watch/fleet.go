// Package watch owns tokscope's watch mode: a fleet of inference servers monitored from
// what they already export — Prometheus /metrics, llama.cpp /slots, Ollama /api/ps, a
// dcgm-exporter — without sending them any inference request. Scraper reads the targets
// (bounded, concurrent, staggered); Fleet, fed every Instant by one goroutine, turns counters
// into rates and histograms into percentiles over its window, and says which servers
// restarted, went stale or are loading a model; Rows is the fleet table.
//
// It imports config, probe (the canary: the one request watch sends, when the user asks) and
// the Prometheus and YAML libraries; never stats, ui, bubbletea or lipgloss.
package watch

import (
	"sort"
	"time"
)

// DefaultWindow is the span over which counters become rates and histograms percentiles.
const DefaultWindow = 10 * time.Second

// chartPoints is how many scrapes of history a row keeps for its drill-down charts.
const chartPoints = 600

// Badges.
const (
	BadgeRestarted = "RESTARTED" // a counter went back: the server restarted
	BadgeStale     = "STALE"     // its last scrape failed
	BadgeLoading   = "LOADING"   // Ollama is loading a model (or serving its first request)
)

// Fleet is the watched servers' state. It is not safe for concurrent use: one goroutine
// (the UI's Update, the headless loop) feeds it every Instant and reads its Rows.
type Fleet struct {
	window  time.Duration
	targets []Target
	servers map[string]*server
}

// server is one target's history.
type server struct {
	target      Target
	last        Instant   // the latest scrape, good or not
	good        []Instant // the good scrapes since the last restart, within the window
	first       *Instant  // the first good scrape since the last restart (for --duration)
	restartedAt time.Time // zero: never seen to restart
	failures    int       // scrapes failed in a row
	lastGoodAt  time.Time
	prevOllama  map[string]time.Time // each loaded model's expiry at the previous scrape
	loading     map[string]bool
	history     map[string][]Point // per model: the charts' points
}

// NewFleet makes an empty fleet with the given window (DefaultWindow when ≤ 0).
func NewFleet(window time.Duration) *Fleet {
	if window <= 0 {
		window = DefaultWindow
	}
	return &Fleet{window: window, servers: map[string]*server{}}
}

// Window is the span of the fleet's rates and percentiles.
func (f *Fleet) Window() time.Duration { return f.window }

// SetTargets sets the servers the fleet shows, in this order; a server no longer in the list
// is forgotten, one still in it keeps its history.
func (f *Fleet) SetTargets(ts []Target) {
	f.targets = append([]Target(nil), ts...)
	keep := map[string]*server{}
	for _, t := range ts {
		s := f.servers[t.Key()]
		if s == nil {
			s = &server{history: map[string][]Point{}}
		}
		s.target = t
		keep[t.Key()] = s
	}
	f.servers = keep
}

// Targets is the fleet's servers, in order.
func (f *Fleet) Targets() []Target { return append([]Target(nil), f.targets...) }

// Observe takes one scrape. A scrape of a target the fleet does not hold is ignored.
func (f *Fleet) Observe(in Instant) {
	s := f.servers[in.Target]
	if s == nil {
		return
	}
	s.last = in
	if in.Error != "" {
		s.failures++
		return
	}
	s.failures = 0
	s.lastGoodAt = in.At
	f.noteLoading(s, in)
	if len(s.good) > 0 && wentBack(s.good[len(s.good)-1], in) {
		s.restartedAt = in.At
		s.good, s.first = nil, nil
	}
	s.good = append(s.good, in)
	if s.first == nil {
		first := in
		s.first = &first
	}
	// Keep what the window needs: the newest scrape at least one window old, and later ones.
	cut := 0
	for i := range s.good {
		if in.At.Sub(s.good[i].At) >= f.window {
			cut = i
		}
	}
	s.good = s.good[cut:]
	for _, r := range f.rowsOf(s, in.At, false) {
		h := append(s.history[r.Model], pointOf(r))
		if len(h) > chartPoints {
			h = h[len(h)-chartPoints:]
		}
		s.history[r.Model] = h
	}
}

// wentBack reports whether any counter or histogram count of a model fell between two
// scrapes: the server restarted (or its process was replaced) and its counters began again.
func wentBack(prev, cur Instant) bool {
	for _, pm := range prev.Models {
		cm, ok := modelIn(cur, pm.Model)
		if !ok {
			continue
		}
		for k, v := range pm.Counters {
			if c, ok := cm.Counters[k]; ok && c < v {
				return true
			}
		}
		for k, h := range pm.Hists {
			if c, ok := cm.Hists[k]; ok && c.Count < h.Count {
				return true
			}
		}
	}
	return false
}

func modelIn(in Instant, name string) (ModelInstant, bool) {
	for _, m := range in.Models {
		if m.Model == name {
			return m, true
		}
	}
	return ModelInstant{}, false
}

// noteLoading marks the Ollama models whose expiry the scheduler has not set yet: Ollama then
// reports "now + keep-alive" at every scrape, so the expiry moves forward with the clock. It
// does so while a model loads and until its first request ends.
func (f *Fleet) noteLoading(s *server, in Instant) {
	if in.Kind != KindOllama {
		return
	}
	cur := map[string]time.Time{}
	s.loading = map[string]bool{}
	for _, m := range in.Ollama {
		cur[m.Name] = m.ExpiresAt
		prev, seen := s.prevOllama[m.Name]
		advance := m.ExpiresAt.Sub(prev)
		elapsed := in.At.Sub(s.last.At)
		if seen && advance > 0 && (elapsed <= 0 || advance > elapsed/2) {
			s.loading[m.Name] = true
		}
	}
	s.prevOllama = cur
}

// Rows is the fleet table at now: one row per server, or per model where a server serves
// several, in the targets' order.
func (f *Fleet) Rows(now time.Time) []Row {
	var rows []Row
	for _, t := range f.targets {
		rows = append(rows, f.rowsOf(f.servers[t.Key()], now, false)...)
	}
	return rows
}

// Summary is the fleet over everything observed since each server's first scrape (or its
// last restart): rates and percentiles over the whole span, for --duration.
func (f *Fleet) Summary(now time.Time) []Row {
	var rows []Row
	for _, t := range f.targets {
		rows = append(rows, f.rowsOf(f.servers[t.Key()], now, true)...)
	}
	return rows
}

// History is the chart points of one row (server key and model), oldest first.
func (f *Fleet) History(key, model string) []Point {
	s := f.servers[key]
	if s == nil {
		return nil
	}
	return s.history[model]
}

// Last is the latest scrape of a server (its slots, its Ollama models).
func (f *Fleet) Last(key string) (Instant, bool) {
	s := f.servers[key]
	if s == nil {
		return Instant{}, false
	}
	if len(s.good) > 0 {
		return s.good[len(s.good)-1], true
	}
	return s.last, s.last.Target != ""
}

// Ready reports whether every server has been scraped at least n times (well or not), so
// that a snapshot has rates where the servers allow them.
func (f *Fleet) Ready(scrapes map[string]int, n int) bool {
	for _, t := range f.targets {
		if scrapes[t.Key()] < n {
			return false
		}
	}
	return true
}

// SortRows orders rows by a column (see Columns), unknown figures last; stable.
func SortRows(rows []Row, key string, descending bool) {
	col, ok := columnByKey(key)
	if !ok {
		return
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, aok := col.sortValue(rows[i])
		b, bok := col.sortValue(rows[j])
		switch {
		case aok != bok:
			return aok
		case !aok:
			return false
		case descending:
			return a.greater(b)
		default:
			return b.greater(a)
		}
	})
}
