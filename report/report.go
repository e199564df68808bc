// Package report writes one self-contained HTML page about a run (--report FILE.html): the
// summary table of -o table, time series, distributions, TTFT against prompt size, a
// sweep's trade-off, the run's settings. Charts are inline SVG drawn in Go with
// gonum.org/v1/plot; the page has no script and fetches nothing (no font, image or style
// from anywhere), so it opens offline and can be mailed as it is.
//
// The figures come from the same aggregation as the JSON summary (the stats.Snapshot handed
// in, its table cells formatted by export); the per-request series from a Collector fed the
// same finished Samples. A report written from --replay of a record equals the live one
// (see Collector).
//
// It imports config, probe, stats, export and sweep; never ui, bubbletea, lipgloss or
// go-openai.
package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"tokscope/feature"
	"tokscope/stats"
	"tokscope/sweep"
)

// Input is everything a report is drawn from.
type Input struct {
	// Summary is the run's statistics: the same Snapshot the headless summary is written
	// from (the report shows its whole-run figures, never its recent windows).
	Summary stats.Snapshot
	// Requests holds the finished requests of the run, for the time series and
	// distributions; nil draws them as "no data".
	Requests *Collector
	// Sweep is the result of a --sweep run, nil otherwise.
	Sweep *sweep.Report
	// Capacity is the result of a --find-max run, nil otherwise (capacity.go).
	Capacity *sweep.CapacityReport
	// Settings are the run's flags and configuration, secrets already left out (Settings).
	Settings []Setting
	// Version is tokscope's version.
	Version string
	// Sections are further parts of the report (SLO attainment, the server's own metrics),
	// drawn after the built-in ones when they have data.
	Sections []Section
}

// Setting is one line of the report's settings table.
type Setting struct{ Name, Value string }

// Section, TimeSeries, TimePoint and SectionTable are a part of the report beyond the built-in
// ones as package feature describes it (a feature's section, or one handed in with Input).
type (
	Section      = feature.Section
	TimeSeries   = feature.TimeSeries
	TimePoint    = feature.TimePoint
	SectionTable = feature.SectionTable
)

// Write writes the report of in to w as one HTML document.
func Write(w io.Writer, in Input) error {
	p, err := buildPage(&in)
	if err != nil {
		return err
	}
	return pageTemplate.Execute(w, p)
}

// WriteFile writes the report to path whole or not at all: into a temporary file beside it,
// renamed over path once complete, so that an interrupted write never leaves half a page.
func WriteFile(path string, in Input) error {
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
