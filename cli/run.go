// Package cli is tokscope's command line: it parses the flags, loads the endpoints, builds
// the measuring engine (probe.Runner with its hooks), runs the UI or the headless summary,
// and owns the exit status (0 every request succeeded, 1 some failed, 2 usage or config
// error). The root package's main only calls Main.
//
// cli is the one package that imports every other (config, probe, stats, export, sweep,
// promexport, discover, calibrate, sim, ui); nothing imports cli. It holds no measuring,
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
func Main(version string, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "tokscope: internal error: %v\n%s", p, debug.Stack())
			code = ExitFailed
		}
	}()

	// Parse the command line.
	opts, err := parseFlags(args, stderr)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return ExitOK
	case err != nil:
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		return ExitUsage
	case opts.version:
		fmt.Fprintf(stdout, "tokscope %s\n", versionString(version))
		return ExitOK
	}
	opts.build = versionString(version)
	closeLog, err := setupLog(opts.logFile)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: --log: %v\n", err)
		return ExitUsage
	}
	defer closeLog()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// What measures nothing live needs no endpoints.
	switch {
	case opts.calibrate:
		return runCalibrate(ctx, stdout, stderr)
	case opts.replay != "":
		return runReplay(ctx, opts, stdout, stderr)
	}

	// Load the endpoints.
	cfg, cleanup, err := loadConfig(ctx, opts, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		return ExitUsage
	}
	defer cleanup()
	if opts.listModels {
		return listModels(ctx, cfg, stdout, stderr)
	}

	// Build the engine.
	eng, err := buildEngine(ctx, opts, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		return ExitUsage
	}
	defer eng.close() // on a panic too; closing twice is a no-op
	if opts.report != "" || !opts.noTUI {
		eng.report = newRunReport(opts, eng.endpoints, cfg)
	}

	// Run the UI or headless.
	switch {
	case !opts.noTUI:
		code = runTUI(ctx, eng, opts, stderr)
	case eng.sweep != nil:
		code = runSweepHeadless(ctx, eng, opts, stdout, stderr)
	default:
		code = runHeadless(ctx, eng, opts, stdout, stderr)
	}

	// The exit status: the run's, unless the record file could not be closed.
	return eng.finish(code, stderr)
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

// versionString is the version given at build time, else the module's.
func versionString(version string) string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
