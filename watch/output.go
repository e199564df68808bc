package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Snapshot is the JSON document of `tokscope watch --once -o json` (and of --duration, where
// the rates and percentiles cover the whole run).
type Snapshot struct {
	At      time.Time `json:"at"`
	WindowS float64   `json:"window_s"`
	// Servers is the fleet table's rows.
	Servers []Row `json:"servers"`
}

// WriteJSON writes one snapshot as an indented JSON document.
func WriteJSON(w io.Writer, s Snapshot) error {
	if s.Servers == nil {
		s.Servers = []Row{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteTable writes the fleet table as aligned text, every column, with a footnote on the
// estimated percentiles.
func WriteTable(w io.Writer, s Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	headers := make([]string, len(Columns))
	for i, c := range Columns {
		headers[i] = c.Header
	}
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	for _, r := range s.Servers {
		cells := make([]string, len(Columns))
		for i, c := range Columns {
			cells[i] = c.Text(r)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "rates over the last %s; ~ percentiles are estimates interpolated within the servers' histogram buckets; %s = not exported\n",
		time.Duration(s.WindowS*float64(time.Second)).Round(time.Millisecond), Unknown)
	return err
}
