package workload

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tokscope/config"
)

func writeTrace(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTraceBadLines: each bad line is refused with its file:line.
func TestTraceBadLines(t *testing.T) {
	good := `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}`
	for _, bad := range []string{
		`{"timestamp": 10, "input_length": 600}`,
		`{"timestamp": -1, "input_length": 600, "output_length": 5}`,
		`{"input_length": 600, "output_length": 5}`,
		`{"timestamp": 5, "input_length": 0, "output_length": 5}`,
		`{"timestamp": 5, "input_length": 60.5, "output_length": 5}`,
		`{"timestamp": 5, "input_length": 60, "output_length": 5, "hash_ids": [-3]}`,
		`{"timestamp": 5, "input_length": 60, "output_length": 5, "hash_ids": "x"}`,
		`not json`,
	} {
		p := writeTrace(t, good, "", bad)
		_, err := LoadTrace(p)
		var fe *FileError
		if !errors.As(err, &fe) || fe.Line != 3 || !strings.HasPrefix(err.Error(), p+":3: ") {
			t.Errorf("%s: %v, want %s:3", bad, err, p)
		}
	}
	p := writeTrace(t, `{"timestamp": 50, "input_length": 600, "output_length": 5}`, `{"timestamp": 40, "input_length": 600, "output_length": 5}`)
	if _, err := LoadTrace(p); err == nil || !strings.Contains(err.Error(), ":2: ") {
		t.Errorf("out of order: %v", err)
	}
}

// TestTraceUnknownKeys: a key a trace line may not have is refused at its line and column,
// with config's "did you mean" and the line under a caret, before its value is judged.
func TestTraceUnknownKeys(t *testing.T) {
	good := `{"timestamp": 0, "input_length": 600, "output_length": 5}`
	for _, c := range []struct{ line, at, msg string }{
		{`{"timestamp": 5, "input_lenght": 600, "output_length": 5}`, ":2:18: ", `unknown key "input_lenght"; did you mean "input_length"?`},
		{`  {"timestamp": 5, "hashids": [1], "input_length": 6, "output_length": 5}`, ":2:20: ", `unknown key "hashids"; did you mean "hash_ids"?`},
		{`{"timestamp": 5, "input_length": 6, "output_length": 5, "session": 3}`, ":2:57: ", `unknown key "session"; known keys: timestamp, input_length, output_length, hash_ids`},
		// Two bad keys: the first in the line is named, not the first in the alphabet.
		{`{"zone": 1, "timestamp": 5, "input_length": 6, "output_length": 5, "agent": 3}`, ":2:2: ", `unknown key "zone"`},
	} {
		p := writeTrace(t, good, c.line)
		_, err := LoadTrace(p)
		if err == nil || !strings.HasPrefix(err.Error(), p+c.at+c.msg) || !strings.Contains(err.Error(), "\n  2 | "+c.line+"\n") {
			t.Errorf("%s: %v, want %s%s%s and the line", c.line, err, p, c.at, c.msg)
		}
	}
}

// TestTracePrompts: every prompt has exactly input_length tokens, output_length is its output,
// and two requests share exactly the blocks of their leading run of equal hash ids.
func TestTracePrompts(t *testing.T) {
	p := writeTrace(t,
		`{"timestamp": 0, "input_length": 1300, "output_length": 7, "hash_ids": [10, 11, 12]}`,
		`{"timestamp": 250.5, "input_length": 1400, "output_length": 9, "hash_ids": [10, 11, 99]}`,
		`{"timestamp": 1000, "input_length": 700, "output_length": 3, "hash_ids": [10, 42]}`,
		`{"timestamp": 1000, "input_length": 90, "output_length": 3, "hash_ids": [77]}`)
	tr, err := LoadTrace(p)
	if err != nil {
		t.Fatal(err)
	}
	if s := tr.Schedule(2); s[1] != 125250*time.Microsecond || s[3] != 500*time.Millisecond {
		t.Errorf("schedule at 2×: %v", s)
	}
	w, err := New(config.Endpoint{Cache: config.CacheBust, MaxTokens: 16}, Options{RunID: "123456789"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.UseTrace(tr); err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(tr.Entries))
	for i, e := range tr.Entries {
		r := w.TraceRequest(uint64(i))
		texts[i] = r.Messages[0].Content
		n, _ := CountTokens(texts[i])
		if n != e.Input || r.PromptTokens != n || r.MaxTokens != e.Output || r.MinTokens != e.Output {
			t.Errorf("request %d: %d tokens (%d counted), want %d; max %d min %d want %d", i, n, r.PromptTokens, e.Input, r.MaxTokens, r.MinTokens, e.Output)
		}
		if !strings.HasPrefix(texts[i], "[tokscope 123456789-trace]") {
			t.Errorf("request %d lacks the run's tag: %.40q", i, texts[i])
		}
	}
	tag := len("[tokscope 123456789-trace]")
	common := func(a, b string) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	b10 := len(w.traceBlock(10))
	b11 := len(w.traceBlock(11))
	// 0 and 1 share [10, 11]: two whole blocks, and no more than a word beyond them.
	if c := common(texts[0], texts[1]); c < tag+b10+b11 || c > tag+b10+b11+24 {
		t.Errorf("requests 0 and 1 share %d bytes, want the tag and blocks 10, 11 (%d)", c, tag+b10+b11)
	}
	if c := common(texts[0], texts[2]); c < tag+b10 || c > tag+b10+24 {
		t.Errorf("requests 0 and 2 share %d bytes, want the tag and block 10 (%d)", c, tag+b10)
	}
	if c := common(texts[0], texts[3]); c > tag+24 {
		t.Errorf("requests 0 and 3 share %d bytes, want the tag only (%d)", c, tag)
	}
}

// traceBlock is hash id h's block text as the trace in use has it (for tests).
func (w *Workload) traceBlock(h int64) string {
	c, _ := loadCorpus()
	b := &traceBuilder{c: c, blocks: map[int64]string{}}
	return b.block(h)
}

// TestTraceShare: a shard's share of a trace is every N-th line, sent when the whole trace
// would send it (offsets from the whole trace's first timestamp, not the share's).
func TestTraceShare(t *testing.T) {
	tr := &Trace{Entries: []TraceEntry{{At: 1000 * time.Millisecond}, {At: 1500 * time.Millisecond},
		{At: 2000 * time.Millisecond}, {At: 4000 * time.Millisecond}, {At: 4100 * time.Millisecond}}}
	share := tr.Share(func(i int) bool { return i%2 == 1 })
	got := share.Schedule(2)
	want := []time.Duration{250 * time.Millisecond, 1500 * time.Millisecond}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("shard 1/2 of the trace: schedule %v, want %v", got, want)
	}
	if all := tr.Share(func(int) bool { return true }).Schedule(1); len(all) != 5 || all[0] != 0 || all[4] != 3100*time.Millisecond {
		t.Errorf("the whole trace's share: %v", all)
	}
}

// The head of a published Mooncake trace (testdata/traces/README.md) loads as it is: every
// line, its timestamps as the schedule, and every prompt its recorded length, all of them
// starting with the shared block 0 (the trace's system prompt).
func TestTracePublishedHead(t *testing.T) {
	tr, err := LoadTrace("testdata/traces/mooncake_conversation_head.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Entries) != 22 {
		t.Fatalf("%d entries, want the file's 22", len(tr.Entries))
	}
	if s := tr.Schedule(4); s[0] != 0 || s[10] != 750*time.Millisecond || s[21] != 1499750*time.Microsecond {
		t.Errorf("schedule at 4×: %v, %v, %v; want 0, 750ms, 1.49975s", s[0], s[10], s[21])
	}
	w, err := New(config.Endpoint{Cache: config.CacheBust, MaxTokens: 16}, Options{RunID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.UseTrace(tr); err != nil {
		t.Fatal(err)
	}
	block0 := w.traceBlock(0)
	for i, e := range tr.Entries {
		r := w.TraceRequest(uint64(i))
		if r.PromptTokens != e.Input || r.MaxTokens != e.Output {
			t.Errorf("line %d: %d prompt tokens, max %d; want %d, %d", e.Line, r.PromptTokens, r.MaxTokens, e.Input, e.Output)
		}
		if !strings.Contains(r.Messages[0].Content[:len("[tokscope 1-trace]")+len(block0)], block0) {
			t.Errorf("line %d does not start with block 0", e.Line)
		}
	}
}
