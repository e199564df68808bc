package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tokscope/stats"
	"tokscope/sweep"
)

func TestProgressText(t *testing.T) {
	snap := &stats.Snapshot{Endpoints: []stats.EndpointStats{
		{Requests: 10, Errors: 1, Truncated: 1, AggregateTPS: 100.25, TokenSource: "usage", InFlight: stats.InFlight{Requests: 2}},
		{Requests: 27, AggregateTPS: 300, TokenSource: "usage", InFlight: stats.InFlight{Requests: 1, Estimated: true}},
	}}
	for _, c := range []struct {
		target   int
		duration time.Duration
		want     string
	}{
		{80, 0, "tokscope  37/80 requests · ≈400.2 tok/s · 3 streaming · 2 failed · 12s"},
		{0, time.Minute, "tokscope  37 requests · ≈400.2 tok/s · 3 streaming · 2 failed · 12s of 1m0s"},
	} {
		if got := progressText(snap, 12400*time.Millisecond, c.target, c.duration); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
	snap.Endpoints[1].InFlight.Estimated = false
	if got := progressText(snap, 0, 0, 0); got != "tokscope  37 requests · 400.2 tok/s · 3 streaming · 2 failed · 0s" {
		t.Errorf("exact counts: %q", got)
	}
}

// Only a terminal gets a progress line: a buffer, a file or a pipe get nothing.
func TestProgressLineOnlyOnTerminals(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, out := range map[string]io.Writer{"buffer": &bytes.Buffer{}, "file": f, "pipe": w} {
		if p := newProgressLine(out, time.Now(), 1, 0); p != nil {
			t.Errorf("%s: a progress line on something that is not a terminal", name)
		}
	}
	var none *progressLine // what a non-terminal gets: every method is a no-op
	none.draw(time.Now(), &stats.Snapshot{})
	none.clear()
	if none.due(time.Now()) {
		t.Error("a nil progress line is due")
	}
}

func TestSweepProgressText(t *testing.T) {
	for _, c := range []struct {
		p    sweep.Progress
		want string
	}{
		{sweep.Progress{Step: -1, Steps: 3}, "tokscope  sweep: warming up"},
		{sweep.Progress{Step: 1, Steps: 3, Concurrency: 4, Left: 11600 * time.Millisecond}, "tokscope  step 2/3 c4 · 12s left"},
		{sweep.Progress{Step: 3, Steps: 3, Draining: true}, "tokscope  sweep: the last step's requests are finishing"},
	} {
		if got := sweepProgressText(c.p); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}

// The line is redrawn in place (carriage return, erase line) and cut to the terminal's width
// so that it never wraps; clear erases it so that a note or the summary starts on a clean line.
func TestProgressLineRedrawsInPlace(t *testing.T) {
	var b bytes.Buffer
	p := &progressLine{w: &b, width: func() int { return 30 }, start: time.Now()}
	snap := &stats.Snapshot{Endpoints: []stats.EndpointStats{{Requests: 3, AggregateTPS: 12}}}
	p.draw(time.Now(), snap)
	p.clear()
	p.clear() // nothing drawn since: nothing to erase
	if got, want := b.String(), "\r\x1b[2Ktokscope  3 requests · 12.0 t\r\x1b[2K"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if p.due(time.Now()) {
		t.Error("due again right after a draw")
	}
}
