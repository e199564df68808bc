// Package e2e holds tokscope's end-to-end tests and nothing else (there is no non-test
// code). Each builds the real binary and runs it against a real outside program, which the
// test requires: a missing one fails the test with the command that installs it (.ci/run
// installs them).
//
//   - TestTUIInTmux runs `tokscope --demo` in a detached session of a private tmux server
//     (its own socket in a temporary directory, so a user's tmux is never touched), drives it
//     with keys through `tmux send-keys` and asserts what the terminal shows through
//     `tmux capture-pane`: every view at 100×30 and 80×24, a streamed prompt, a race, the
//     help screen, and a clean exit that restores the terminal. Set TOKSCOPE_SCREENS=dir to
//     keep every asserted screen as a text file in dir, for reviewers; `go test -short`
//     skips it.
//   - TestLiveFiguresInTmux reads a card halfway through one long scripted stream: TTFT,
//     tokens so far, decode so far and aggregate tok/s within 10 % of the schedule.
//   - TestDemoFirstImpression: `tokscope --demo` at 80×24 has numbers and charts on every card
//     within 3 s of its first screen.
//   - TestStreamViewLiveRateInTmux: the stream view's live tok/s, halfway through an answer of
//     3 tokens per chunk with usage only at the end, within 5 % of the final figure.
//   - TestHeadlessProgressInTmux runs a headless run with stderr on the terminal and stdout
//     into a file: the progress line shows and moves, is wiped at the end, and stdout is the
//     summary alone.
//   - TestPrometheusScrapesTokscope has a real Prometheus scrape a headless run and compares
//     its view with tokscope's own summary.
//   - TestReportRendersInChromium writes the --report of a headless demo run and of its
//     --replay (equal but for what a record does not keep) and renders it in headless
//     Chromium behind a recording proxy on loopback: no console message, no request from the
//     page, every chart in the DOM, the endpoints' colours in the screenshot.
//
// Under -race the binary is built race-enabled too.
package e2e
