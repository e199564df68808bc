package export

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// An open-loop run adds the client queue to every format; a closed-loop run is unchanged
// (the goldens of summary_test.go).
func TestClientQueueGolden(t *testing.T) {
	snap := testSnapshot()
	snap.Rate = 2.5
	snap.Endpoints[0].Queue = dist(12, 0.412, 150.25, 980.5, 120.3, 0.011, 1002.75)
	snap.Endpoints[0].Arrivals, snap.Endpoints[0].DroppedArrivals, snap.Endpoints[0].Waiting = 40, 3, 2
	snap.Endpoints[0].RunSpan, snap.Endpoints[0].RequestsPerS = 14*time.Second, 2.43
	snap.Endpoints[1].Arrivals = 4
	var j, c, tb bytes.Buffer
	if err := WriteJSON(&j, snap); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&c, snap); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&tb, snap); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary_rate.json", j.Bytes())
	golden(t, "summary_rate.csv", c.Bytes())
	golden(t, "summary_rate.txt", tb.Bytes())

	var doc struct {
		Endpoints   []map[string]any `json:"endpoints"`
		ClientQueue []map[string]any `json:"client_queue"`
	}
	if err := json.Unmarshal(j.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.ClientQueue) != 2 || doc.ClientQueue[0]["dropped"] != 3.0 || doc.ClientQueue[0]["waiting"] != 2.0 || doc.ClientQueue[1]["queue_ms"] != nil {
		t.Errorf("client_queue %v", doc.ClientQueue)
	}
	for _, e := range doc.Endpoints {
		if _, ok := e["queue_ms"]; ok {
			t.Error("the queue leaked into the endpoint objects of the contract")
		}
	}
	rows, _ := csvOf(t, c.Bytes())
	// The queue's columns, wherever the feature list puts them.
	if h := strings.Join(rows[0], ","); !strings.Contains(h+",", ","+strings.Join(featureNamed(t, "client queue").CSVHeader(&snap), ",")+",") {
		t.Errorf("CSV header %s", h)
	}
	if !strings.Contains(tb.String(), "client queue ms") ||
		!strings.Contains(tb.String(), "arrivals 40 at 2.5/s (achieved 2.43 requests/s)  dropped 3 (queue full)  still waiting 2") {
		t.Errorf("table lacks the client queue:\n%s", tb.String())
	}

	// Closed loop: no trace of it.
	var closed bytes.Buffer
	if err := WriteJSON(&closed, testSnapshot()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(closed.String(), "client_queue") {
		t.Error("client_queue in a closed-loop summary")
	}
}
