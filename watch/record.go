package watch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// A watch record (--record FILE) is JSON lines: first a header naming the targets, then one
// Instant per scrape, in the order the fleet took them. Replaying it feeds a Fleet the same
// Instants, so every figure comes out as it did live. It holds what the servers exported and
// the targets' URLs and labels; never a header or a key (watching sends none).

// recordHeader is a record's first line.
type recordHeader struct {
	Watch struct {
		Version  int      `json:"version"`
		Targets  []Target `json:"targets"`
		WindowS  float64  `json:"window_s"`
		Interval float64  `json:"interval_s"`
	} `json:"watch"`
}

// Recorder appends scrapes to a record file. Not safe for concurrent use: the goroutine that
// feeds the Fleet writes.
type Recorder struct {
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
}

// NewRecorder creates path and writes the header.
func NewRecorder(path string, targets []Target, window, interval time.Duration) (*Recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	r := &Recorder{f: f, w: bufio.NewWriter(f)}
	r.enc = json.NewEncoder(r.w)
	var h recordHeader
	h.Watch.Version, h.Watch.Targets, h.Watch.WindowS, h.Watch.Interval = 1, targets, window.Seconds(), interval.Seconds()
	if err := r.enc.Encode(h); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// Targets writes a header line again when the targets change (a targets file re-read).
func (r *Recorder) Targets(targets []Target) error {
	var h recordHeader
	h.Watch.Version, h.Watch.Targets = 1, targets
	return r.enc.Encode(h)
}

// Write appends one scrape.
func (r *Recorder) Write(in Instant) error { return r.enc.Encode(in) }

// Close flushes and closes the file.
func (r *Recorder) Close() error {
	err := r.w.Flush()
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Replay is a watch record read back.
type Replay struct {
	Targets  []Target
	Window   time.Duration
	Interval time.Duration
	// Events are the record's lines after the first header: a targets change (Targets
	// non-nil) or a scrape.
	Events []ReplayEvent
}

// ReplayEvent is one line of a record after its first.
type ReplayEvent struct {
	Targets []Target // a new set of targets, or nil
	Instant Instant
}

// maxRecordLine bounds one line of a record (a scrape of a large vLLM is some tens of kB).
const maxRecordLine = 16 << 20

// ReadReplay reads a watch record. Errors name the file and line.
func ReadReplay(path string) (*Replay, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readReplay(path, f)
}

func readReplay(path string, r io.Reader) (*Replay, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxRecordLine)
	rp := &Replay{}
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		var probe struct {
			Watch *json.RawMessage `json:"watch"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, fmt.Errorf("%s:%d: not a watch record line: %v", path, line, err)
		}
		if probe.Watch != nil {
			var h recordHeader
			if err := json.Unmarshal(raw, &h); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, line, err)
			}
			if line == 1 {
				rp.Targets = h.Watch.Targets
				rp.Window = time.Duration(h.Watch.WindowS * float64(time.Second))
				rp.Interval = time.Duration(h.Watch.Interval * float64(time.Second))
			} else {
				rp.Events = append(rp.Events, ReplayEvent{Targets: h.Watch.Targets})
			}
			continue
		}
		if line == 1 {
			return nil, fmt.Errorf("%s:1: not a watch record (no \"watch\" header; a run's record is replayed with --replay)", path)
		}
		var in Instant
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		rp.Events = append(rp.Events, ReplayEvent{Instant: in})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", path, line+1, err)
	}
	if line == 0 {
		return nil, errors.New(path + ": empty")
	}
	return rp, nil
}

// Play feeds every event of the replay to f, in order, and returns the time of the last
// scrape (zero when there is none).
func (rp *Replay) Play(f *Fleet) time.Time {
	f.SetTargets(rp.Targets)
	var last time.Time
	for _, ev := range rp.Events {
		if ev.Targets != nil {
			f.SetTargets(ev.Targets)
			continue
		}
		f.Observe(ev.Instant)
		last = ev.Instant.At
	}
	return last
}
