package stats

import (
	"time"

	"tokscope/config"
	"tokscope/metric"
	"tokscope/sample"
)

// The features beside the metric registry — rate limits, the token source, the workload, cost,
// the SLO, the server's clock, turns and cache hits, GPU energy, agent sessions — each keep an
// endpoint's figures in one accumulator. AddAt derives a Sample's figures once (figures) and
// hands them to every accumulator of its endpoint in one pass; each takes what it counts (its
// filter is its own: rate limits take every response, the server's clock warm-ups too, the
// GPU's energy counted requests only). A Snapshot asks each to fill its part of
// EndpointStats. Adding a feature is one type with these four methods, its field in endpoint
// and one entry of endpoint.accumulators.

// accumulator is one feature's figures of one endpoint.
type accumulator interface {
	// configure takes the endpoint's configuration (New); an endpoint added by a replay has
	// none.
	configure(ep *config.Endpoint)
	// take accounts for one Sample of the endpoint through its derived figures.
	take(f *figures)
	// fill sets the feature's fields of st.
	fill(st *EndpointStats, r readout)
	// reset forgets what take accounted for, keeping the configuration.
	reset()
}

// figures are a Sample and what several accumulators need of it, derived once per Sample.
type figures struct {
	s              *sample.Sample
	ctx            metric.Context // reads s's metrics with its derived figures (metric.Context.Derive)
	metric.Figures                // TTFT under the run's --ttft-from, the model load

	background bool      // not an interactive stream/race request: the probe's own prompt
	finished   bool      // a background request of the run: not a warm-up, not cut by its end
	counted    bool      // finished and counted (sample.Sample.Counted): in the distributions
	done       time.Time // the instant it finished (doneAt)
}

// derive fills f for s under ctx: its stage and its figures.
func (f *figures) derive(s *sample.Sample, ctx metric.Context) {
	f.s = s
	f.ctx = ctx.Derive(s, &f.Figures)
	f.background = s.Stream == 0
	f.finished = f.background && !s.Warmup && !s.Cut
	f.counted = f.finished && s.Counted()
	f.done = doneAt(s)
}

// ttft is the Sample's TTFT under --ttft-from, model loads included.
func (f *figures) ttft(*sample.Sample) (time.Duration, bool) { return f.TTFT, f.HasTTFT }

// readout is what a fill needs beyond its own state: the snapshot's instant and the figures of
// the endpoint other features' figures are per.
type readout struct {
	now        time.Time
	span       time.Duration // the run's span so far (workloadState.span)
	ok         int           // counted requests
	outputToks int64         // their output tokens
	sloTarget  float64       // --slo-target; 0 is DefaultBreachTarget
}

// accumulators are the endpoint's features, in the order a Snapshot fills them.
func (e *endpoint) accumulators() []accumulator {
	return []accumulator{&e.rl, &e.source, &e.work, &e.cost, &e.slo, &e.srvTiming, &e.turns, &e.gpu, &e.sessions}
}

// tokenSource is where the counted requests' token counts came from, and whether that varied.
type tokenSource struct {
	source      string // of the first counted request
	mixed, seen bool
}

func (t *tokenSource) configure(*config.Endpoint) {}
func (t *tokenSource) reset()                     { *t = tokenSource{} }

func (t *tokenSource) take(f *figures) {
	if !f.counted {
		return
	}
	src := string(f.s.Source)
	if src == "" {
		src = "unknown"
	}
	switch {
	case !t.seen:
		t.source, t.seen = src, true
	case src != t.source:
		t.mixed = true
	}
}

func (t *tokenSource) fill(st *EndpointStats, _ readout) {
	switch {
	case !t.seen:
	case t.mixed:
		st.TokenSource = "mixed"
	default:
		st.TokenSource = t.source
	}
}

// sessionTurns is the agent sessions' accumulator (sessions.go): every finished session turn.
type sessionTurns struct{ sessionState }

func (t *sessionTurns) configure(*config.Endpoint) {}

func (t *sessionTurns) take(f *figures) {
	if f.finished {
		t.observe(f.s, f.ttft)
	}
}

func (t *sessionTurns) fill(st *EndpointStats, _ readout) { t.sessionState.fill(st) }
