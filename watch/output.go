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

// MarshalJSON writes a Row with every key but slots, ollama_models and labels present (as
// docs/watch.md says): model and kind, "" in Go, are null in JSON, not left out.
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row // without this method; its fields below are shadowed, in the same order
	return json.Marshal(struct {
		Server string            `json:"server"`
		URL    string            `json:"url"`
		Model  *string           `json:"model"`
		Labels map[string]string `json:"labels,omitempty"`
		Kind   *Kind             `json:"kind"`
		plain
	}{r.Server, r.URL, nullIfEmpty(r.Model), r.Labels, nullIfEmpty(r.Kind), plain(r)})
}

func nullIfEmpty[S ~string](s S) *S {
	if s == "" {
		return nil
	}
	return &s
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
