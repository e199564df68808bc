package record

import (
	"fmt"
	"os"
	"time"

	"tokscope/servermetrics"
)

// serverType is the "type" of a server line.
const serverType = "server"

// serverStream is the "stream" of every server line: a reader from before server lines took
// the line for a Record and skipped it as an interactive request's, so an older tokscope
// replays a newer record as it did before (without the server's figures), never counting a
// scrape as a request.
const serverStream = 1<<63 - 1

// scrape is how every line of a scrape begins, a server's (ServerLine) or its GPUs' (GPULine):
// its "type", the endpoint, serverStream, when the scrape's response arrived (its reading's
// At), whether it worked and the note of a failure.
type scrape struct {
	Type     string    `json:"type"`
	Endpoint string    `json:"endpoint"`
	Model    string    `json:"model"`
	Stream   uint64    `json:"stream"`
	At       time.Time `json:"at"`
	State    string    `json:"state"`
	Note     string    `json:"note,omitempty"`
}

// scrapeOf is the beginning of the line of type typ for the scrape u, taken at at, of the
// endpoint named name.
func scrapeOf(typ, name, model string, at time.Time, u servermetrics.Update) scrape {
	return scrape{Type: typ, Endpoint: name, Model: model, Stream: serverStream,
		At: at, State: stateNames[u.State], Note: u.Note}
}

// update is the Update the line recorded, for endpoint index ep, as far as its beginning says:
// a state this version does not know reads as unavailable.
func (s *scrape) update(ep int) servermetrics.Update {
	return servermetrics.Update{Endpoint: ep, State: stateOf(s.State), Note: s.Note}
}

// scrapeLine is a line of a scrape: a *ServerLine or a *GPULine.
type scrapeLine interface {
	head() *scrape
	Update(ep int) servermetrics.Update
}

func (s *scrape) head() *scrape { return s }

// ServerLine is one scrape of an endpoint's server (servermetrics.Update) as one line of a
// --record file, so that a replay shows the live run's "server" figures. Its "type" is
// "server"; request lines have none. A figure the server did not expose is null.
type ServerLine struct {
	scrape
	Kind string `json:"kind,omitempty"`
	// Shard: the run's shard (--shard), written by a sharded run only (merge.go).
	Shard

	Running            *float64 `json:"running"`
	Waiting            *float64 `json:"waiting"`
	KVCacheUsage       *float64 `json:"kv_cache_usage"`
	PrefixCacheHitRate *float64 `json:"prefix_cache_hit_rate"`
	GenTPS             *float64 `json:"gen_tps"`
	GenLive            bool     `json:"gen_live"`
	// Since the previous scrape: tokens generated over gen_span_ms, prefix-cache counters.
	GenTokens          *float64 `json:"gen_tokens"`
	GenSpanMS          float64  `json:"gen_span_ms"`
	PrefixHits         float64  `json:"prefix_hits"`
	PrefixQueries      float64  `json:"prefix_queries"`
	PrefixFromCounters bool     `json:"prefix_from_counters"`
}

var stateNames = map[servermetrics.State]string{
	servermetrics.StateOK:           "ok",
	servermetrics.StateUnavailable:  "unavailable",
	servermetrics.StateUnrecognised: "unrecognised",
}

func optValue(v servermetrics.Value) *float64 {
	if !v.OK {
		return nil
	}
	x := v.V
	return &x
}

func fromValue(p *float64) servermetrics.Value {
	if p == nil {
		return servermetrics.Value{}
	}
	return servermetrics.Value{V: *p, OK: true}
}

// ServerLineOf is the line of one scrape of the endpoint named name.
func ServerLineOf(name, model string, u servermetrics.Update) ServerLine {
	r := &u.Reading
	l := ServerLine{scrape: scrapeOf(serverType, name, model, r.At, u)}
	if u.State != servermetrics.StateOK {
		return l
	}
	l.Kind = string(r.Kind)
	l.Running, l.Waiting, l.KVCacheUsage = optValue(r.Running), optValue(r.Waiting), optValue(r.KVCacheUsage)
	l.PrefixCacheHitRate, l.GenTPS, l.GenLive = optValue(r.PrefixCacheHitRate), optValue(r.GenTPS), r.GenLive
	l.GenTokens, l.GenSpanMS = optValue(r.GenTokens), durMS(r.GenSpan)
	l.PrefixHits, l.PrefixQueries, l.PrefixFromCounters = r.PrefixHits, r.PrefixQueries, r.PrefixFromCounters
	return l
}

// Update is the scrape the line recorded, for endpoint index ep. A state this version does
// not know reads as unavailable.
func (l *ServerLine) Update(ep int) servermetrics.Update {
	u := l.update(ep)
	u.Reading.At = l.At
	if u.State != servermetrics.StateOK {
		return u
	}
	u.Reading = servermetrics.Reading{
		Kind: servermetrics.Kind(l.Kind), At: l.At,
		Running: fromValue(l.Running), Waiting: fromValue(l.Waiting), KVCacheUsage: fromValue(l.KVCacheUsage),
		PrefixCacheHitRate: fromValue(l.PrefixCacheHitRate), GenTPS: fromValue(l.GenTPS), GenLive: l.GenLive,
		GenTokens: fromValue(l.GenTokens), GenSpan: msDur(l.GenSpanMS),
		PrefixHits: l.PrefixHits, PrefixQueries: l.PrefixQueries, PrefixFromCounters: l.PrefixFromCounters,
	}
	return u
}

// WriteServer appends one scrape of the endpoint named name as one line (safe for concurrent
// use, like Write). It returns os.ErrClosed after Close.
func (r *Recorder) WriteServer(name, model string, u servermetrics.Update) error {
	if u.Source == servermetrics.SourceGPU {
		return r.writeGPU(name, model, u) // a "gpu" line (gpu.go)
	}
	l := ServerLineOf(name, model, u)
	l.Shard = r.shard
	line, err := marshalLine(&l)
	if err != nil {
		return fmt.Errorf("record server %s: %w", name, err)
	}
	return r.writeLine(line)
}

// writeLine appends one whole line in one write.
func (r *Recorder) writeLine(line []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return os.ErrClosed
	}
	_, err := r.f.Write(line)
	return err
}

// stateOf is the scrape state a line names; a state this version does not know reads as
// unavailable.
func stateOf(name string) servermetrics.State {
	for st, n := range stateNames {
		if n == name {
			return st
		}
	}
	return servermetrics.StateUnavailable
}
