// Package export writes what tokscope measured for other programs and for people: the
// headless summary of a stats.Snapshot as JSON (the documented interface of docs/metrics.md), CSV
// or an aligned table (WriteSummary picks one by the --output name), and a sweep's report
// likewise (WriteSweep). Every per-request distribution comes from the metric registry
// (package metric). The --record file is package record's.
//
// It imports config, metric, probe, stats and sweep only; never bubbletea, lipgloss or go-openai.
// Nothing it writes has a field for an API key or an Authorization header.
package export

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"tokscope/feature"
	"unicode/utf8"

	"tokscope/metric"
	"tokscope/stats"
)

// jsonEndpoint is one endpoint of the JSON summary. Its keys, in order: the counts (jsonHead),
// the registered metrics of Group Core, the features' members at feature.JSONMiddle ("slo", "cost",
// "server", "gpu"), the metrics of Group Workload, the workload's scalars (jsonWorkload), then
// the features' members at feature.JSONTail and feature.JSONLast: docs/outputs.md's order.
type jsonEndpoint struct {
	head     jsonHead
	core     []feature.Member
	middle   []feature.Member
	workload []feature.Member
	tail     jsonWorkload
	features []feature.Member
}

type jsonHead struct {
	Name         string         `json:"name"`
	Model        string         `json:"model"`
	BaseURL      string         `json:"base_url"`
	API          string         `json:"api"`
	Requests     int            `json:"requests"`
	OK           int            `json:"ok"`
	Errors       int            `json:"errors"`
	Truncated    int            `json:"truncated"`
	Cut          int            `json:"cut"` // cut by the end of the run: not errors (docs/outputs.md)
	ErrorKinds   map[string]int `json:"error_kinds"`
	TokenSource  *string        `json:"token_source"`
	OutputTokens int64          `json:"output_tokens"`
}

// MarshalJSON writes the parts of e as one object, in order.
func (e jsonEndpoint) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	add := func(members []byte) {
		if len(members) == 0 {
			return
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, members...)
	}
	for _, part := range []any{e.head, e.core, e.middle, e.workload, e.tail, e.features} {
		members, err := feature.Members(part)
		if err != nil {
			return nil, err
		}
		add(members)
	}
	return append(b, '}'), nil
}

type jsonSummary struct {
	Endpoints []jsonEndpoint `json:"endpoints"`
	// Beyond docs/outputs.md's contract, added keys only (see headtohead.go).
	TTFTFrom   string            `json:"ttft_from,omitempty"`
	HeadToHead *[]jsonHeadToHead `json:"head_to_head,omitempty"`
	// Open-loop runs only (queue.go).
	ClientQueue *[]feature.JSONClientQueue `json:"client_queue,omitempty"`
	// How the run ended (end.go); not in a replay.
	Grace *jsonGrace `json:"grace,omitempty"`
	// A replay that merged several shards' records (shards.go).
	Shards int `json:"shards,omitempty"`
}

// WriteJSON writes the summary of docs/outputs.md's command-line contract as one JSON document on
// one line: every endpoint's counts and its whole-run distributions over ok requests, a
// figure without data as null, numbers rounded to 3 decimals.
func WriteJSON(w io.Writer, snap stats.Snapshot) error {
	out := jsonSummary{Endpoints: make([]jsonEndpoint, 0, len(snap.Endpoints))}
	for i := range snap.Endpoints {
		e := &snap.Endpoints[i]
		je := jsonEndpoint{
			head: jsonHead{
				Name: e.Name, Model: e.Model, BaseURL: e.BaseURL, API: apiName(e.API),
				Requests: e.Requests, OK: e.OK, Errors: e.Errors, Truncated: e.Truncated, Cut: e.Cut,
				ErrorKinds:   e.ErrorKinds,
				OutputTokens: e.OutputTokens,
			},
			core:     feature.MetricsJSON(&e.Whole, metric.Core),
			middle:   featureJSON(e, feature.JSONMiddle),
			workload: feature.MetricsJSON(&e.Whole, metric.Workload),
			tail:     workloadJSON(e),
			features: append(featureJSON(e, feature.JSONTail), featureJSON(e, feature.JSONLast)...),
		}
		if je.head.ErrorKinds == nil {
			je.head.ErrorKinds = map[string]int{} // {} rather than null
		}
		if e.TokenSource != "" {
			src := e.TokenSource
			je.head.TokenSource = &src
		}
		out.Endpoints = append(out.Endpoints, je)
	}
	out.TTFTFrom, out.HeadToHead = ttftFromJSON(&snap), headToHeadJSON(&snap)
	out.ClientQueue = feature.ClientQueueJSON(&snap)
	out.Grace = graceJSON(&snap)
	out.Shards = shardsJSON(&snap)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // URLs keep their & and < > readable
	return enc.Encode(out)
}

// csvHeader is the header row of WriteCSV.
func csvHeader() []string {
	h := []string{"name", "model", "base_url", "api", "requests", "ok", "errors", "truncated", "cut", "error_kinds", "token_source", "output_tokens"}
	h = append(h, feature.MetricsCSVHeader(metric.Core)...)
	h = append(h, feature.MetricsCSVHeader(metric.Workload)...)
	return append(h, workloadCSVHeader()...)
}

// errorKindsText is "http_429=2;timeout=1", sorted by kind; "" when none.
func errorKindsText(kinds map[string]int) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(kinds)) {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, "%s=%d", k, kinds[k])
	}
	return b.String()
}

// WriteCSV writes a header row and one row per endpoint with the fields of WriteJSON
// flattened (ttft_ms_p50, …); a figure without data is an empty cell. error_kinds is
// "kind=count" joined by ";". After the workload's columns: the features' (features.go), in
// their order: cache_hit_rate and the turns' columns, the SLO's when an endpoint has
// objectives, the cost's when one has a price, the server's always, … the client queue's in
// open-loop runs.
func WriteCSV(w io.Writer, snap stats.Snapshot) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append(csvHeader(), featureCSVHeader(&snap)...)); err != nil {
		return err
	}
	for i := range snap.Endpoints {
		e := &snap.Endpoints[i]
		row := []string{
			e.Name, e.Model, e.BaseURL, apiName(e.API),
			strconv.Itoa(e.Requests), strconv.Itoa(e.OK), strconv.Itoa(e.Errors), strconv.Itoa(e.Truncated), strconv.Itoa(e.Cut),
			errorKindsText(e.ErrorKinds), e.TokenSource, strconv.FormatInt(e.OutputTokens, 10),
		}
		row = append(row, feature.MetricsCSV(&e.Whole, metric.Core)...)
		row = append(row, feature.MetricsCSV(&e.Whole, metric.Workload)...)
		row = append(row, workloadCSV(e)...)
		row = append(row, featureCSV(&snap, e)...)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteTable writes an aligned, human-readable summary: per endpoint its counts, error kinds,
// output tokens with their source (≈ marks estimated counts and the rates derived from them)
// and one row per whole-run distribution; — marks a figure without data. The cells are
// TableEndpoints'.
func WriteTable(w io.Writer, snap stats.Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	eps := TableEndpoints(&snap)
	// One label width for every row of every endpoint: the cells are right-aligned, so a
	// label padded to the widest keeps every label (and every endpoint) in one column.
	labelWidth := 0
	for _, e := range eps {
		for _, r := range e.Rows {
			labelWidth = max(labelWidth, utf8.RuneCountInString(r.Label))
		}
	}
	for i, e := range eps {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		title := e.Name
		if e.Model != "" {
			title += "  " + e.Model
		}
		if l := APILabel(e.API); l != "" {
			title += "  " + l
		}
		if e.BaseURL != "" {
			title += "  " + e.BaseURL
		}
		fmt.Fprintln(tw, title)
		for _, l := range e.Lines {
			fmt.Fprintf(tw, "  %s\n", l)
		}
		fmt.Fprintf(tw, "  %-*s\t%s\t\n", labelWidth, "", strings.Join(feature.TableColumns, "\t"))
		for _, r := range e.Rows {
			fmt.Fprintf(tw, "  %-*s\t%s\t\n", labelWidth, r.Label, strings.Join(r.Cells, "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range []string{GraceLine(&snap), ShardsLine(&snap)} {
		if l == "" {
			continue
		}
		if _, err := fmt.Fprintf(w, "\n%s\n", l); err != nil {
			return err
		}
	}
	return writeTableHeadToHead(w, &snap)
}
