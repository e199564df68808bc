// Package ui is tokscope's live terminal interface: a bubbletea program with four views
// (dashboard, compare, detail, stream & race) over the events of a probe Runner.
//
// Ownership: Update is the only writer of every piece of UI state and of the stats
// Aggregator it feeds (the Aggregator is not goroutine-safe). Events arrive through one
// re-armed tea.Cmd (waitForEvent); charts are drawn only when their data or size changes and
// View only joins cached strings.
//
// It is the only package that imports bubbletea, bubbles, lipgloss or ntcharts. It imports
// config, probe and stats, and never go-openai: the Runner is reached through the Engine
// interface.
package ui
