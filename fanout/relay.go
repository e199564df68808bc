package fanout

import (
	"sync/atomic"

	"tokscope/sample"
)

// Bounds of a Relay's queue for its slow consumer.
const (
	// relayBuffer is the capacity of Events: what the consumer can take in one batch.
	relayBuffer = 1024
	// relayLossy is the queue length beyond which Delta and Progress events are dropped for
	// the slow consumer (counted by Dropped): live text and tokens-so-far are worth less than
	// the memory of a consumer that fell far behind. Started, Done and Status are never
	// dropped; the next Progress of a request carries what a dropped one had.
	relayLossy = 4096
)

// Relay reads a Runner's events as fast as they come, so that the Runner never waits for a
// lagging consumer: it hands each event to its taps at once (consumers that must see every
// event without delay and are quick: the record file, the Prometheus exporter), then queues
// it for the slow consumer, which reads Events.
//
// Ownership: Relay's goroutine is the only caller of the taps and the only sender on Events,
// which it closes once the Runner's channel is closed and the queue was taken (or let go:
// Stop).
type Relay struct {
	out     chan sample.Event
	stop    chan struct{}
	tapped  chan struct{} // closed once the taps had the Runner's last event
	dropped atomic.Uint64
	deltas  atomic.Uint64 // of dropped, Deltas
}

// NewRelay starts relaying in to taps and to Events until in is closed.
func NewRelay(in <-chan sample.Event, taps Observer) *Relay {
	r := &Relay{out: make(chan sample.Event, relayBuffer), stop: make(chan struct{}), tapped: make(chan struct{})}
	go r.run(in, taps)
	return r
}

// Events is the slow consumer's channel: every event of the Runner's channel, in order, but
// Delta and Progress events dropped while the consumer is far behind. Closed after the last.
func (r *Relay) Events() <-chan sample.Event { return r.out }

// Dropped counts the Delta and Progress events the slow consumer did not get.
func (r *Relay) Dropped() uint64 { return r.dropped.Load() }

// DroppedDeltas counts the Delta events the slow consumer did not get (of Dropped).
func (r *Relay) DroppedDeltas() uint64 { return r.deltas.Load() }

// Stop says the slow consumer is gone: the queue is let go, and the taps go on taking the
// Runner's events until its channel closes. Call it once.
func (r *Relay) Stop() { close(r.stop) }

// Wait blocks until the Runner's channel was closed and its every event handed to the taps
// (so that the record file can be closed); the slow consumer may not have them all yet.
func (r *Relay) Wait() { <-r.tapped }

func (r *Relay) run(in <-chan sample.Event, taps Observer) {
	defer close(r.out)
	var queue []sample.Event
	stop := r.stop
	for in != nil || len(queue) > 0 {
		var out chan<- sample.Event
		var next sample.Event
		if len(queue) > 0 {
			out, next = r.out, queue[0]
		}
		select {
		case ev, ok := <-in:
			if !ok {
				in = nil
				close(r.tapped)
				continue
			}
			if taps != nil {
				taps.Observe(ev)
			}
			switch {
			case stop == nil: // nobody reads Events any more
			case len(queue) >= relayLossy && lossy(ev):
				r.dropped.Add(1)
				if _, ok := ev.(*sample.Delta); ok {
					r.deltas.Add(1)
				}
			default:
				queue = append(queue, ev)
			}
		case out <- next:
			queue[0] = nil
			queue = queue[1:]
		case <-stop:
			stop, queue = nil, nil
		}
	}
}

// lossy: an event the slow consumer can do without (see relayLossy).
func lossy(ev sample.Event) bool {
	switch ev.(type) {
	case *sample.Delta, *sample.Progress:
		return true
	}
	return false
}
