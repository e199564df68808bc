package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"tokscope/stats"
	"tokscope/sweep"
)

// progressEvery is how often the headless progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// progressLine is a headless run's progress on stderr, one line redrawn in place (as oha and
// k6 do): requests done of the target, live tok/s over every endpoint, errors, elapsed time.
// It draws only on a terminal: piped or redirected, stderr gets nothing, and stdout is the
// summary in any case.
type progressLine struct {
	w        io.Writer
	width    func() int
	start    time.Time
	target   int           // counted requests to reach over every endpoint, 0 = no target
	duration time.Duration // --duration, 0 = none
	next     time.Time
	drawn    bool
}

// newProgressLine returns the progress line of a run to w, or nil when w is not a terminal.
// target is --requests × endpoints (0 without --requests).
func newProgressLine(w io.Writer, start time.Time, target int, duration time.Duration) *progressLine {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	width := func() int {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
		return 80
	}
	return &progressLine{w: w, width: width, start: start, target: target, duration: duration}
}

// due reports whether the line should be redrawn at now.
func (p *progressLine) due(now time.Time) bool { return p != nil && !now.Before(p.next) }

// draw redraws the line from snap.
func (p *progressLine) draw(now time.Time, snap *stats.Snapshot) {
	if p != nil {
		p.show(now, progressText(snap, now.Sub(p.start), p.target, p.duration))
	}
}

// drawSweep redraws the line of a --sweep run: its step, then the figures of draw.
func (p *progressLine) drawSweep(now time.Time, snap *stats.Snapshot, sp sweep.Progress) {
	if p != nil {
		p.show(now, sweepProgressText(sp)+" · "+strings.TrimPrefix(progressText(snap, now.Sub(p.start), 0, 0), "tokscope  "))
	}
}

// show puts text on the line, cut to the terminal's width.
func (p *progressLine) show(now time.Time, text string) {
	p.next = now.Add(progressEvery)
	if w := p.width() - 1; len([]rune(text)) > w { // never wrap: \r redraws one line only
		text = string([]rune(text)[:max(w, 0)])
	}
	fmt.Fprint(p.w, "\r\x1b[2K"+text)
	p.drawn = true
}

// clear erases the line, before the summary or an error is printed.
func (p *progressLine) clear() {
	if p != nil && p.drawn {
		fmt.Fprint(p.w, "\r\x1b[2K")
		p.drawn = false
	}
}

// progressText is the line's text, e.g.
// "tokscope  37/80 requests · ≈412.3 tok/s · 4 streaming · 2 failed · 12s of 1m0s".
func progressText(snap *stats.Snapshot, elapsed time.Duration, target int, duration time.Duration) string {
	var done, errs, inFlight int
	var tps float64
	estimated := false
	for _, e := range snap.Endpoints {
		done += e.Requests
		errs += e.Errors + e.Truncated
		tps += e.AggregateTPS
		inFlight += e.InFlight.Requests
		estimated = estimated || e.InFlight.Estimated || (e.TokenSource != "" && e.TokenSource != "usage")
	}
	parts := []string{fmt.Sprintf("%d requests", done)}
	if target > 0 {
		parts[0] = fmt.Sprintf("%d/%d requests", done, target)
	}
	mark := ""
	if estimated {
		mark = "≈"
	}
	parts = append(parts, fmt.Sprintf("%s%.1f tok/s", mark, tps), fmt.Sprintf("%d streaming", inFlight),
		fmt.Sprintf("%d failed", errs)) // errors and truncated streams: what makes the exit status 1
	el := elapsed.Round(time.Second).String()
	if duration > 0 {
		el += " of " + duration.String()
	}
	parts = append(parts, el)
	return "tokscope  " + strings.Join(parts, " · ")
}

// sweepProgressText is where a sweep is: "tokscope  step 2/5 c4 · 12s left", then its last
// step's requests finishing.
func sweepProgressText(p sweep.Progress) string {
	switch {
	case p.Step < 0:
		return "tokscope  sweep: warming up"
	case p.Step >= p.Steps:
		return "tokscope  sweep: the last step's requests are finishing"
	}
	return fmt.Sprintf("tokscope  step %d/%d c%d · %s left", p.Step+1, p.Steps, p.Concurrency, p.Left.Round(time.Second))
}

// sweepSteps prints a --sweep's step events on stderr, whether or not it is a terminal (they
// are events, not the redrawn line): each step's start, with the time so far and what is left,
// and its end once its results are final, with what each endpoint did in it.
type sweepSteps struct {
	w        io.Writer
	progress *progressLine // cleared before a line, redrawn after; nil off a terminal
	start    time.Time
	started  int // steps whose start was told
	ended    int // steps whose end was told
}

// tell prints what happened since the last call.
func (s *sweepSteps) tell(tr *sweep.Tracker) {
	p := tr.Progress()
	plan := tr.Plan()
	for s.started < min(p.Step+1, p.Steps) && p.Step >= 0 {
		i := s.started
		s.started++
		left := time.Duration(p.Steps-i)*plan.StepDuration + plan.Grace/2
		if i == p.Step {
			left = p.Left + time.Duration(p.Steps-i-1)*plan.StepDuration
		}
		s.line(fmt.Sprintf("tokscope: sweep step %d/%d starts: concurrency %d · %s so far, ≈ %s left", i+1, p.Steps,
			plan.Concurrency[i], time.Since(s.start).Round(time.Second), left.Round(time.Second)))
	}
	if p.Finished <= s.ended {
		return
	}
	rs := tr.Results()
	for ; s.ended < p.Finished; s.ended++ {
		var parts []string
		for _, r := range rs {
			if r.Step == s.ended+1 {
				parts = append(parts, stepResultText(&r))
			}
		}
		s.line(fmt.Sprintf("tokscope: sweep step %d/%d ended: concurrency %d · %s so far: %s", s.ended+1, p.Steps,
			plan.Concurrency[s.ended], time.Since(s.start).Round(time.Second), strings.Join(parts, "; ")))
	}
}

// line prints one event line above the progress line.
func (s *sweepSteps) line(text string) {
	s.progress.clear()
	fmt.Fprintln(s.w, text)
}

// stepResultText is one endpoint's step: "a 24 requests, 312.5 tok/s, 0 errors".
func stepResultText(r *sweep.Result) string {
	return fmt.Sprintf("%s %d requests, %.1f tok/s, %d errors", r.Endpoint, r.Requests, r.AggregateTPS, r.Errors+r.Truncated)
}
