package fanout

import (
	"fmt"
	"testing"
	"time"

	"tokscope/sample"
	"tokscope/servermetrics"
)

// counter is an Observer that counts Done events and says it changed on them only.
type counter struct{ seen []uint64 }

func (c *counter) Observe(ev sample.Event) bool {
	d, ok := ev.(*sample.Done)
	if ok {
		c.seen = append(c.seen, d.Sample.Seq)
	}
	return ok
}

func done(seq uint64) *sample.Done { return &sample.Done{Sample: sample.Sample{Seq: seq}} }

func TestListGivesEveryObserverEveryEvent(t *testing.T) {
	a, b := &counter{}, &counter{}
	l := List{a, nil, b}
	if !l.Observe(done(1)) {
		t.Error("a Done changed both observers: Observe said no change")
	}
	if l.Observe(&sample.Started{Seq: 2}) {
		t.Error("a Started changed nothing: Observe said it did")
	}
	l.Observe(done(3))
	for _, c := range []*counter{a, b} {
		if len(c.seen) != 2 || c.seen[0] != 1 || c.seen[1] != 3 {
			t.Errorf("observer saw %v, want [1 3]", c.seen)
		}
	}
}

// A screen that does not read holds up neither the producer nor the observers: the Runner's
// channel (unbuffered here) is read at once, and every Done reaches the screen later, in
// order, while Deltas beyond the queue's bound are dropped.
func TestLoopNeverHoldsUpTheProducer(t *testing.T) {
	in := make(chan sample.Event)
	tap := &counter{}
	l := NewLoop(in, Config{Observers: tap, Screen: true}).Start()
	const n = 3 * screenLossy
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := range n {
			in <- done(uint64(i))
			in <- &sample.Delta{Text: "x"}
		}
		close(in)
	}()
	select {
	case <-sent:
	case <-time.After(10 * time.Second):
		t.Fatal("the producer blocked on a screen that does not read")
	}
	l.Wait()
	if len(tap.seen) != n {
		t.Fatalf("the observer saw %d Done events, want %d", len(tap.seen), n)
	}
	var got []uint64
	deltas, ends := 0, 0
	for ev := range l.Screen() {
		switch ev := ev.(type) {
		case *sample.Done:
			got = append(got, ev.Sample.Seq)
		case *sample.Delta:
			deltas++
		case *End:
			ends++
		}
	}
	for i, seq := range got {
		if seq != uint64(i) {
			t.Fatalf("Done %d is seq %d: out of order or lost", i, seq)
		}
	}
	if len(got) != n || ends != 1 {
		t.Fatalf("the screen got %d Done events and %d End, want all %d and one End", len(got), ends, n)
	}
	if deltas == n || uint64(deltas)+l.Dropped() != n || l.Dropped() == 0 || l.DroppedDeltas() != l.Dropped() {
		t.Fatalf("%d deltas delivered, %d dropped, of %d: want some dropped, none lost uncounted", deltas, l.Dropped(), n)
	}
}

// Once the screen is gone, the observers still take every event until the Runner closes its
// channel, and Screen closes.
func TestLoopStopScreenKeepsTheObservers(t *testing.T) {
	in := make(chan sample.Event, 8)
	tap := &counter{}
	l := NewLoop(in, Config{Observers: tap, Screen: true}).Start()
	in <- done(0)
	l.StopScreen()
	for i := 1; i < 100; i++ {
		in <- done(uint64(i))
	}
	close(in)
	l.Wait()
	if len(tap.seen) != 100 {
		t.Fatalf("the observer saw %d Done events after StopScreen, want 100", len(tap.seen))
	}
	for range l.Screen() { // closed: does not block
	}
}

// Scrapes are events of the same stream: each observer sees them in the order read, with the
// requests; a headless run's end stops the scraper, and what it still says comes as Late,
// after End.
func TestLoopPutsScrapesOnTheStream(t *testing.T) {
	in := make(chan sample.Event)
	scrapes := make(chan servermetrics.Update)
	var got []string
	obs := Func(func(ev sample.Event) bool {
		switch ev := ev.(type) {
		case *sample.Done:
			got = append(got, "done")
		case *Scrape:
			got = append(got, fmt.Sprintf("scrape %d late=%v", ev.Update.Endpoint, ev.Late))
		case *End:
			got = append(got, "end")
		}
		return false
	})
	stopped := make(chan struct{})
	l := NewLoop(in, Config{Observers: obs, Scrapes: scrapes, StopScrapes: func() { close(stopped) }}).Start()
	in <- done(1)
	scrapes <- servermetrics.Update{Endpoint: 1}
	in <- done(2)
	close(in)
	<-stopped // the loop stopped the scraper, which says its last word and closes
	scrapes <- servermetrics.Update{Endpoint: 2}
	close(scrapes)
	l.Wait()
	want := []string{"done", "scrape 1 late=false", "done", "end", "scrape 2 late=true"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the observer saw %q, want %q", got, want)
	}
}

// Beat runs after every event, and on the clock when no event comes.
func TestLoopBeatsWithoutEvents(t *testing.T) {
	in := make(chan sample.Event)
	beats := make(chan time.Time, 64)
	l := NewLoop(in, Config{Every: time.Millisecond, Beat: func(now time.Time) {
		select {
		case beats <- now:
		default:
		}
	}}).Start()
	for range 3 { // no event was sent: these come from the clock
		select {
		case <-beats:
		case <-time.After(10 * time.Second):
			t.Fatal("no beat without events")
		}
	}
	close(in)
	l.Wait()
}
