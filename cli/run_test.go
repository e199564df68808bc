package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"tokscope/record"
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

// wholeRecords reads a record file and fails unless every line is a complete record or server
// scrape; it returns the records of requests.
func wholeRecords(t *testing.T, path string) []record.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("%s does not end with a newline: a torn last line", path)
	}
	f, err := record.ReadFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if n := len(f.Records) + len(f.Server); n != bytes.Count(b, []byte("\n")) {
		t.Errorf("%s: %d records and scrapes for %d lines", path, n, bytes.Count(b, []byte("\n")))
	}
	return f.Records
}

// buildVersion: a released module's version, else the revision and time stamped from the
// checkout, else why there is none.
func TestBuildVersion(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	const rev = "0a39ca6e1f2d3c4b5a6978877665544332211000"
	for _, c := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261120140311-0a39ca6e1f2d"}, Settings: vcs("vcs.revision", rev, "vcs.time", "2026-11-20T14:03:11Z", "vcs.modified", "false")},
			"v0.0.0-20261120140311-0a39ca6e1f2d (commit 0a39ca6e1f2d, 2026-11-20T14:03:11Z)"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", rev, "vcs.time", "2026-11-20T14:03:11Z", "vcs.modified", "true")},
			"(devel) (commit 0a39ca6e1f2d+dirty, 2026-11-20T14:03:11Z)"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel: built without version control information)"},
		{nil, "(devel: no build information)"},
	} {
		if got := buildVersion(c.bi); got != c.want {
			t.Errorf("buildVersion(%+v) = %q, want %q", c.bi, got, c.want)
		}
	}
	if got := versionString("v2.0.0-rc1"); got != "v2.0.0-rc1" {
		t.Errorf("versionString with -X main.version = %q", got)
	}
}
