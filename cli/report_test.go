package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tokscope/cli/clitest"
	"tokscope/stats"
)

// --report is refused, one line naming it, where no headless run ends to write it.
func TestReportFlagErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args    []string
		accepts string
	}{
		{[]string{"--demo", "--report", "run.html"}, "needs --no-tui"},
		{[]string{"--replay", "run.jsonl", "--report", "run.html"}, "needs --no-tui"},
		{[]string{"--demo", "--sweep", "1,2", "--report", "run.html"}, "needs --no-tui"},
		{[]string{"--demo", "--no-tui", "--duration", "1s", "--report="}, "must be a file name"},
		{[]string{"--demo", "--no-tui", "--duration", "1s", "--report", filepath.Join(dir, "missing", "run.html")}, "does not exist"},
		{[]string{"--demo", "--no-tui", "--duration", "1s", "--report", dir}, "is a directory"},
		{[]string{"--demo", "--no-tui", "--list-models", "--report", "run.html"}, "exclude each other"},
	}
	for _, c := range cases {
		oneLineNaming(t, c.args, "--report", c.accepts)
	}
}

// A headless run, a sweep and a replay each write their report when they end; the sweep's
// has its trade-off charts and step table, the replay's says what it replayed and shows the
// server's own metrics as the live run's did.
func TestReportWrittenWhenTheRunEnds(t *testing.T) {
	url := clitest.BusySim(t)
	dir := t.TempDir()
	rec, live, sw, replay := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "live.html"), filepath.Join(dir, "sweep.html"), filepath.Join(dir, "replay.html")
	run := func(args ...string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := Main("v9.9.9", args, &out, &errOut); code != ExitOK {
			t.Fatalf("%q: exit %d: %s", args, code, errOut.String())
		}
	}
	run("--no-tui", "-o", "json", "--requests", "6", "-i", "0s", "-u", url, "-m", "m", "--record", rec, "--report", live)
	run("--no-tui", "-o", "csv", "--sweep", "1,2", "--step-duration", "700ms", "-u", url, "-m", "m", "--report", sw)
	run("replay", rec, "--no-tui", "--report", replay)
	for path, want := range map[string][]string{
		live: {"tokscope v9.9.9", "requests 6  ok 6", `id="ts-throughput"`, "--requests 6", `<section id="server">`},
		sw:   {`<section id="sweep">`, `id="sweep-tradeoff"`, `<table class="steps">`},
		// The record keeps the server's scrapes: the replay's report has the server section.
		replay: {"requests 6  ok 6", "replay of", rec, `<section id="server">`},
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q", filepath.Base(path), w)
			}
		}
	}
}

// --report FILE given relative: the run says on stderr the absolute path it wrote, and the
// file is there; stdout keeps the summary alone.
func TestReportSaysWhereItWrote(t *testing.T) {
	url := clitest.BusySim(t)
	dir := t.TempDir()
	t.Chdir(dir)
	var out, errOut bytes.Buffer
	args := []string{"--no-tui", "-o", "json", "--requests", "1", "-u", url, "-m", "m", "--server-metrics", "off", "--report", "run.html"}
	if code := Main("", args, &out, &errOut); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := filepath.Join(dir, "run.html")
	if !strings.Contains(errOut.String(), "tokscope: report written to "+want+"\n") {
		t.Errorf("stderr %q does not name %s", errOut.String(), want)
	}
	if _, err := os.Stat(want); err != nil {
		t.Error(err)
	}
	var summary map[string]any
	if err := json.Unmarshal(out.Bytes(), &summary); err != nil {
		t.Errorf("stdout is not the JSON summary alone: %v", err)
	}
}

// The TUI's w key (Save without --report) writes into the directory tokscope started in and
// returns its absolute path, even after the working directory changed.
func TestReportKeyWritesAnAbsolutePath(t *testing.T) {
	start := t.TempDir()
	t.Chdir(start)
	o, err := parseFlags([]string{"--demo"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	r := newRunReport(o, nil, nil)
	os.Chdir(t.TempDir()) // t.Chdir restores the original at the end
	path, err := r.Save(stats.Snapshot{}, nil)()
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(path) || filepath.Dir(path) != start {
		t.Errorf("w wrote %s, want an absolute path in %s", path, start)
	}
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
	// A second w (within the same second or not) writes a file of its own.
	again, err := r.Save(stats.Snapshot{}, nil)()
	if err != nil || again == path || filepath.Dir(again) != start {
		t.Errorf("second w wrote %s (%v), the first %s", again, err, path)
	}
}

// A record written before the sentinels went (scrape lines with "stream":
// 9223372036854775807, a zero "at", a span of 0; request lines with "" and 0 where they had
// nothing) replays to the same summary as the record written now.
func TestReplayOfOldRecordsGivesTheSameSummary(t *testing.T) {
	url := clitest.BusySim(t)
	dir := t.TempDir()
	rec, old := filepath.Join(dir, "now.jsonl"), filepath.Join(dir, "old.jsonl")
	var out, errOut bytes.Buffer
	if code := Main("", []string{"--no-tui", "-o", "json", "--requests", "4", "--turns", "2", "-i", "0s", "-u", url, "-m", "m",
		"--record", rec}, &out, &errOut); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var older bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		defaults := map[string]any{"response_id": "", "token_source": "", "finish_reason": "", "error_kind": "", "error_message": "",
			"reasoning_tokens": 0, "prompt_tokens": 0, "http_status": 0, "retry_after_ms": 0}
		if m["type"] != nil {
			defaults = map[string]any{"stream": json.Number("9223372036854775807"), "at": "0001-01-01T00:00:00Z", "gen_span_ms": 0,
				"prefix_hits": 0, "prefix_queries": 0}
		}
		for k, v := range defaults {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		nb, _ := json.Marshal(m)
		older.Write(append(nb, '\n'))
	}
	if !strings.Contains(older.String(), `"error_kind":""`) || !strings.Contains(older.String(), `"retry_after_ms":0`) {
		t.Fatalf("the old-style record holds no sentinel:\n%.2000s", older.String())
	}
	if err := os.WriteFile(old, older.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	replay := func(path string) string {
		var out, errOut bytes.Buffer
		if code := Main("", []string{"--replay", path, "--no-tui", "-o", "json"}, &out, &errOut); code != ExitOK {
			t.Fatalf("replay %s: exit %d: %s", path, code, errOut.String())
		}
		return out.String()
	}
	if a, b := replay(rec), replay(old); a != b {
		t.Errorf("the old record's summary\n%s\ndiffers from the new one's\n%s", b, a)
	}
}
