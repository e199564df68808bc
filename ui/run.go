package ui

import (
	"context"
	"errors"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"tokscope/config"
	"tokscope/sample"
)

// Run shows the UI full-screen (alternate screen) until the user quits or ctx is done. When
// events is closed the UI stays up, marked "stopped", until the user quits. The terminal is
// restored on every path, panics included (bubbletea recovers them and Run returns the
// error). Run returns nil after a quit or the end of ctx.
//
// Run reads events on its own goroutines; it never closes it. It never writes logs to the
// terminal.
func Run(ctx context.Context, controls Controls, eps []config.Endpoint, events <-chan sample.Event, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // also unblocks a waitForEvent still in flight

	// Ask the terminal for its background before bubbletea owns the input: AdaptiveColor
	// needs the answer, and a late query would race with key reading.
	lipgloss.HasDarkBackground()

	m := New(controls, eps, events, opts)
	m.done = ctx.Done()
	// No bubbletea signal handler: the caller's ctx carries SIGINT and SIGTERM (main's
	// signal.NotifyContext). Both seeing one signal hung the exit: bubbletea's handler blocks
	// forever sending to an event loop that ctx had already ended.
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithoutSignalHandler())
	// The end of ctx is a quit, not tea.WithContext's kill: a kill closes the terminal
	// reader without waiting for its goroutine (a data race in cancelreader) and skips the
	// final render.
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
			p.Quit() // returns once Run is over, if the loop is gone
		case <-finished:
		}
	}()
	_, err := p.Run()
	if err != nil && ctx.Err() != nil && !errors.Is(err, tea.ErrProgramPanic) {
		return nil
	}
	return err
}
