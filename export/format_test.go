package export

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"tokscope/stats"
	"tokscope/sweep"
)

// Every format of Formats is written by the writer of that name, for the summary and the
// sweep alike; any other format is an error that lists the accepted ones and writes nothing.
func TestWriteInFormat(t *testing.T) {
	snap, rep := testSnapshot(), testSweep()
	summary := map[string]func(io.Writer, stats.Snapshot) error{"table": WriteTable, "json": WriteJSON, "csv": WriteCSV}
	sweeps := map[string]func(io.Writer, sweep.Report) error{"table": WriteSweepTable, "json": WriteSweepJSON, "csv": WriteSweepCSV}
	if len(Formats) != len(summary) {
		t.Fatalf("Formats %v, the test knows %d", Formats, len(summary))
	}
	for _, format := range Formats {
		var got, want bytes.Buffer
		if err := WriteSummary(&got, format, snap); err != nil {
			t.Fatalf("WriteSummary %s: %v", format, err)
		}
		if err := summary[format](&want, snap); err != nil {
			t.Fatal(err)
		}
		if got.Len() == 0 || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("WriteSummary %s wrote:\n%s\nwant:\n%s", format, got.Bytes(), want.Bytes())
		}
		got.Reset()
		want.Reset()
		if err := WriteSweep(&got, format, rep); err != nil {
			t.Fatalf("WriteSweep %s: %v", format, err)
		}
		if err := sweeps[format](&want, rep); err != nil {
			t.Fatal(err)
		}
		if got.Len() == 0 || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("WriteSweep %s wrote:\n%s\nwant:\n%s", format, got.Bytes(), want.Bytes())
		}
	}
	for _, format := range []string{"xml", "", "JSON"} {
		var out bytes.Buffer
		err := WriteSummary(&out, format, snap)
		if err == nil || !strings.Contains(err.Error(), "table, json, csv") || out.Len() != 0 {
			t.Errorf("WriteSummary %q: err %v, wrote %q", format, err, out.String())
		}
		err = WriteSweep(&out, format, rep)
		if err == nil || !strings.Contains(err.Error(), "table, json, csv") || out.Len() != 0 {
			t.Errorf("WriteSweep %q: err %v, wrote %q", format, err, out.String())
		}
	}
}
