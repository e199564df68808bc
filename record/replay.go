package record

import (
	"errors"
	"fmt"
	"os"
	"time"

	"tokscope/config"
	"tokscope/probe"
	"tokscope/servermetrics"
)

// Replay is a --record file read back (--replay): the events of a finished run, which the
// statistics and the UI take in exactly as they took the live run's.
type Replay struct {
	Endpoints []config.Endpoint // named as recorded, in order of first appearance
	Events    []probe.Event     // a *probe.Done per record in file order; interactive stream records left out
	// Server is the server scrapes the run recorded, in file order (nil in a record written
	// before they were): feed them to stats.(*Aggregator).ObserveServer.
	Server  []servermetrics.Update
	End     time.Time // when the last recorded request finished
	Failed  bool      // a counted request (not a warm-up, not interactive) did not succeed
	Warning string    // why some records were left out (a torn line), else ""
}

// LoadReplay reads the --record file at path. A torn line (a killed run) is not an error:
// the whole records are used and Warning says so. Any other unreadable line is an
// error naming the line; errors and the warning begin with path.
func LoadReplay(path string) (*Replay, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	file, err := ReadFile(f)
	recs := file.Records
	var warning string
	switch {
	case errors.Is(err, ErrTruncated):
		warning = fmt.Sprintf("%s: %v; using the %d whole records", path, err, len(recs))
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no records (is it a --record file?)", path)
	}
	rp := replayRecords(recs)
	rp.addServer(file.Server)
	rp.addGPU(file.GPU)
	rp.Warning = warning
	return rp, nil
}

// replayRecords turns records into the events of the run they recorded.
func replayRecords(recs []Record) *Replay {
	rp := &Replay{}
	index := map[string]int{}
	for i := range recs {
		s := recs[i].Sample()
		ep, ok := index[s.Endpoint]
		if !ok {
			ep = len(rp.Endpoints)
			index[s.Endpoint] = ep
			rp.Endpoints = append(rp.Endpoints, config.Endpoint{Name: s.Endpoint, Model: s.Model})
		}
		if s.Stream != 0 {
			continue // an interactive stream/race request: never in statistics, live or replayed
		}
		rp.Failed = rp.Failed || s.Failed()
		if done := finishedAt(&s); done.After(rp.End) {
			rp.End = done
		}
		rp.Events = append(rp.Events, &probe.Done{Endpoint: probe.EndpointIndex(ep), Sample: s})
	}
	return rp
}

// addServer adds the recorded scrapes, by endpoint name; an endpoint no request named comes
// after those that did, so that the endpoints keep the order of their requests.
func (rp *Replay) addServer(lines []ServerLine) {
	index := map[string]int{}
	for i, ep := range rp.Endpoints {
		if _, dup := index[ep.Name]; !dup {
			index[ep.Name] = i
		}
	}
	for i := range lines {
		l := &lines[i]
		ep, ok := index[l.Endpoint]
		if !ok {
			ep = len(rp.Endpoints)
			index[l.Endpoint] = ep
			rp.Endpoints = append(rp.Endpoints, config.Endpoint{Name: l.Endpoint, Model: l.Model})
		}
		rp.Server = append(rp.Server, l.Update(ep))
	}
}

// finishedAt is when a request finished on the wall clock: t0 + End, else its last instant.
func finishedAt(s *probe.Sample) time.Time {
	for _, d := range []time.Duration{s.End, s.LastToken, s.FirstEvent, s.Headers} {
		if d >= 0 {
			return s.Start.Add(d)
		}
	}
	return s.Start
}
