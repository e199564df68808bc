// Package ui is tokscope's live terminal interface: a bubbletea program with five views over
// the events of a probe Runner.
//
// # Views
//
// Each view is one file and one entry of the model's table (Model.views, by view number);
// they share the screen interface (view.go): Name, SetSize, Render, Info, ShortHelp.
//
//   - Dashboard (dashboard.go, panel.go, cardlines.go, timechart.go): one card per endpoint
//     in a grid, paged when they do not all fit: status, the requests in flight (tokens so far,
//     decode so far), decode p50/p10, aggregate tok/s and TTFT with time charts of the last
//     seconds, errors, and in an open-loop run (--rate) the client queue and dropped arrivals.
//   - Compare (compare.go, headtohead.go): one row per endpoint over the whole run, sortable
//     by any column, the best value of each column marked; below, each endpoint against the
//     best with a bootstrap CI (computed in a Cmd), and bars of decode tok/s and TTFT.
//   - Detail (detail.go, ratelimit.go): the selected endpoint in depth: time series of TTFT
//     and decode tok/s, the TTFT breakdown of recent requests, the ITL distribution, the
//     reasoning/answer split, rate-limit headers and recent errors.
//   - Stream (stream.go): a prompt, sent to the selected endpoint or raced on all of them,
//     with live text and live figures per endpoint.
//   - Sweep (sweepview.go): during --sweep, aggregate tok/s and TTFT p50 against concurrency
//     and the selected endpoint's steps; without a sweep it is out of the Tab cycle and says
//     how to start one.
//
// # Data flow
//
// The run's loop (fanout.Loop, built in package cli) gives every event to the run's statistics,
// the Board (board.go: the Aggregator, the sweep's Tracker, the report), then queues it for the
// screen. Events arrive here through one re-armed tea.Cmd (waitForEvent) in batches. Update
// (model.go) gives interactive-stream events to the stream view, and Samples and states to the
// endpoint's state (controls.go). Nothing is drawn then: a redraw tick, armed only while
// something is dirty, takes one Snapshot from the Board and renders the active view from a
// frame (the Snapshot, the endpoint states, the selection, the clock). Views redraw only what
// changed; View only joins the cached header, body and footer. Keys (actions.go) act on the
// Controls (the Runner), on the Board (the reset) and on the model, never on the network
// directly.
//
// Ownership: Update is the only writer of every piece of UI state; the Board is written by the
// run's loop and read by Update, under its lock.
//
// It is the only package that imports bubbletea, bubbles, lipgloss or ntcharts. It imports
// config, sample, fanout, stats and sweep, and never go-openai: the Runner is reached through the
// Controls interface.
package ui
