package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"tokscope/cli/clitest"
	"tokscope/sim"
	"tokscope/stats"
)

// A panic in the headless path (here: the summary's writer) is reported as one line on
// stderr with exit status 1, after the record file was closed, instead of a crash whose
// status (2) reads as a usage error.
func TestHeadlessPanicReported(t *testing.T) {
	url := clitest.BusySim(t)
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
	if recs := clitest.WholeRecords(t, path); len(recs) < 5 {
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

// A headless run whose requests failed says so on stderr whatever the output format: how
// many of how many, each endpoint's kinds, as the JSON summary counts them; a run without a
// failure says nothing there.
func TestHeadlessFailedNote(t *testing.T) {
	s, err := sim.Start(sim.Options{}, sim.Profile{Name: "bad", Model: "mb", TTFT: 5 * time.Millisecond, TokensPerSecond: 2000,
		MaxTokens: 4, Rate500: 1}, sim.Profile{Name: "good", Model: "mg", TTFT: 5 * time.Millisecond, TokensPerSecond: 2000, MaxTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		if args[0] != "--sweep" {
			args = append([]string{"--requests", "3"}, args...)
		}
		args = append([]string{"--no-tui", "-o", "json", "-i", "0s", "--warmup", "0", "--max-tokens", "4", "--server-metrics", "off"}, args...)
		return Main("", args, &stdout, &stderr), stdout.String(), stderr.String()
	}
	code, out, errOut := run("-u", s.BaseURL("bad"), "-m", "mb", "-u", s.BaseURL("good"), "-m", "mg")
	var sum struct {
		Endpoints []struct {
			Name       string         `json:"name"`
			Errors     int            `json:"errors"`
			ErrorKinds map[string]int `json:"error_kinds"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if code != ExitFailed || len(sum.Endpoints) != 2 {
		t.Fatalf("exit %d, %d endpoints: %s", code, len(sum.Endpoints), errOut)
	}
	want := fmt.Sprintf("tokscope: 3 of 6 requests failed (mb: http_500 ×%d); exit status 1\n", sum.Endpoints[0].ErrorKinds["http_500"])
	if sum.Endpoints[0].Name != "mb" || sum.Endpoints[0].Errors != 3 || !strings.HasSuffix(errOut, want) {
		t.Errorf("stderr %q, want it to end %q (summary %+v)", errOut, want, sum.Endpoints)
	}
	// A sweep says it too, with the count its table shows.
	code, out, errOut = run("--sweep", "1", "--step-duration", "300ms", "-u", s.BaseURL("bad"), "-m", "mb")
	var steps struct {
		Steps []struct {
			Errors int `json:"errors"`
		} `json:"sweep"`
	}
	if err := json.Unmarshal([]byte(out), &steps); err != nil || len(steps.Steps) != 1 {
		t.Fatalf("sweep: %v: %s", err, out)
	}
	if want := fmt.Sprintf("tokscope: %d requests of the steps failed (the table's errors); exit status 1\n", steps.Steps[0].Errors); code != ExitFailed || steps.Steps[0].Errors == 0 || !strings.HasSuffix(errOut, want) {
		t.Errorf("sweep: exit %d, stderr %q, want it to end %q", code, errOut, want)
	}
	if code, _, errOut := run("-u", s.BaseURL("good"), "-m", "mg"); code != ExitOK || strings.Contains(errOut, "failed") {
		t.Errorf("a run without failures: exit %d, stderr %q", code, errOut)
	}
}

// The note counts truncated streams as failed, as the exit status does, and names only the
// endpoints that failed.
func TestFailedNoteTruncated(t *testing.T) {
	snap := stats.Snapshot{Endpoints: []stats.EndpointStats{
		{Name: "a", Requests: 5, OK: 5},
		{Name: "b", Requests: 4, OK: 1, Errors: 2, Truncated: 1, ErrorKinds: map[string]int{"stall": 1, "http_500": 1}},
	}}
	want := "tokscope: 3 of 9 requests failed (b: http_500 ×1, stall ×1, truncated ×1); exit status 1"
	if got := failedNote(&snap); got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
