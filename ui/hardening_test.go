package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"tokscope/probe"
)

// A panic inside the UI (here: the clock, called from Update) does not crash the process:
// Run leaves the alternate screen, then returns an error wrapping tea.ErrProgramPanic for
// main to print after the terminal is restored. Run in a child process, so that its screen
// output is captured rather than written into the test log.
func TestRunReturnsPanicAsError(t *testing.T) {
	if os.Getenv("TOKSCOPE_UI_PANIC_CHILD") == "1" {
		var calls atomic.Int64
		now := func() time.Time {
			if calls.Add(1) > 3 { // New's own calls pass; the first event's handling panics
				panic("clock exploded")
			}
			return t0
		}
		events := make(chan probe.Event, 1)
		events <- &probe.Status{Endpoint: 0, State: probe.StateIdle}
		err := Run(context.Background(), nil, testEndpoints(1), events, Options{Now: now})
		fmt.Fprintf(os.Stderr, "RUN RETURNED: %v\n", err)
		if errors.Is(err, tea.ErrProgramPanic) {
			os.Exit(0)
		}
		os.Exit(3)
	}
	// bubbletea needs a terminal: script(1) gives the child a pseudo-terminal and copies
	// everything the child writes to it (stdout and stderr alike) to our stdout.
	scriptPath, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) not installed (util-linux)")
	}
	cmd := exec.Command(scriptPath, "-qec", fmt.Sprintf("'%s' -test.run='^TestRunReturnsPanicAsError$'", os.Args[0]), "/dev/null")
	cmd.Env = append(os.Environ(), "TOKSCOPE_UI_PANIC_CHILD=1", "TERM=dumb")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("child: %v\nterminal: %q\nstderr: %s", err, stdout.String(), stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("Run did not return after a panic; stderr: %s", stderr.String())
	}
	if !bytes.Contains(stdout.Bytes(), []byte("RUN RETURNED: program was killed: program experienced a panic")) {
		t.Errorf("terminal: %q", stdout.String())
	}
	out := stdout.Bytes()
	enter, leave := bytes.Index(out, []byte("\x1b[?1049h")), bytes.LastIndex(out, []byte("\x1b[?1049l"))
	if enter < 0 || leave < enter {
		t.Errorf("the alternate screen was not left (enter at %d, leave at %d)", enter, leave)
	}
	if panicAt := bytes.Index(out, []byte("clock exploded")); panicAt >= 0 && panicAt < leave {
		t.Errorf("the panic was printed on the alternate screen, before the terminal was restored")
	}
}
