package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"tokscope/sample"
)

// Timing of the event loop.
const (
	// maxBatch bounds how many already-queued events one eventsMsg carries, so that a flood of
	// deltas never holds the loop for long and key presses interleave with event batches.
	maxBatch = 512
	// redrawEvery is the fastest statistics redraw (~4 Hz) while data flows.
	redrawEvery = 250 * time.Millisecond
	// streamRedrawEvery is the redraw of live stream text while the stream view shows it; the
	// text should feel live, and redrawing panes is cheap (no snapshot, no time-series charts).
	streamRedrawEvery = 100 * time.Millisecond
	// clockEvery is the idle clock: header time, back-off countdowns, the aggregate tok/s
	// window draining after traffic stops.
	clockEvery = time.Second
	// noticeFor is how long a footer notice stays.
	noticeFor = 3 * time.Second
)

// eventsMsg is a batch of events read from the Runner's channel, oldest first. closed says
// the channel was closed after the batch.
type eventsMsg struct {
	events []sample.Event
	closed bool
}

// redrawMsg is the throttled redraw tick, armed only while something is dirty.
type redrawMsg struct{}

// clockMsg is the 1 Hz idle clock.
type clockMsg struct{}

// clearNoticeMsg expires the footer notice with the same id (older ones are stale).
type clearNoticeMsg struct{ id int }

// waitForEvent blocks until the Runner sends an event (or closes the channel, or done is
// closed), then takes what else is already queued, up to maxBatch, without blocking.
// It is re-armed by Update after every eventsMsg: exactly one is in flight at a time.
func waitForEvent(events <-chan sample.Event, done <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		var first sample.Event
		select {
		case ev, ok := <-events:
			if !ok {
				return eventsMsg{closed: true}
			}
			first = ev
		case <-done:
			return nil
		}
		batch := make([]sample.Event, 1, 16)
		batch[0] = first
		for len(batch) < maxBatch {
			select {
			case ev, ok := <-events:
				if !ok {
					return eventsMsg{events: batch, closed: true}
				}
				batch = append(batch, ev)
			default:
				return eventsMsg{events: batch}
			}
		}
		return eventsMsg{events: batch}
	}
}

// scheduleRedraw arms the redraw tick.
func scheduleRedraw(d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return redrawMsg{} })
}

// tickClock arms the next idle clock tick.
func tickClock() tea.Cmd {
	return tea.Tick(clockEvery, func(time.Time) tea.Msg { return clockMsg{} })
}

// clearNoticeAfter expires notice id after d.
func clearNoticeAfter(d time.Duration, id int) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return clearNoticeMsg{id: id} })
}
