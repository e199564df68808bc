package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// runGuarded is run with a last line of defence: a panic on the main goroutine (the headless
// path, the summary) is reported as one line, then its stack, with exit status 1 — not Go's
// crash with status 2, which reads as a usage error. By then run's deferred calls have closed
// the record file and stopped the simulator. Panics inside the UI never get here: bubbletea
// recovers them, restores the terminal, and ui.Run returns tea.ErrProgramPanic.
func runGuarded(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "tokscope: internal error: %v\n%s", p, debug.Stack())
			code = exitFailed
		}
	}()
	return run(args, stdout, stderr)
}
