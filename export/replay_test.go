package export

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/probe"
	"tokscope/stats"
)

// A run replayed from its --record file summarises exactly as the live run did.
func TestReplayedRunSummarisesIdentically(t *testing.T) {
	start := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	var samples []probe.Sample
	for i := range 50 {
		s := fullSample()
		s.Start = start.Add(time.Duration(i) * 500 * time.Millisecond)
		s.Seq = uint64(i + 1)
		s.FirstToken += time.Duration(i) * time.Millisecond
		s.FirstEvent, s.Headers = s.FirstEvent.Round(time.Microsecond), s.Headers.Round(time.Microsecond)
		s.Wrote, s.Connect, s.Queue = s.Wrote.Round(time.Microsecond), s.Connect.Round(time.Microsecond), s.Queue.Round(time.Microsecond)
		s.Chunks[0].At = s.FirstEvent
		if i%7 == 0 {
			s = errorSample()
			s.Warmup, s.Endpoint = false, "local"
		}
		samples = append(samples, s)
	}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	eps := []config.Endpoint{{Name: "local", Model: "qwen3", BaseURL: "http://127.0.0.1:8080/v1"}}
	live := stats.New(eps)
	for i := range samples {
		live.Add(&samples[i])
		if err := rec.Write(&samples[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := ReadRecords(f)
	if err != nil {
		t.Fatal(err)
	}
	replay := stats.New(eps)
	for _, r := range recs {
		s := r.Sample()
		replay.Add(&s)
	}
	now := start.Add(time.Minute)
	var a, b bytes.Buffer
	if err := WriteJSON(&a, live.Snapshot(now)); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&b, replay.Snapshot(now)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("replay differs:\nlive   %s\nreplay %s", a.Bytes(), b.Bytes())
	}
	if !bytes.Contains(a.Bytes(), []byte(`"requests":50,"ok":42,"errors":8`)) {
		t.Errorf("unexpected counts: %s", a.Bytes())
	}
}
