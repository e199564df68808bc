package fanout

import (
	"sync/atomic"
	"time"

	"tokscope/sample"
	"tokscope/servermetrics"
)

// Scrape is one scrape of an endpoint's server or GPUs (--server-metrics, --gpu-metrics) as
// an event of the run: the Loop puts the scraper's Updates on the stream of the Runner's
// events, so the record file, the statistics, a capacity search and the screen take them in
// one order with the requests. Late: read after the Runner's events ended (the scraper's
// last words, such as the GPUs' final energy reading).
type Scrape struct {
	sample.Extension
	Update servermetrics.Update
	Late   bool
}

// End says the Runner's events are over; the screen then shows the run as stopped, while
// scrapes may still follow it (a TUI keeps showing the servers until the user quits).
type End struct{ sample.Extension }

// Bounds of a Loop's queue for its screen.
const (
	// screenBuffer is the capacity of Screen: what the screen can take in one batch.
	screenBuffer = 1024
	// screenLossy is the queue length beyond which Delta and Progress events are dropped for
	// the screen (counted by Dropped): live text and tokens-so-far are worth less than the
	// memory of a screen that fell far behind. Every other event is never dropped; the next
	// Progress of a request carries what a dropped one had.
	screenLossy = 4096
)

// Config is what a Loop feeds and how.
type Config struct {
	// Observers take every event at once, in order, on the Loop's goroutine: the record
	// file, the exporter, the statistics, a sweep's steps, a capacity search, the report.
	Observers Observer
	// Scrapes, when not nil, are the scraper's Updates: each becomes a *Scrape on the stream.
	Scrapes <-chan servermetrics.Update
	// StopScrapes, when not nil, is called once the Runner's events ended (a headless run: the
	// end of the run stops the scraper); the Updates still to come are read, as Late, until
	// the channel closes. Nil: the scrapes go on until their channel closes by itself.
	StopScrapes func()
	// Beat, when not nil, is called after every event and every Every (a sweep's step may end
	// without any event; a progress line is redrawn), on the Loop's goroutine.
	Beat  func(now time.Time)
	Every time.Duration
	// Screen: queue every event for a consumer that may lag (the UI), read from Screen.
	Screen bool
}

// Loop is the one reader of a run's events: it reads the Runner's channel as fast as events
// come (the Runner never waits for a consumer), and the scraper's Updates beside it, and hands
// each to its observers at once, in order. With a screen, it then queues the event for the
// screen, which reads Screen; Delta and Progress are dropped for the screen (and counted)
// only while it is far behind.
//
// Ownership: the Loop's goroutine (Run) is the only caller of the observers and of Beat, and
// the only sender on Screen, which it closes when Run returns.
type Loop struct {
	cfg     Config
	events  <-chan sample.Event
	out     chan sample.Event // nil without a screen
	stop    chan struct{}
	tapped  chan struct{} // closed once the observers had the last event and scrape
	dropped atomic.Uint64
	deltas  atomic.Uint64 // of dropped, Deltas
}

// NewLoop prepares the loop over events (the Runner's channel, or a replay's records).
func NewLoop(events <-chan sample.Event, cfg Config) *Loop {
	l := &Loop{cfg: cfg, events: events, stop: make(chan struct{}), tapped: make(chan struct{})}
	if cfg.Screen {
		l.out = make(chan sample.Event, screenBuffer)
	}
	return l
}

// Start runs the loop on a goroutine of its own.
func (l *Loop) Start() *Loop {
	go l.Run()
	return l
}

// Screen is the screen's channel: every event, in order (End once the Runner's events are
// over), but Delta and Progress dropped while the screen is far behind. Closed after the
// last. Nil without Config.Screen.
func (l *Loop) Screen() <-chan sample.Event { return l.out }

// Dropped counts the Delta and Progress events the screen did not get.
func (l *Loop) Dropped() uint64 { return l.dropped.Load() }

// DroppedDeltas counts the Delta events the screen did not get (of Dropped).
func (l *Loop) DroppedDeltas() uint64 { return l.deltas.Load() }

// StopScreen says the screen is gone: its queue is let go, and the observers go on taking
// every event until the run's channels close. Call it once.
func (l *Loop) StopScreen() { close(l.stop) }

// Wait blocks until the events and the scrapes have ended and every observer had every one
// (the record file may be closed); the screen may not have them all yet.
func (l *Loop) Wait() { <-l.tapped }

// Run reads the events and the scrapes until both have ended, and returns once the screen
// has taken its queue (or is gone).
func (l *Loop) Run() {
	if l.out != nil {
		defer close(l.out)
	}
	var tick <-chan time.Time
	if l.cfg.Every > 0 && l.cfg.Beat != nil {
		t := time.NewTicker(l.cfg.Every)
		defer t.Stop()
		tick = t.C
	}
	r := reading{events: l.events, scrapes: l.cfg.Scrapes}
	var queue []sample.Event
	stop := l.stop
	for !r.over() || len(queue) > 0 {
		var out chan<- sample.Event
		var next sample.Event
		if len(queue) > 0 {
			out, next = l.out, queue[0]
		}
		var ev sample.Event
		select {
		case e, ok := <-r.events:
			ev = r.event(e, ok, l.cfg.StopScrapes)
		case u, ok := <-r.scrapes:
			ev = r.scrape(u, ok)
		case out <- next:
			queue[0] = nil
			queue = queue[1:]
		case <-stop:
			stop, queue = nil, nil
		case now := <-tick:
			l.cfg.Beat(now)
		}
		if ev != nil {
			if l.cfg.Observers != nil {
				l.cfg.Observers.Observe(ev)
			}
			if l.cfg.Beat != nil {
				l.cfg.Beat(time.Now())
			}
			queue = l.enqueue(queue, ev, stop == nil)
		}
		if r.over() && !r.tapped {
			r.tapped = true
			close(l.tapped)
		}
	}
}

// reading is where the Loop's inputs stand.
type reading struct {
	events  <-chan sample.Event         // nil once closed
	scrapes <-chan servermetrics.Update // nil once closed (or none)
	late    bool                        // the events ended and the scraper was stopped
	tapped  bool                        // Loop.tapped is closed
}

func (r *reading) over() bool { return r.events == nil && r.scrapes == nil }

// event is what the Loop hands on for one read of the events: the event, or End when the
// channel closed (the scraper is then stopped, if stop).
func (r *reading) event(e sample.Event, ok bool, stop func()) sample.Event {
	if ok {
		return e
	}
	r.events = nil
	if stop != nil {
		stop()
		r.late = true
	}
	return &End{}
}

// scrape is what the Loop hands on for one read of the scrapes: nil when the channel closed.
func (r *reading) scrape(u servermetrics.Update, ok bool) sample.Event {
	if !ok {
		r.scrapes = nil
		return nil
	}
	return &Scrape{Update: u, Late: r.late}
}

// enqueue queues ev for the screen, unless there is none (or it is gone: gone), or ev is
// lossy and the screen far behind.
func (l *Loop) enqueue(queue []sample.Event, ev sample.Event, gone bool) []sample.Event {
	switch {
	case l.out == nil || gone:
	case len(queue) >= screenLossy && lossy(ev):
		l.dropped.Add(1)
		if _, ok := ev.(*sample.Delta); ok {
			l.deltas.Add(1)
		}
	default:
		queue = append(queue, ev)
	}
	return queue
}

// lossy: an event the screen can do without (see screenLossy).
func lossy(ev sample.Event) bool {
	switch ev.(type) {
	case *sample.Delta, *sample.Progress:
		return true
	}
	return false
}
