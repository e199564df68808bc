package probe

import (
	"context"
	"sync/atomic"

	"tokscope/sample"
)

// outbox is the Runner's one event channel and the count of the deltas it dropped. Two kinds
// of send: those that must not be lost (Started, Done, Status) block while the consumer lags,
// until the run is over; live ones (Delta, Progress) never block and are dropped when the
// channel is full, since the producer's timing is worth more than them. Dropped deltas are
// counted (the live view says text is missing); a dropped Progress is not: its counts are
// cumulative, so the next Progress and the Done carry them.
//
// Concurrency: any goroutine may send; the Runner closes events once every sender has
// returned (Run), and nothing sends after that.
type outbox struct {
	events        chan sample.Event
	droppedDeltas atomic.Uint64
}

func newOutbox(capacity int) *outbox { return &outbox{events: make(chan sample.Event, capacity)} }

// send delivers an event that must not be dropped: it blocks while the consumer lags, and
// gives up only when ctx (the run's sends) is over.
func (o *outbox) send(ctx context.Context, ev sample.Event) {
	select {
	case o.events <- ev:
	case <-ctx.Done():
	}
}

// delta never blocks: live text is worth less than the producer's timing.
func (o *outbox) delta(d *sample.Delta) {
	select {
	case o.events <- d:
	default:
		o.droppedDeltas.Add(1)
	}
}

// progress never blocks either: a dropped Progress loses nothing but its instant.
func (o *outbox) progress(p *sample.Progress) {
	select {
	case o.events <- p:
	default:
	}
}
