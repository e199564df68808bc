package export

import (
	"fmt"
	"io"
	"text/tabwriter"
	"tokscope/feature"

	"tokscope/stats"
)

// jsonHeadToHead is one row of the summary's "head_to_head" list: endpoint against the best
// endpoint ("versus") of one metric. diff is median(endpoint) − median(versus) in the metric's
// unit, ci95 its 95 % bootstrap interval; both null when the endpoint has no values. samples
// is how many values each side had.
type jsonHeadToHead struct {
	Endpoint string             `json:"endpoint"`
	Versus   string             `json:"versus"`
	Metric   string             `json:"metric"`
	Diff     *feature.Number    `json:"diff"`
	CI95     *[2]feature.Number `json:"ci95"`
	Verdict  string             `json:"verdict"`
	Samples  [2]int             `json:"samples"`
}

// headToHeadJSON is the "head_to_head" list: nil (key omitted) with fewer than two
// endpoints, else every comparison of stats.HeadToHeads ([] when there is no data yet).
func headToHeadJSON(snap *stats.Snapshot) *[]jsonHeadToHead {
	if len(snap.Endpoints) < 2 {
		return nil
	}
	rows := []jsonHeadToHead{}
	for _, h := range stats.HeadToHeads(snap) {
		r := jsonHeadToHead{
			Endpoint: h.EndpointName, Versus: h.VersusName, Metric: h.Metric,
			Verdict: string(h.Verdict), Samples: [2]int{h.N, h.VersusN},
		}
		if h.OK {
			d := feature.Number(h.Diff)
			r.Diff, r.CI95 = &d, &[2]feature.Number{feature.Number(h.Lo), feature.Number(h.Hi)}
		}
		rows = append(rows, r)
	}
	return &rows
}

// ttftFromJSON is the "ttft_from" key: only when TTFT is measured to another instant than
// docs/outputs.md's first token, so that the default document keeps exactly its contract.
func ttftFromJSON(snap *stats.Snapshot) string {
	if snap.TTFTFrom == "first-token" {
		return ""
	}
	return snap.TTFTFrom
}

var h2hLabels = map[string]string{stats.H2HTTFT: "TTFT ms", stats.H2HDecode: "decode tok/s"}

// writeTableHeadToHead is the table's last section: with two or more endpoints, each against
// the best, and which instant TTFT was measured to when not the first token.
func writeTableHeadToHead(w io.Writer, snap *stats.Snapshot) error {
	if from := ttftFromJSON(snap); from != "" {
		fmt.Fprintf(w, "\nTTFT measured to the %s (--ttft-from %s)\n", map[string]string{
			"first-event": "first SSE event", "first-answer": "first answer (content) chunk",
		}[from], from)
	}
	if len(snap.Endpoints) < 2 {
		return nil
	}
	fmt.Fprintf(w, "\nhead-to-head vs the best: difference of medians, 95 %% bootstrap CI, last ≤1000 ok requests\n")
	rows := stats.HeadToHeads(snap)
	if len(rows) == 0 {
		_, err := fmt.Fprintf(w, "  %s no ok requests yet\n", feature.NoData)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  \tendpoint\tvs best\tdiff\t95 % CI\tverdict\tn\t")
	for _, h := range rows {
		diff, ci := feature.NoData, feature.NoData
		if h.OK {
			diff, ci = signed(h.Diff), "["+signed(h.Lo)+", "+signed(h.Hi)+"]"
		}
		verdict := string(h.Verdict)
		switch {
		case h.N == 0: // nothing to compare yet: not a verdict "yet" to come from more of the same
			verdict = "no ok requests"
		case h.Verdict == stats.VerdictUndecided && h.TooFew():
			verdict += fmt.Sprintf(" (n<%d)", stats.H2HMinSamples)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t\n", h2hLabels[h.Metric], h.EndpointName, h.VersusName,
			diff, ci, verdict, h.N, h.VersusN)
	}
	return tw.Flush()
}

// signed is feature.TableNumber with an explicit + for positive values.
func signed(v float64) string {
	s := feature.TableNumber(v)
	if v > 0 && s != "0.00" {
		return "+" + s
	}
	return s
}
