package record

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/servermetrics"
)

// writeShard records samples (and one scrape at each sample's start) as shard s would.
func writeShard(t *testing.T, path string, s config.Shard, samples ...sample.Sample) {
	t.Helper()
	rec, err := NewRecorder(path, WithShard(s))
	if err != nil {
		t.Fatal(err)
	}
	for i := range samples {
		if err := rec.Write(&samples[i]); err != nil {
			t.Fatal(err)
		}
		u := servermetrics.Update{State: servermetrics.StateOK, Reading: servermetrics.Reading{At: samples[i].Start,
			Running: servermetrics.Value{V: float64(i), OK: true}}}
		if err := rec.WriteServer(samples[i].Endpoint, samples[i].Model, u); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
}

// A sharded run's lines say "shard": I and "shards": N, requests and scrapes (server and GPU) alike; an
// unsharded run's say neither (shard 0 is written, not left out as a zero).
func TestRecorderWritesTheShard(t *testing.T) {
	dir := t.TempDir()
	s := replaySample("a", time.Now(), time.Second)
	for _, c := range []struct {
		shard config.Shard
		want  string
	}{{config.Shard{Index: 0, Of: 2}, `"shard":0,"shards":2`}, {config.Shard{Index: 1, Of: 2}, `"shard":1,"shards":2`}, {config.Shard{}, ""}} {
		path := filepath.Join(dir, c.shard.Label()+"x.jsonl")
		writeShard(t, path, c.shard, s)
		rec, err := NewRecorder(path, WithShard(c.shard))
		if err != nil {
			t.Fatal(err)
		}
		gpu := servermetrics.Update{Source: servermetrics.SourceGPU, State: servermetrics.StateUnavailable, GPU: servermetrics.GPUReading{At: s.Start}}
		if err := errors.Join(rec.WriteServer(s.Endpoint, s.Model, gpu), rec.Close()); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 3 {
			t.Fatalf("%d lines", len(lines))
		}
		for _, l := range lines {
			if c.want == "" && strings.Contains(l, `"shard`) || c.want != "" && !strings.Contains(l, c.want) {
				t.Errorf("shard %v: line %s, want %q", c.shard, l, c.want)
			}
		}
		f, err := ReadFile(bytes.NewReader(b))
		if err != nil || len(f.Records) != 1 || len(f.Server) != 1 || len(f.GPU) != 1 {
			t.Fatalf("read back: %+v %v", f, err)
		}
		if got := f.Records[0].Shard; c.shard.On() != (got.Index != nil) || got.Index != nil && (*got.Index != c.shard.Index || got.Of != c.shard.Of) {
			t.Errorf("shard %v read back as %v/%d", c.shard, got.Index, got.Of)
		}
	}
}

// Several files merge into one run on the wall clock: the events in the order the requests
// finished whatever the order of the files, the scrapes of every shard kept in time order,
// endpoints matched by name and listed in the order of their first request, End the last
// finish, Shards counted.
func TestMergeOnTheWallClock(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	at := func(sec int, name string) sample.Sample {
		s := replaySample(name, t0.Add(time.Duration(sec)*time.Second), time.Second)
		s.Seq = uint64(sec + 1)
		return s
	}
	writeShard(t, filepath.Join(dir, "s0.jsonl"), config.Shard{Index: 0, Of: 3}, at(0, "a"), at(3, "a"), at(6, "b"))
	writeShard(t, filepath.Join(dir, "s1.jsonl"), config.Shard{Index: 1, Of: 3}, at(1, "b"), at(4, "a"))
	writeShard(t, filepath.Join(dir, "s2.jsonl"), config.Shard{Index: 2, Of: 3}, at(2, "a"), at(5, "a"))
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a record"), 0o600)
	os.Mkdir(filepath.Join(dir, "sub.jsonl"), 0o700)

	var first *Replay
	for _, args := range [][]string{
		{dir},
		{filepath.Join(dir, "s*.jsonl")},
		{filepath.Join(dir, "s2.jsonl"), filepath.Join(dir, "s0.jsonl"), filepath.Join(dir, "s1.jsonl")},
		{filepath.Join(dir, "s1.jsonl"), filepath.Join(dir, "s2.jsonl"), filepath.Join(dir, "s0.jsonl")}, // b's request first in file order
		{dir, filepath.Join(dir, "s1.jsonl")}, // a file named twice is read once
	} {
		rp, err := LoadReplay(args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if rp.Files != 3 || rp.Shards != 3 || rp.Warning != "" || !rp.End.Equal(t0.Add(7*time.Second)) {
			t.Errorf("%v: files %d shards %d end %v warning %q", args, rp.Files, rp.Shards, rp.End, rp.Warning)
		}
		var starts []int
		for _, ev := range rp.Events {
			d := ev.(*sample.Done)
			starts = append(starts, int(d.Sample.Start.Sub(t0)/time.Second))
			if name := rp.Endpoints[d.Endpoint].Name; name != d.Sample.Endpoint {
				t.Errorf("event of %s under endpoint %s", d.Sample.Endpoint, name)
			}
		}
		if !slices.Equal(starts, []int{0, 1, 2, 3, 4, 5, 6}) {
			t.Errorf("%v: requests in the order %v, want the wall clock's", args, starts)
		}
		for i := 1; i < len(rp.Server); i++ {
			if rp.Server[i].Reading.At.Before(rp.Server[i-1].Reading.At) {
				t.Errorf("%v: scrapes out of time order at %d", args, i)
			}
		}
		if len(rp.Server) != 7 {
			t.Errorf("%v: %d scrapes, want every shard's 7", args, len(rp.Server))
		}
		if first == nil {
			first = rp
		} else if !slices.Equal(names(first.Endpoints), names(rp.Endpoints)) {
			t.Errorf("%v: endpoints %v, then %v", args, names(first.Endpoints), names(rp.Endpoints))
		}
	}
	if got := names(first.Endpoints); !slices.Equal(got, []string{"a/model-a", "b/model-b"}) {
		t.Errorf("endpoints %v, want a and b matched by name across files", got)
	}
}

func names(eps []config.Endpoint) []string {
	var out []string
	for _, ep := range eps {
		out = append(out, ep.Name+"/"+ep.Model)
	}
	return out
}

// What looks wrong with the shards is a warning, not an error: a shard missing, one shard's
// records in two files, an empty file among others; an empty directory or a glob matching
// nothing is an error naming it.
func TestMergeWarnings(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	s := replaySample("a", t0, time.Second)
	writeShard(t, filepath.Join(dir, "s0.jsonl"), config.Shard{Index: 0, Of: 3}, s)
	writeShard(t, filepath.Join(dir, "s2.jsonl"), config.Shard{Index: 2, Of: 3}, s)
	writeShard(t, filepath.Join(dir, "s2-again.jsonl"), config.Shard{Index: 2, Of: 3}, s)
	os.WriteFile(filepath.Join(dir, "empty.jsonl"), nil, 0o600)
	rp, err := LoadReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no records of shard 1 of 3", "shard 2's records are in", "s2-again.jsonl", "empty.jsonl: no records; left out",
		"1 records repeat a request of their shard"} {
		if !strings.Contains(rp.Warning, want) {
			t.Errorf("warning %q does not say %q", rp.Warning, want)
		}
	}
	if len(rp.Events) != 3 || rp.Shards != 2 {
		t.Errorf("%d events of %d shards", len(rp.Events), rp.Shards)
	}
	emptyDir := t.TempDir()
	for _, arg := range []string{emptyDir, filepath.Join(dir, "nothing-*.jsonl")} {
		if _, err := LoadReplay(arg); err == nil || !strings.Contains(err.Error(), arg) {
			t.Errorf("%s: %v, want an error naming it", arg, err)
		}
	}
}

// Records of one name but two models (two runs appended to one file, or shards configured
// apart) stay two endpoints, named apart by their model.
func TestMergeKeepsModelsApart(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	x, y := replaySample("a", t0, time.Second), replaySample("a", t0.Add(time.Second), time.Second)
	y.Model = "other"
	rp := replayRecords([]Record{FromSample(&x), FromSample(&y), FromSample(&x)})
	if got := names(rp.Endpoints); !slices.Equal(got, []string{"a (model-a)/model-a", "a (other)/other"}) {
		t.Errorf("endpoints %v", got)
	}
	var eps []sample.EndpointIndex
	for _, ev := range rp.Events {
		eps = append(eps, ev.(*sample.Done).Endpoint)
	}
	if !slices.Equal(eps, []sample.EndpointIndex{0, 1, 0}) {
		t.Errorf("events by endpoint %v", eps)
	}
}

// A GPU scrape joins the endpoint of its name and model as a server scrape does, also when
// records of that name under two models were named apart.
func TestMergeGPUScrapesJoinTheirEndpoint(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	x, y := replaySample("a", t0, time.Second), replaySample("a", t0.Add(time.Second), time.Second)
	y.Model = "other"
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	gpu := servermetrics.Update{Source: servermetrics.SourceGPU, State: servermetrics.StateOK,
		GPU: servermetrics.GPUReading{At: t0.Add(2 * time.Second), GPUs: 1, PowerW: servermetrics.Value{V: 300, OK: true}}}
	for _, err := range []error{rec.Write(&x), rec.Write(&y), rec.WriteServer("a", "other", gpu), rec.Close()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	rp, err := LoadReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(rp.Endpoints); !slices.Equal(got, []string{"a (model-a)/model-a", "a (other)/other"}) {
		t.Fatalf("endpoints %v", got)
	}
	if rp.Endpoints[0].GPUMetrics != "" || rp.Endpoints[1].GPUMetrics != RecordedGPU {
		t.Errorf("GPU exporters %q, %q: want only a (other)'s", rp.Endpoints[0].GPUMetrics, rp.Endpoints[1].GPUMetrics)
	}
	if len(rp.Server) != 1 || rp.Server[0].Endpoint != 1 || rp.Server[0].Source != servermetrics.SourceGPU {
		t.Errorf("scrapes %+v", rp.Server)
	}
}
