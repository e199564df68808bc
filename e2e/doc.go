// Package e2e holds tokscope's end-to-end tests and nothing else: there is no non-test code.
//
// TestTUIInTmux builds the real binary, runs `tokscope --demo` in a detached session of a
// private tmux server (its own socket in a temporary directory, so a user's tmux is never
// touched), drives it with keys through `tmux send-keys` and asserts what the terminal shows
// through `tmux capture-pane`: every view at 100×30 and 80×24, a streamed prompt, a race,
// the help screen, and a clean exit that restores the terminal.
//
// tmux is required: without it the test fails (install it with `apt-get install -y tmux`).
// `go test -short` skips it. Set TOKSCOPE_SCREENS=dir to keep every asserted screen as a
// text file in dir, for reviewers.
package e2e
