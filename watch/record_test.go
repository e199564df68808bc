package watch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestRecordReplay: a record of scrapes replays into the same rows as the fleet had live.
func TestRecordReplay(t *testing.T) {
	f, tg := oneTargetFleet(t, 10*time.Second)
	path := filepath.Join(t.TempDir(), "watch.jsonl")
	rec, err := NewRecorder(path, f.Targets(), f.Window(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range []Instant{
		instantOf(t, tg.Key(), "testdata/vllm-hist-1.txt", t0),
		{Target: tg.Key(), At: t0.Add(5 * time.Second), Error: "timeout"},
		instantOf(t, tg.Key(), "testdata/vllm-hist-2.txt", t0.Add(10*time.Second)),
	} {
		f.Observe(in)
		if err := rec.Write(in); err != nil {
			t.Fatal(i, err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rp, err := ReadReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	g := NewFleet(rp.Window)
	last := rp.Play(g)
	if !last.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("last scrape at %v", last)
	}
	live, _ := json.Marshal(f.Rows(last))
	replayed, _ := json.Marshal(g.Rows(last))
	if !reflect.DeepEqual(live, replayed) {
		t.Errorf("replay differs:\nlive     %s\nreplayed %s", live, replayed)
	}
	if !strings.Contains(string(replayed), `"gen_tps":345.6`) {
		t.Errorf("replayed rows: %s", replayed)
	}
}

func TestReplayErrors(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"run.jsonl":   `{"endpoint":"x","ttft_ms":3}` + "\n",
		"bad.jsonl":   `{"watch":{"version":1,"targets":[]}}` + "\n{oops\n",
		"empty.jsonl": "",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(src), 0o600)
		_, err := ReadReplay(p)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, err := ReadReplay(filepath.Join(dir, "bad.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl:2") {
		t.Errorf("bad line: %v", err)
	}
}
