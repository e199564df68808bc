// Package cli is tokscope's command line: it parses the flags, loads the endpoints, builds
// the run's wiring (the probe.Runner and the consumers of its events, wiring.go), runs the UI or the headless summary,
// and owns the exit status (0 every request succeeded, 1 some failed, 2 usage or config
// error, 3 an SLO target missed). The root package's main only calls Main.
//
// cli is the one package that imports every other (config, workload, probe, stats, export,
// sweep, promexport, servermetrics, discover, calibrate, sim, report, ui); nothing imports cli. It holds no measuring,
// statistics or output logic of its own: each lives in its package.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"tokscope/discover"
)

// Main runs tokscope with args (the command line without the program name) and returns the
// exit status. version is the build's version (from -ldflags "-X main.version=…"), "" to
// use the module version.
//
// A panic on Main's goroutine (the headless path, the summary) is reported as one line, then
// its stack, with exit status 1 — not Go's crash with status 2, which reads as a usage
// error. By then the deferred calls below have closed the record file and stopped the
// simulator. Panics inside the UI never get here: bubbletea recovers them, restores the
// terminal, and ui.Run returns tea.ErrProgramPanic.
func Main(version string, args []string, stdout, stderr io.Writer) int {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	return run(version, args, stdout, stderr, process{stdin: os.Stdin, localServers: discover.LocalCandidates,
		signals: signals, exit: os.Exit})
}

// process is what Main takes from the machine beyond the command line and the output
// streams, so that tests can give their own: the standard input (where discovery asks before
// monitoring what it found), the places discovery looks for local servers, the interrupt
// signals (SIGINT, SIGTERM; nil: none) and how to exit at once on the second one.
type process struct {
	stdin        *os.File
	localServers []discover.Candidate
	signals      <-chan os.Signal
	exit         func(int)
}

func run(version string, args []string, stdout, stderr io.Writer, proc process) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "tokscope: internal error: %v\n%s", p, debug.Stack())
			code = ExitFailed
		}
	}()

	// Parse the command line.
	opts, err := parseArgs(args, stdout)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return ExitOK
	case err != nil:
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		return ExitUsage
	case opts.version:
		fmt.Fprintf(stdout, "tokscope %s\n", versionString(version))
		return ExitOK
	case needsTerminal(opts) && !isTerminal(stdout) && opts.replay == "": // replay: runReplay, after its files
		// bubbletea would draw into the file or pipe and leave the screen blank.
		fmt.Fprintln(stderr, noTerminal+"for a summary on stdout add --no-tui and --requests N or --duration D")
		return ExitUsage
	}
	opts.build = versionString(version)
	closeLog, err := setupLog(opts.logFile)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: --log: %v\n", err)
		return ExitUsage
	}
	defer closeLog()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := watchInterrupts(proc.signals, cancel, proc.exit)
	defer interrupted.close()

	// Run the command (tokscope alone: measure).
	return opts.command.run(ctx, &runEnv{opts: opts, proc: proc, interrupted: interrupted, stdout: stdout, stderr: stderr})
}

// measure loads the endpoints, builds the run's wiring and runs the UI or headless; it returns
// the exit status.
func measure(ctx context.Context, opts *options, proc process, interrupted *interrupts, stdout, stderr io.Writer) (code int) {
	// Load the endpoints.
	cfg, cleanup, err := loadConfig(ctx, opts, proc, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		return ExitUsage
	}
	defer cleanup()
	if len(cfg.Endpoints) == 0 && cfg.Watch != nil { // a config with only watch: is the watch mode
		w := watchConfigMode(cfg.File)
		w.localServers = proc.localServers
		return runWatch(ctx, w, stdout, stderr)
	}
	if err := opts.checkObjectives(cfg); err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		return ExitUsage
	}
	if opts.listModels {
		return listModels(ctx, cfg, stdout, stderr)
	}

	// Build the run: the Runner and what its events feed.
	w, err := buildWiring(ctx, opts, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		return ExitUsage
	}
	defer w.close() // on a panic too; closing twice is a no-op
	if opts.report != "" || !opts.noTUI {
		w.report = newRunReport(opts, w.endpoints, cfg)
		w.report.search = w.search
	}

	// Run the UI or headless. Headless, the first Ctrl-C stops at once, counts what is in
	// flight as cut and still prints the summary (a sweep: the steps that ended).
	if opts.noTUI {
		interrupted.onFirst(func() { w.runner.Stop(0) })
	}
	switch {
	case !opts.noTUI:
		code = runTUI(ctx, w, opts, stderr)
	case w.search != nil:
		code = runCapacityHeadless(ctx, w, opts, stdout, stderr)
	case w.sweep != nil:
		code = runSweepHeadless(ctx, w, opts, stdout, stderr)
	default:
		code = runHeadless(ctx, w, opts, stdout, stderr)
	}

	// The exit status: the run's, unless the record file could not be closed.
	return w.finish(code, stderr)
}

// setupLog sends the standard logger to path, or nowhere: never to the terminal.
func setupLog(path string) (func(), error) {
	if path == "" {
		log.SetOutput(io.Discard)
		return func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	log.SetOutput(f)
	return func() { f.Close() }, nil
}

// noTerminal begins the refusal to draw the live view into a file or pipe; the advice that
// follows depends on the command.
const noTerminal = "tokscope: standard output is not a terminal, so the live view cannot be shown; "

// needsTerminal says whether the run shows the interactive UI.
func needsTerminal(o *options) bool {
	return o.command.tui && !o.noTUI && !o.calibrate && !o.listModels
}

// isTerminal says whether f is a terminal. A character device is not enough: /dev/null is
// one too.
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}

// versionString is the version given at build time, else what the Go toolchain stamped into
// the binary (see buildVersion).
func versionString(version string) string {
	if version != "" {
		return version
	}
	bi, _ := debug.ReadBuildInfo()
	return buildVersion(bi)
}

// buildVersion says what was built: the module's version (a release for `go install
// tokscope@v1.2.0`; for a build from a checkout, Go ≥ 1.24 derives a pseudo-version from the
// commit), then the VCS revision and commit time the toolchain stamps into a build from a
// checkout ("+dirty" when the tree had uncommitted changes). A build outside a repository or
// with -buildvcs=false has neither; the line says so instead of a bare "(devel)".
func buildVersion(bi *debug.BuildInfo) string {
	if bi == nil {
		return "(devel: no build information)"
	}
	setting := map[string]string{}
	for _, s := range bi.Settings {
		setting[s.Key] = s.Value
	}
	version := bi.Main.Version
	if version == "" || version == "(devel)" {
		version = "(devel)"
	}
	rev := setting["vcs.revision"]
	if rev == "" {
		if version == "(devel)" {
			return "(devel: built without version control information)"
		}
		return version
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if setting["vcs.modified"] == "true" {
		rev += "+dirty"
	}
	if t := setting["vcs.time"]; t != "" {
		rev += ", " + t
	}
	return version + " (commit " + rev + ")"
}
