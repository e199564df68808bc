package fanout

import (
	"testing"
	"time"

	"tokscope/sample"
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

// A consumer that does not read holds up neither the producer nor the taps: the Runner's
// channel (unbuffered here) is read at once, and every Done reaches the consumer later, in
// order, while Deltas beyond the queue's bound are dropped.
func TestRelayNeverHoldsUpTheProducer(t *testing.T) {
	in := make(chan sample.Event)
	tap := &counter{}
	r := NewRelay(in, tap)
	const n = 3 * relayLossy
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
		t.Fatal("the producer blocked on a consumer that does not read")
	}
	r.Wait()
	if len(tap.seen) != n {
		t.Fatalf("the tap saw %d Done events, want %d", len(tap.seen), n)
	}
	var got []uint64
	deltas := 0
	for ev := range r.Events() {
		switch ev := ev.(type) {
		case *sample.Done:
			got = append(got, ev.Sample.Seq)
		case *sample.Delta:
			deltas++
		}
	}
	for i, seq := range got {
		if seq != uint64(i) {
			t.Fatalf("Done %d is seq %d: out of order or lost", i, seq)
		}
	}
	if len(got) != n {
		t.Fatalf("the consumer got %d Done events, want all %d", len(got), n)
	}
	if deltas == n || uint64(deltas)+r.Dropped() != n || r.Dropped() == 0 || r.DroppedDeltas() != r.Dropped() {
		t.Fatalf("%d deltas delivered, %d dropped, of %d: want some dropped, none lost uncounted", deltas, r.Dropped(), n)
	}
}

// Once the consumer is gone, the taps still take every event until the Runner closes its
// channel, and Events closes.
func TestRelayStopKeepsTheTaps(t *testing.T) {
	in := make(chan sample.Event, 8)
	tap := &counter{}
	r := NewRelay(in, tap)
	in <- done(0)
	r.Stop()
	for i := 1; i < 100; i++ {
		in <- done(uint64(i))
	}
	close(in)
	r.Wait()
	if len(tap.seen) != 100 {
		t.Fatalf("the tap saw %d Done events after Stop, want 100", len(tap.seen))
	}
	for range r.Events() { // closed: does not block
	}
}
