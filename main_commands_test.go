package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tokscope/sim"
)

func TestListModels(t *testing.T) {
	t.Parallel()
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "a", Model: "model-a", TokensPerSecond: 100, TokensPerChunk: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// Listing is how one finds the model to name: the base URLs are the words.
	r := runBinary(t, nil, "models", srv.BaseURL("a"))
	if want := srv.BaseURL("a") + ":\n  model-a\n"; r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Fatalf("models URL: exit %d stdout %q (want %q) stderr %q", r.code, r.stdout, want, r.stderr)
	}
	r = runBinary(t, nil, "models", srv.URL()+"/nope/v1", srv.BaseURL("a"))
	if r.code != 1 || !strings.Contains(r.stderr, "404") || !strings.Contains(r.stdout, "  model-a\n") {
		t.Fatalf("an unknown path beside a good one: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	// The old spelling still works, and says once how it is spelled now.
	r = runBinary(t, nil, "--list-models", "-u", srv.BaseURL("a"), "-m", "model-a")
	if r.code != 0 || !strings.Contains(r.stdout, "  model-a\n") || r.stderr != "tokscope: note: --list-models is now spelled tokscope models [URL…] (the old spelling still works)\n" {
		t.Fatalf("--list-models: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	// A run still needs a model.
	if r = runBinary(t, nil, "--no-tui", "--requests", "1", "-u", srv.BaseURL("a")); r.code != 2 || !strings.Contains(r.stderr, "has no --model") {
		t.Fatalf("a run without --model: exit %d stderr %q", r.code, r.stderr)
	}
}

// Discovery (no config file, no --url) is tested in package cli with injected candidates:
// a test of the built binary would scan this machine's real ports 8080, 8000, 11434, 1234 and
// 30000 and fail whenever something listens there.

// `tokscope --demo > out.txt`: the live view needs a terminal; with stdout in a file it would
// write escape codes there and show nothing. One line on stderr naming --no-tui, exit 2,
// nothing in the file.
func TestTUIRefusedWithoutTerminal(t *testing.T) {
	t.Parallel()
	r := runBinary(t, nil, "--demo")
	if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "--no-tui") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing, one line naming --no-tui", r.code, r.stdout, r.stderr)
	}
}

// --version names what was built: the VCS revision and commit time the toolchain stamped
// into the binary (read back with `go version -m`), not "(devel)". The binary is built with
// -buildvcs=true, since a machine's GOFLAGS may turn stamping off.
func TestVersionNamesTheBuild(t *testing.T) {
	t.Parallel()
	bin := buildWith(t, "-buildvcs=true")
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	settings := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "build" {
			if k, v, ok := strings.Cut(f[1], "="); ok {
				settings[k] = v
			}
		}
	}
	got := versionOf(t, bin)
	rev := settings["vcs.revision"]
	if rev == "" {
		// A tree git does not see as a repository (an unpacked archive; a git worktree, whose
		// .git is a file the Go toolchain does not follow): the line must say why.
		if !strings.Contains(got, "without version control") {
			t.Fatalf("--version = %q for a build without VCS information", got)
		}
		t.Logf("built without VCS information: --version = %q", got)
	} else {
		for _, want := range []string{rev[:12], settings["vcs.time"]} {
			if !strings.Contains(got, want) {
				t.Errorf("--version = %q, want it to hold %q (go version -m: %v)", got, want, settings)
			}
		}
		if dirty := strings.Contains(got, "+dirty"); dirty != (settings["vcs.modified"] == "true") {
			t.Errorf("--version = %q, vcs.modified = %s", got, settings["vcs.modified"])
		}
	}
	if got := versionOf(t, buildWith(t, "-ldflags=-X main.version=v9.8.7")); got != "tokscope v9.8.7\n" {
		t.Errorf("with -X main.version: --version = %q", got)
	}
}

// buildWith builds tokscope with extra go build flags, with CGO_ENABLED=0 as the Dockerfile
// does (stamping does not depend on it): its packages are then the ones `CGO_ENABLED=0 go vet`
// (scripts/test.sh) and deploy's static build compile, and only the link is left to do here.
func buildWith(t *testing.T, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tokscope")
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, ".")...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", flags, err, out)
	}
	return bin
}

// versionOf is what bin --version prints.
func versionOf(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestMetricsListenValidated(t *testing.T) {
	t.Parallel()
	r := runBinary(t, nil, "--demo", "--no-tui", "--requests", "1", "--metrics-listen", "127.0.0.1:notaport")
	if r.code != 2 || !strings.Contains(r.stderr, "--metrics-listen") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	start := time.Now()
	r = runBinary(t, nil, "--demo", "--no-tui", "--requests", "1", "-i", "0s", "--metrics-listen", "0", "-o", "json")
	// flaky-cloud fails by design now and then: exit 1 is a valid outcome here.
	if r.code > 1 || !strings.Contains(r.stderr, "http://127.0.0.1:") {
		t.Fatalf("exit %d stderr %q (after %s)", r.code, r.stderr, time.Since(start))
	}
}
