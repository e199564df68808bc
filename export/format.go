package export

import (
	"fmt"
	"io"
	"strings"

	"tokscope/feature"
	"tokscope/stats"
	"tokscope/sweep"
)

// Formats are the --output formats, in the order the help and the errors list them.
var Formats = []string{"table", "json", "csv"}

// WriteSummary writes the headless summary of snap in format, one of Formats.
func WriteSummary(w io.Writer, format string, snap stats.Snapshot) error {
	return writeIn(w, format, snap, WriteTable, WriteJSON, WriteCSV)
}

// WriteSweep writes the report of a sweep (--sweep) in format, one of Formats.
func WriteSweep(w io.Writer, format string, rep sweep.Report) error {
	return writeIn(w, format, rep, WriteSweepTable, WriteSweepJSON, WriteSweepCSV)
}

// writeIn writes v with the writer of format: the one place a format name picks a writer.
func writeIn[T any](w io.Writer, format string, v T, table, json, csv func(io.Writer, T) error) error {
	switch format {
	case "table":
		return table(w, v)
	case "json":
		return json(w, v)
	case "csv":
		return csv(w, v)
	}
	return fmt.Errorf("unknown output format %q: accepted values are %s", format, strings.Join(Formats, ", "))
}

// WriteCapacity writes the report of a capacity search (package feature's documents) in
// format, one of Formats.
func WriteCapacity(w io.Writer, format string, rep sweep.CapacityReport) error {
	return writeIn(w, format, rep, feature.WriteCapacityTable, feature.WriteCapacityJSON, feature.WriteCapacityCSV)
}
