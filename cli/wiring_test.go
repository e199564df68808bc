package cli

import (
	"path/filepath"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/fanout"
	"tokscope/record"
	"tokscope/sample"
	"tokscope/sample/sampletest"
	"tokscope/servermetrics"
	"tokscope/stats"
)

// The run's one list feeds every consumer from the one stream: a request and a server scrape
// reach the record file and the statistics alike; a scrape read after the Runner's events
// ended (Late) is recorded, and counts in the statistics only for the GPUs.
func TestWiringFeedsScrapesFromTheStream(t *testing.T) {
	eps := []config.Endpoint{{Name: "a", Model: "m"}}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := record.NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	w := &wiring{endpoints: eps, recorder: rec, stats: stats.New(eps)}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	running := func(v float64) servermetrics.Update {
		return servermetrics.Update{Endpoint: 0, Reading: servermetrics.Reading{Kind: servermetrics.KindVLLM, At: at,
			Running: servermetrics.Value{V: v, OK: true}}}
	}
	events := make(chan sample.Event, 2)
	events <- &sample.Done{Sample: sampletest.OK("a", "m", 1, at).Times(time.Millisecond, 10*time.Millisecond).
		Chunks(4, 20*time.Millisecond, 10*time.Millisecond, 1).Tokens(4, sample.SourceUsage).EndAfter(0).Sample()}
	scrapes := make(chan servermetrics.Update, 1)
	scrapes <- running(3)
	// The Runner's events end once the first scrape was read: while the run ran, whichever
	// of the two ready channels the Loop picks first.
	endRun := fanout.Func(func(ev sample.Event) bool {
		if sc, ok := ev.(*fanout.Scrape); ok && !sc.Late {
			close(events)
		}
		return false
	})
	stop := make(chan struct{})
	loop := fanout.NewLoop(events, fanout.Config{Observers: w.observers(endRun), Scrapes: scrapes, StopScrapes: func() { close(stop) }})
	go func() { // the scraper's last word, after the run's end stopped it
		<-stop
		scrapes <- running(9)
		close(scrapes)
	}()
	loop.Run()
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	snap := w.stats.Snapshot(at.Add(time.Second))
	es := &snap.Endpoints[0]
	if es.Requests != 1 {
		t.Errorf("the statistics counted %d requests, want 1", es.Requests)
	}
	srv := es.Server
	if srv == nil || srv.Scrapes != 1 {
		t.Fatalf("server statistics %+v: want the one scrape read while the run ran", srv)
	}
	if v := srv.Latest.Running; !v.OK || v.V != 3 {
		t.Errorf("latest running %+v: a late scrape that is not a GPU's counted", v)
	}
	rp, err := record.LoadReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.Events) != 1 || len(rp.Server) != 2 {
		t.Fatalf("the record holds %d requests and %d scrapes, want 1 and both scrapes", len(rp.Events), len(rp.Server))
	}
}
