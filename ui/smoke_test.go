package ui

import (
	"bytes"
	"testing"
	"time"

	"tokscope/sample"

	"github.com/charmbracelet/x/exp/teatest"
)

// TestSmoke runs the real program: start, receive events, switch views, race, quit.
func TestSmoke(t *testing.T) {
	ctl := newFakeControls()
	eps := testEndpoints(3)
	events := make(chan sample.Event, 256)
	defer close(events) // releases the event reader after the program ends
	board := NewBoard(eps, nil, nil)
	m := New(ctl, eps, throughLoop(board, events), Options{Now: pinned, Prompt: "hello", Board: board})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))

	for _, ev := range history(eps, 4) {
		events <- ev
	}
	waitFor(t, tm, "errors 1")
	tm.Send(keyMsg("2"))
	waitFor(t, tm, "ttft p50")
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, "TTFT breakdown")
	tm.Send(keyMsg("4"))
	tm.Send(keyMsg("ctrl+r"))
	waitFor(t, tm, "race #1")
	for _, ev := range raceEvents(eps, 1) {
		events <- ev
	}
	waitFor(t, tm, "Rayleigh")
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	final := tm.FinalModel(t).(Model)
	if final.view != viewStream || final.snap.Endpoints[0].Requests != 4 {
		t.Fatalf("final view %s, %d requests", final.views[final.view].Name(), final.snap.Endpoints[0].Requests)
	}
}

func waitFor(t *testing.T, tm *teatest.TestModel, text string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(text)) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// TestDeltaFloodKeepsKeysResponsive floods the event channel with stream deltas: key presses
// must still be handled (events are read in bounded batches, drawing is throttled).
func TestDeltaFloodKeepsKeysResponsive(t *testing.T) {
	ctl := newFakeControls()
	eps := testEndpoints(2)
	events := make(chan sample.Event, 1024)
	m := New(ctl, eps, events, Options{Now: pinned})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	tm.Send(keyMsg("4"))
	tm.Send(keyMsg("ctrl+r")) // stream id 1
	waitFor(t, tm, "race #1")

	stop := make(chan struct{})
	flooded := make(chan struct{})
	go func() {
		defer close(flooded)
		at := t0
		for i := 0; ; i++ {
			at = at.Add(time.Millisecond)
			select {
			case events <- &sample.Delta{Endpoint: sample.EndpointIndex(i % 2), Stream: 1, At: at, Text: "tok "}:
			case <-stop:
				return
			}
		}
	}()
	tm.Send(keyMsg("2"))
	waitFor(t, tm, "ttft p50")
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	close(stop)
	<-flooded
	close(events)
}
