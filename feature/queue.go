package feature

import (
	"fmt"
	"strconv"

	"tokscope/stats"
)

// Open-loop runs (--rate): the client queue — the time a request waited for a free worker
// slot before its t0 — and the arrivals dropped because the queue was full. Shown only when
// the Snapshot says the run was open-loop (Snapshot.Rate > 0), so that closed-loop output
// keeps exactly its contract; never folded into any latency.

// JSONClientQueue is one row of the summary's "client_queue" list: the endpoint's arrival
// rate (requests/s), arrivals generated, dropped and still waiting when the run ended, and
// the client queue distribution over every non-warm-up request and the waits of those still
// waiting (ms; null without either).
type JSONClientQueue struct {
	Endpoint string `json:"endpoint"`
	Rate     Number `json:"rate"`
	Arrivals uint64 `json:"arrivals"`
	Dropped  uint64 `json:"dropped"`
	Waiting  int    `json:"waiting"`
	QueueMS  *Dist  `json:"queue_ms"`
}

// ClientQueueJSON is the "client_queue" list: nil (key omitted) in the closed loop.
func ClientQueueJSON(snap *stats.Snapshot) *[]JSONClientQueue {
	if snap.Rate <= 0 {
		return nil
	}
	rows := make([]JSONClientQueue, 0, len(snap.Endpoints))
	for i := range snap.Endpoints {
		e := &snap.Endpoints[i]
		rows = append(rows, JSONClientQueue{
			Endpoint: e.Name, Rate: Number(snap.Rate),
			Arrivals: e.Arrivals, Dropped: e.DroppedArrivals, Waiting: e.Waiting,
			QueueMS: ToDist(e.Queue),
		})
	}
	return &rows
}

// queueCSVHeader are the columns WriteCSV appends in an open-loop run.
var queueCSVHeader = []string{
	"queue_ms_p50", "queue_ms_p90", "queue_ms_p99", "queue_ms_mean", "queue_ms_min", "queue_ms_max",
	"arrivals", "dropped", "waiting",
}

func queueCSV(e *stats.EndpointStats) []string {
	row := make([]string, 0, len(queueCSVHeader))
	d := e.Queue
	for _, v := range []float64{d.P50, d.P90, d.P99, d.Mean, d.Min, d.Max} {
		if d.Count == 0 {
			row = append(row, "")
		} else {
			row = append(row, FormatNumber(v))
		}
	}
	return append(row, strconv.FormatUint(e.Arrivals, 10), strconv.FormatUint(e.DroppedArrivals, 10), strconv.Itoa(e.Waiting))
}

// queueFeature is the client queue of an open-loop run (Snapshot.Rate > 0): its CSV columns,
// the table's arrivals line and its client queue row. Its JSON is the summary's own
// "client_queue" list (ClientQueueJSON), not a member of each endpoint.
func queueFeature() Feature {
	return Feature{
		Name: "client queue",
		CSVHeader: func(snap *stats.Snapshot) []string {
			if snap.Rate <= 0 {
				return nil
			}
			return queueCSVHeader
		},
		CSV: func(snap *stats.Snapshot, e *stats.EndpointStats) []string {
			if snap.Rate <= 0 {
				return nil
			}
			return queueCSV(e)
		},
		LinesAt: LinesHead,
		Lines: func(snap *stats.Snapshot, e *stats.EndpointStats) []string {
			if snap.Rate <= 0 {
				return nil
			}
			return []string{arrivalsLine(snap.Rate, e)}
		},
		RowsAt: RowsMid,
		Rows: func(snap *stats.Snapshot, e *stats.EndpointStats) []TableRow {
			if snap.Rate <= 0 {
				return nil
			}
			return []TableRow{Row("client queue ms", e.Queue)}
		},
	}
}

// arrivalsLine is the table's arrivals line of one endpoint (open-loop runs): the rate asked
// for and the one achieved (finished requests over the run), what was dropped, and what was
// still waiting at the end.
func arrivalsLine(rate float64, e *stats.EndpointStats) string {
	line := fmt.Sprintf("arrivals %d at %s/s", e.Arrivals, FormatNumber(rate))
	if e.RunSpan > 0 {
		line += fmt.Sprintf(" (achieved %s requests/s)", TableNumber(e.RequestsPerS))
	}
	line += fmt.Sprintf("  dropped %d (queue full)", e.DroppedArrivals)
	if e.Waiting > 0 {
		line += fmt.Sprintf("  still waiting %d", e.Waiting)
	}
	return line
}
