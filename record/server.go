package record

import (
	"fmt"
	"os"
	"time"

	"tokscope/servermetrics"
)

// serverType is the "type" of a server line.
const serverType = "server"

// scrape is how every line of a scrape begins, a server's (ServerLine) or its GPUs' (GPULine):
// its "type", the endpoint, when the scrape's response arrived (its reading's At; absent when
// the scrape never got one), whether it worked, the note of a failure and the run's shard.
// Records written before this version also carry "stream": 9223372036854775807 (a mark that
// made still older readers skip the line) and a zero "at" for a scrape without a response;
// both read as absent.
type scrape struct {
	Type     string    `json:"type"`
	Endpoint string    `json:"endpoint"`
	Model    string    `json:"model"`
	At       time.Time `json:"at,omitzero"`
	State    string    `json:"state"`
	Note     string    `json:"note,omitempty"`
	// Shard: the run's shard (--shard), written by a sharded run only (merge.go).
	Shard
}

// scrapeOf is the beginning of the line of type typ for the scrape u, taken at at, of the
// endpoint named name.
func scrapeOf(typ, name, model string, at time.Time, u servermetrics.Update) scrape {
	return scrape{Type: typ, Endpoint: name, Model: model, At: at, State: stateNames[u.State], Note: u.Note}
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
// "server"; request lines have none. A figure the server did not expose is null; the
// figures' keys are servermetrics.Reading's, written only for a scrape that worked (a failed
// one has no reading: its zeros would not be true values).
type ServerLine struct {
	scrape
	*servermetrics.Reading
	// Since the previous scrape: tokens generated over gen_span_ms (Reading.GenSpan); absent
	// on the first scrape, which has no previous one.
	GenSpanMS *float64 `json:"gen_span_ms,omitempty"`
}

// normalise makes a line of an older record what this version writes: a failed scrape
// without a reading, no span of 0 (older records wrote 0 for "no previous scrape").
func (l *ServerLine) normalise() {
	if l.State != stateNames[servermetrics.StateOK] {
		l.Reading = nil
	}
	if l.GenSpanMS != nil && *l.GenSpanMS <= 0 {
		l.GenSpanMS = nil
	}
}

// spanMS is a span since the previous scrape in ms; nil when there was none.
func spanMS(d time.Duration) *float64 {
	if d <= 0 {
		return nil
	}
	v := durMS(d)
	return &v
}

// fromSpanMS is the inverse of spanMS.
func fromSpanMS(p *float64) time.Duration {
	if p == nil {
		return 0
	}
	return msDur(*p)
}

var stateNames = map[servermetrics.State]string{
	servermetrics.StateOK:           "ok",
	servermetrics.StateUnavailable:  "unavailable",
	servermetrics.StateUnrecognised: "unrecognised",
}

// ServerLineOf is the line of one scrape of the endpoint named name.
func ServerLineOf(name, model string, u servermetrics.Update) ServerLine {
	l := ServerLine{scrape: scrapeOf(serverType, name, model, u.Reading.At, u)}
	if u.State == servermetrics.StateOK {
		r := u.Reading
		l.Reading, l.GenSpanMS = &r, spanMS(u.Reading.GenSpan)
	}
	return l
}

// Update is the scrape the line recorded, for endpoint index ep. A state this version does
// not know reads as unavailable.
func (l *ServerLine) Update(ep int) servermetrics.Update {
	u := l.update(ep)
	if l.Reading != nil {
		u.Reading = *l.Reading
	}
	u.Reading.At, u.Reading.GenSpan = l.scrape.At, fromSpanMS(l.GenSpanMS)
	return u
}

// WriteServer appends one scrape of the endpoint named name as one line, a server's or (of
// Source GPU) a GPU line (gpu.go); safe for concurrent use, like Write. It returns
// os.ErrClosed after Close.
func (r *Recorder) WriteServer(name, model string, u servermetrics.Update) error {
	var l scrapeLine
	if u.Source == servermetrics.SourceGPU {
		g := GPULineOf(name, model, u)
		l = &g
	} else {
		s := ServerLineOf(name, model, u)
		l = &s
	}
	l.head().Shard = r.shard
	line, err := marshalLine(l)
	if err != nil {
		return fmt.Errorf("record %s %s: %w", l.head().Type, name, err)
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
