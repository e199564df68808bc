package record

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tokscope/servermetrics"
)

// A scrape written to the record reads back as the Update it was, every figure and its
// absence; a request line and the scrape lines share the file, each read as what it is.
func TestServerLinesRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 14, 15, 9, 26, 123456789, time.UTC)
	ok := servermetrics.Update{Endpoint: 1, State: servermetrics.StateOK, Reading: servermetrics.Reading{
		Kind: servermetrics.KindVLLM, At: at,
		Running: servermetrics.Value{V: 3, OK: true}, Waiting: servermetrics.Value{V: 0, OK: true},
		KVCacheUsage: servermetrics.Value{V: 0.125, OK: true}, GenTPS: servermetrics.Value{V: 812.5, OK: true}, GenLive: true,
		GenTokens: servermetrics.Value{V: 812.5, OK: true}, GenSpan: time.Second,
		PrefixHits: 64, PrefixQueries: 128, PrefixFromCounters: true,
	}}
	down := servermetrics.Update{Endpoint: 1, State: servermetrics.StateUnavailable, Note: "connection refused",
		Reading: servermetrics.Reading{At: at.Add(time.Second)}}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	s := fullSample()
	s.Endpoint, s.Model = "b", "model-b"
	for _, err := range []error{rec.WriteServer("a", "model-a", ok), rec.Write(&s), rec.WriteServer("a", "model-a", down), rec.Close()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(bytes.NewReader(b))
	if err != nil || len(f.Records) != 1 || len(f.Server) != 2 {
		t.Fatalf("%d records, %d server lines, error %v", len(f.Records), len(f.Server), err)
	}
	for i, want := range []servermetrics.Update{ok, down} {
		if got := f.Server[i].Update(1); !equalUpdates(got, want) {
			t.Errorf("scrape %d: read back %+v, wrote %+v", i, got, want)
		}
	}
	// ReadRecords is the requests only; a line of an unknown type is skipped.
	more := append(b, []byte(`{"type":"future","endpoint":"a"}`+"\n")...)
	if recs, err := ReadRecords(bytes.NewReader(more)); err != nil || len(recs) != 1 {
		t.Errorf("ReadRecords: %d records, %v", len(recs), err)
	}
	// A reader from before server lines takes one for a Record of an interactive stream,
	// which it leaves out of every figure.
	var old Record
	if err := json.Unmarshal([]byte(strings.Split(string(b), "\n")[0]), &old); err != nil || old.Stream == 0 {
		t.Errorf("an older reader sees stream %d (%v): it would count the scrape as a request", old.Stream, err)
	}

	// A replay hands the scrapes on by endpoint; endpoints keep the order of their requests,
	// one named only by scrapes comes after them.
	rp, err := LoadReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.Endpoints) != 2 || rp.Endpoints[0].Name != "b" || rp.Endpoints[1].Name != "a" || len(rp.Server) != 2 || rp.Server[0].Endpoint != 1 {
		t.Errorf("replay endpoints %v, server %+v", rp.Endpoints, rp.Server)
	}
}

func equalUpdates(a, b servermetrics.Update) bool {
	return a.Endpoint == b.Endpoint && a.State == b.State && a.Note == b.Note && a.Reading.At.Equal(b.Reading.At) &&
		a.Reading.Kind == b.Reading.Kind && a.Reading.Running == b.Reading.Running && a.Reading.Waiting == b.Reading.Waiting &&
		a.Reading.KVCacheUsage == b.Reading.KVCacheUsage && a.Reading.PrefixCacheHitRate == b.Reading.PrefixCacheHitRate &&
		a.Reading.GenTPS == b.Reading.GenTPS && a.Reading.GenLive == b.Reading.GenLive && a.Reading.GenTokens == b.Reading.GenTokens &&
		a.Reading.GenSpan == b.Reading.GenSpan && a.Reading.PrefixHits == b.Reading.PrefixHits &&
		a.Reading.PrefixQueries == b.Reading.PrefixQueries && a.Reading.PrefixFromCounters == b.Reading.PrefixFromCounters
}
