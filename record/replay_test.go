package record

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/export"
	"tokscope/sample"
	"tokscope/stats"
)

// A run replayed from its --record file summarises exactly as the live run did.
// replayRecords turns the records of one file into the events of the run they recorded, as
// LoadReplay does with the file it read.
func replayRecords(recs []Record) *Replay {
	return merge([]source{{file: File{Records: recs}}})
}

func TestReplayedRunSummarisesIdentically(t *testing.T) {
	start := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	var samples []sample.Sample
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
	recs := readBack(t, path)
	replay := stats.New(eps)
	for _, r := range recs {
		s := r.Sample()
		replay.Add(&s)
	}
	now := start.Add(time.Minute)
	var a, b bytes.Buffer
	if err := export.WriteJSON(&a, live.Snapshot(now)); err != nil {
		t.Fatal(err)
	}
	if err := export.WriteJSON(&b, replay.Snapshot(now)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("replay differs:\nlive   %s\nreplay %s", a.Bytes(), b.Bytes())
	}
	for _, want := range []string{`"requests":50,"ok":42,"errors":8`, `"cached_tokens":{"p50":16,`, `"prompt_tokens":{"p50":33,`,
		`"output_target":{"requests":42,"reached":42}`, `"cache":"mixed"`, `"e2e_ms":{"p50":152.2,`, `"prefill_tps":{"p50":`,
		`"last_error":"rate limited: \"slow down\" <&>"`} {
		if !bytes.Contains(a.Bytes(), []byte(want)) {
			t.Errorf("live summary lacks %s: %s", want, a.Bytes())
		}
	}
}

// replaySample is an ok request of endpoint name that started at start and ended after end.
func replaySample(name string, start time.Time, end time.Duration) sample.Sample {
	s := fullSample()
	s.Endpoint, s.Model, s.Start, s.End = name, "model-"+name, start, end
	return s
}

// The records become the run's events: endpoints in order of first appearance (an
// interactive request names its endpoint but is no event), the end of the last request, and
// Failed only for a counted request that did not succeed.
func TestReplayRecords(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	warmupError := errorSample() // a warm-up: never a failure
	warmupError.Endpoint, warmupError.Start = "b", t0
	interactive := replaySample("c", t0.Add(time.Hour), time.Second) // later than every other: must not set End
	interactive.Stream, interactive.Outcome = 3, sample.OutcomeError
	samples := []sample.Sample{
		replaySample("a", t0, 2*time.Second),
		warmupError,
		interactive,
		replaySample("b", t0.Add(time.Second), 4*time.Second),
		replaySample("a", t0.Add(2*time.Second), time.Second),
	}
	samples[0].API, samples[4].API = "ollama", "chat" // a's first record names its API
	var recs []Record
	for i := range samples {
		recs = append(recs, FromSample(&samples[i]))
	}
	rp := replayRecords(recs)
	var names []string
	for _, ep := range rp.Endpoints {
		names = append(names, ep.Name+"/"+ep.Model)
	}
	if want := []string{"a/model-a", "b/", "c/model-c"}; !slices.Equal(names, want) {
		t.Errorf("endpoints %v, want %v", names, want)
	}
	// A replayed endpoint speaks its records' API: a's first record's; b's first record
	// (errorSample, as from before records named one) says nothing, its next one anthropic.
	for i, want := range []string{"ollama", "anthropic", "anthropic"} {
		if got := rp.Endpoints[i].API; got != want {
			t.Errorf("endpoint %s: API %q, want %q", rp.Endpoints[i].Name, got, want)
		}
	}
	var got []string
	for _, ev := range rp.Events {
		d := ev.(*sample.Done)
		got = append(got, fmt.Sprintf("%d:%s", d.Endpoint, d.Sample.Endpoint))
	}
	if want := []string{"0:a", "1:b", "1:b", "0:a"}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	if want := t0.Add(5 * time.Second); !rp.End.Equal(want) {
		t.Errorf("end %v, want %v", rp.End, want)
	}
	if rp.Failed || rp.Warning != "" {
		t.Errorf("failed %v, warning %q: a warm-up and an interactive error fail nothing", rp.Failed, rp.Warning)
	}

	failing := replaySample("a", t0, time.Second)
	failing.Outcome = sample.OutcomeTruncated
	if rp := replayRecords(append(recs, FromSample(&failing))); !rp.Failed {
		t.Error("a truncated counted request does not fail the replay")
	}
}

// finishedAt falls back from the end to the last instant the request reached.
func TestFinishedAt(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	a := sample.Absent
	for _, tc := range []struct {
		end, lastToken, firstEvent, headers time.Duration
		want                                time.Duration
	}{
		{4 * time.Second, 3 * time.Second, 2 * time.Second, time.Second, 4 * time.Second},
		{a, 3 * time.Second, 2 * time.Second, time.Second, 3 * time.Second},
		{a, a, 2 * time.Second, time.Second, 2 * time.Second},
		{a, a, a, time.Second, time.Second},
		{a, a, a, a, 0},
		{0, a, a, a, 0},
	} {
		s := sample.Sample{Start: t0, End: tc.end, LastToken: tc.lastToken, FirstEvent: tc.firstEvent, Headers: tc.headers}
		if got := finishedAt(&s); !got.Equal(t0.Add(tc.want)) {
			t.Errorf("%+v: %v after t0, want %v", tc, got.Sub(t0), tc.want)
		}
	}
}

// LoadReplay reads a file: a torn last line leaves the whole records and a warning;
// a missing, empty or corrupt file is an error that names the file (and the line).
func TestLoadReplay(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	path := filepath.Join(dir, "run.jsonl")
	rec, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s := replaySample("a", t0.Add(time.Duration(i)*time.Second), time.Second)
		if err := rec.Write(&s); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := LoadReplay(path)
	if err != nil || len(rp.Events) != 3 || rp.Warning != "" || !rp.End.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("whole file: %+v, %v", rp, err)
	}

	torn := filepath.Join(dir, "torn.jsonl")
	os.WriteFile(torn, whole[:len(whole)-20], 0o600)
	rp, err = LoadReplay(torn)
	if err != nil || len(rp.Events) != 2 {
		t.Fatalf("torn file: %+v, %v", rp, err)
	}
	for _, want := range []string{torn, "line 3", "truncated", "using the 2 whole records"} {
		if !strings.Contains(rp.Warning, want) {
			t.Errorf("warning %q does not say %q", rp.Warning, want)
		}
	}

	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o600)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, append(append([]byte{}, whole...), "not json\n"...), 0o600)
	for _, tc := range []struct{ path, says string }{
		{filepath.Join(dir, "nope.jsonl"), "no such file"},
		{empty, "no records"},
		{bad, "line 4"},
	} {
		rp, err := LoadReplay(tc.path)
		if err == nil || rp != nil || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %+v, %v; want an error naming the file and %q", tc.path, rp, err, tc.says)
		}
	}
}
