package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tokscope/export"
	"tokscope/sim"
)

// A panic in the headless path (here: the summary's writer) is reported as one line on
// stderr with exit status 1, after the record file was closed, instead of a crash whose
// status (2) reads as a usage error.
func TestHeadlessPanicReported(t *testing.T) {
	url := busySim(t)
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	var stderr bytes.Buffer
	code := Main("", []string{"--no-tui", "-o", "json", "--requests", "5", "-i", "0s", "--record", path, "-u", url, "-m", "m"},
		panicWriter{}, &stderr)
	if code != ExitFailed {
		t.Errorf("exit %d, want %d", code, ExitFailed)
	}
	first, _, _ := strings.Cut(stderr.String(), "\n")
	if !strings.HasPrefix(first, "tokscope: internal error: ") || !strings.Contains(first, "summary writer exploded") {
		t.Errorf("first stderr line %q", first)
	}
	if recs := wholeRecords(t, path); len(recs) < 5 {
		t.Errorf("%d records", len(recs))
	}
	if fdOpen(t, path) {
		t.Error("the record file is still open after the panic")
	}
}

type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic(errors.New("summary writer exploded")) }

// fdOpen reports whether this process holds a descriptor on path.
func fdOpen(t *testing.T, path string) bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}

// busySim is a fast endpoint, so that records pile up quickly.
func busySim(t *testing.T) string {
	t.Helper()
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "busy", Model: "m", TTFT: 5 * time.Millisecond,
		TokensPerSecond: 2000, TokensPerChunk: 1, MaxTokens: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv.BaseURL("busy")
}

// wholeRecords reads a record file and fails unless every line is a complete record.
func wholeRecords(t *testing.T, path string) []export.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("%s does not end with a newline: a torn last line", path)
	}
	recs, err := export.ReadRecords(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(recs) != bytes.Count(b, []byte("\n")) {
		t.Errorf("%s: %d records for %d lines", path, len(recs), bytes.Count(b, []byte("\n")))
	}
	return recs
}
