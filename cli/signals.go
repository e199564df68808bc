package cli

import (
	"context"
	"os"
	"sync"
)

// ExitInterrupted is the exit status after a second Ctrl-C (SIGINT or SIGTERM), which exits at
// once without a summary: 128 + SIGINT, as a shell reports a process killed by it. The first
// one ends a run the way its flags would, with the usual statuses.
const ExitInterrupted = 130

// interrupts turns SIGINT and SIGTERM into an end of the run. The first one calls the
// function given to onFirst — a headless run stops at once, counts what is in flight as
// cut, and still prints its summary — or, without one, cancels the run's context (the TUI,
// a replay, discovery). A second one exits at once.
//
// Ownership: its goroutine reads signals until close; onFirst may be called from any
// goroutine.
type interrupts struct {
	mu      sync.Mutex
	first   func()
	cancel  context.CancelFunc
	exit    func(int)
	signals <-chan os.Signal
	done    chan struct{}
	stopped chan struct{}
}

func watchInterrupts(signals <-chan os.Signal, cancel context.CancelFunc, exit func(int)) *interrupts {
	in := &interrupts{cancel: cancel, exit: exit, signals: signals, done: make(chan struct{}), stopped: make(chan struct{})}
	go in.loop()
	return in
}

func (in *interrupts) loop() {
	defer close(in.stopped)
	seen := 0
	for {
		select {
		case <-in.signals:
		case <-in.done:
			return
		}
		if seen++; seen > 1 {
			in.exit(ExitInterrupted)
			return
		}
		in.mu.Lock()
		first := in.first
		in.mu.Unlock()
		if first != nil {
			first()
		} else {
			in.cancel()
		}
	}
}

// onFirst makes f what the first signal does.
func (in *interrupts) onFirst(f func()) {
	in.mu.Lock()
	in.first = f
	in.mu.Unlock()
}

// close stops reading signals.
func (in *interrupts) close() {
	close(in.done)
	<-in.stopped
}
