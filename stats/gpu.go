package stats

import (
	"time"

	"tokscope/config"
	"tokscope/servermetrics"
)

// GPU telemetry (--gpu-metrics): the exporter's power, utilisation and memory as distributions
// over its scrapes, and tokens per joule — the output tokens that arrived within the scrapes'
// window over the energy of the same window (docs/server-side.md "GPU telemetry").
//
// The window is the union of the spans between consecutive scrapes that have an energy (a
// counter reset leaves a hole). A token counts when its chunk arrived inside it, whichever
// way the events come: a request that ends after a scrape has its earlier tokens counted in the
// spans they arrived in, and a replay that feeds every request before the scrapes gets the
// same figure as the live run did.

// maxGPUPending bounds the token arrivals kept while they cannot be placed yet (after the last
// scrape, or before the first): beyond it the oldest half is dropped, and Tokens undercounts.
// At one scrape a second that is only reached when the exporter stops answering for long.
const maxGPUPending = 1 << 18

// maxGPUSegments bounds the window's separate pieces (one unless the counter was reset).
const maxGPUSegments = 64

// GPUStats are an endpoint's GPU figures; nil in EndpointStats without --gpu-metrics.
type GPUStats struct {
	// State and Note of the latest scrape: StateOK, or why there is no reading now (a quiet
	// note, never an error).
	State servermetrics.State
	Note  string
	// Latest is the latest reading; Scrapes counts them (0: nothing read yet, every figure
	// below empty).
	Latest  servermetrics.GPUReading
	Scrapes int

	PowerW, Util, MemoryUsedMiB Dist // over the scrapes: W (summed over the GPUs), % (mean), MiB (summed)

	// The energy window: its length, the energy used in it (J) and the output tokens that
	// arrived in it. FromCounter: the energy is the exporter's counter, else power integrated.
	Window      time.Duration
	EnergyJ     float64
	Tokens      float64
	FromCounter bool
	// TokensPerJoule is Tokens / EnergyJ; not OK before the window has any energy.
	TokensPerJoule servermetrics.Value

	History []GPUPoint // bounded, oldest first
}

// GPUPoint is one scrape of an endpoint's GPUs, for time-series charts.
type GPUPoint struct {
	At                   time.Time
	PowerW, Util, MemMiB servermetrics.Value
}

type tokenAt struct {
	at     time.Time
	tokens float64
}

type gpuSegment struct{ from, to time.Time }

type gpuState struct {
	tracking bool // the endpoint has a GPU exporter (its config, or its record) or reported one
	// afterReset: the next reading's energy spans time before a Reset, whose tokens are gone.
	afterReset bool
	seen       bool
	state      servermetrics.State
	note       string
	latest     servermetrics.GPUReading
	scrapes    int

	power, util, mem series
	segments         []gpuSegment // the energy window, oldest first
	lastAt           time.Time    // the latest reading's instant
	energyJ, tokens  float64
	window           time.Duration
	fromCounter      bool
	pending          []tokenAt // arrivals after lastAt (or before any reading)
	history          ring[GPUPoint]
}

func newGPUState(tracking bool) gpuState {
	return gpuState{tracking: tracking, power: newSeries(), util: newSeries(), mem: newSeries(),
		history: newRing[GPUPoint](serverHistoryLen)}
}

func (g *gpuState) reset() {
	*g = gpuState{
		tracking: g.tracking, seen: g.seen, state: g.state, note: g.note,
		power: g.power, util: g.util, mem: g.mem,
		pending: g.pending[:0], history: g.history, afterReset: true,
	}
	g.history.reset()
	g.power.reset()
	g.util.reset()
	g.mem.reset()
}

// observeGPU feeds one GPU Update of the scraper into the statistics.
func (a *Aggregator) observeGPU(u servermetrics.Update) bool {
	g := &a.eps[u.Endpoint].gpu
	g.tracking, g.seen, g.state, g.note = true, true, u.State, u.Note
	if u.State != servermetrics.StateOK {
		return true
	}
	r := u.GPU
	g.latest = r
	g.scrapes++
	for _, x := range []struct {
		v servermetrics.Value
		s *series
	}{{r.PowerW, &g.power}, {r.Util, &g.util}, {r.MemoryUsedMiB, &g.mem}} {
		if x.v.OK {
			x.s.record(x.v.V)
		}
	}
	g.history.push(GPUPoint{At: r.At, PowerW: r.PowerW, Util: r.Util, MemMiB: r.MemoryUsedMiB})
	if g.afterReset {
		g.afterReset = false
	} else if r.EnergyJ.OK && r.Span > 0 {
		g.addSpan(r.At.Add(-r.Span), r.At)
		g.energyJ += r.EnergyJ.V
		g.window += r.Span
		g.fromCounter = r.FromCounter
	}
	if r.At.After(g.lastAt) {
		g.lastAt = r.At
	}
	g.place()
	return true
}

// addSpan extends the window by (from, to]: the last segment when it ends where the span
// starts (within a millisecond: a record keeps spans in ms), else a segment of its own.
func (g *gpuState) addSpan(from, to time.Time) {
	if n := len(g.segments); n > 0 {
		last := &g.segments[n-1]
		if d := from.Sub(last.to); d > -time.Millisecond && d < time.Millisecond {
			last.to = to
			return
		}
	}
	if len(g.segments) == maxGPUSegments {
		g.segments = append(g.segments[:0], g.segments[1:]...)
	}
	g.segments = append(g.segments, gpuSegment{from, to})
}

// inWindow reports whether an arrival at t lies in the energy window.
func (g *gpuState) inWindow(t time.Time) bool {
	for i := len(g.segments) - 1; i >= 0; i-- {
		s := g.segments[i]
		if t.After(s.from) && !t.After(s.to) {
			return true
		}
	}
	return false
}

// place counts the pending arrivals the readings now cover, and keeps the later ones.
func (g *gpuState) place() {
	if g.lastAt.IsZero() {
		return
	}
	keep := g.pending[:0]
	for _, p := range g.pending {
		switch {
		case p.at.After(g.lastAt):
			keep = append(keep, p)
		case g.inWindow(p.at):
			g.tokens += p.tokens
		}
	}
	g.pending = keep
}

func (g *gpuState) configure(ep *config.Endpoint) { g.tracking = ep.GPUMetrics != "" }

// take counts a counted request's tokens at the instants they arrived.
func (g *gpuState) take(f *figures) {
	if !g.tracking || !f.counted {
		return
	}
	TokenArrivals(f.s, func(at time.Time, tokens float64) {
		switch {
		case g.lastAt.IsZero() || at.After(g.lastAt):
			if len(g.pending) >= maxGPUPending {
				g.pending = append(g.pending[:0], g.pending[len(g.pending)/2:]...)
			}
			g.pending = append(g.pending, tokenAt{at, tokens})
		case g.inWindow(at):
			g.tokens += tokens
		}
	})
}

func (g *gpuState) fill(st *EndpointStats, _ readout) { st.GPU = g.stats() }

func (g *gpuState) stats() *GPUStats {
	if !g.seen {
		return nil
	}
	st := &GPUStats{State: g.state, Note: g.note, Latest: g.latest, Scrapes: g.scrapes}
	if g.scrapes == 0 {
		return st
	}
	st.PowerW, st.Util, st.MemoryUsedMiB = g.power.dist(), g.util.dist(), g.mem.dist()
	st.Window, st.EnergyJ, st.Tokens, st.FromCounter = g.window, g.energyJ, g.tokens, g.fromCounter
	if g.energyJ > 0 {
		st.TokensPerJoule = servermetrics.Value{V: g.tokens / g.energyJ, OK: true}
	}
	st.History = g.history.slice()
	return st
}
