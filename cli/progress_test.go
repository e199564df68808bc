package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tokscope/sim"
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

// A headless sweep tells each step's start and end on stderr even when stderr is no terminal
// (a buffer here): they are events, not the redrawn line.
func TestSweepStepLines(t *testing.T) {
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "a", Model: "m", TTFT: 10 * time.Millisecond, TokensPerSecond: 200, MaxTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"--no-tui", "-o", "json", "--max-tokens", "8", "-u", srv.BaseURL("a"), "-m", "m", "--sweep", "1,2", "--step-duration", "500ms"}
	if code := run("", args, &stdout, &stderr, process{}); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	out := stderr.String()
	for _, want := range []string{"sweep step 1/2 starts: concurrency 1", "sweep step 2/2 starts: concurrency 2",
		"sweep step 1/2 ended: concurrency 1", "sweep step 2/2 ended: concurrency 2"} {
		if strings.Count(out, want) != 1 {
			t.Errorf("stderr has %q %d times, want once:\n%s", want, strings.Count(out, want), out)
		}
	}
	if strings.Contains(out, "\r") || strings.Count(out, " left") != 2 || strings.Count(out, ": m ") != 2 {
		t.Errorf("step lines without the redrawn line, each start with what is left, each end per endpoint:\n%s", out)
	}
}
