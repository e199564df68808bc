package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

// An open-loop run adds the client queue to every format; a closed-loop run is unchanged
// (the goldens of summary_test.go).
func TestClientQueueGolden(t *testing.T) {
	snap := testSnapshot()
	snap.Rate = 2.5
	snap.Endpoints[0].Queue = dist(12, 0.412, 150.25, 980.5, 120.3, 0.011, 1002.75)
	snap.Endpoints[0].Arrivals, snap.Endpoints[0].DroppedArrivals = 40, 3
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
	if len(doc.ClientQueue) != 2 || doc.ClientQueue[0]["dropped"] != 3.0 || doc.ClientQueue[1]["queue_ms"] != nil {
		t.Errorf("client_queue %v", doc.ClientQueue)
	}
	for _, e := range doc.Endpoints {
		if _, ok := e["queue_ms"]; ok {
			t.Error("the queue leaked into the endpoint objects of the contract")
		}
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if h := strings.Join(rows[0], ","); !strings.HasSuffix(h, "queue_ms_max,arrivals,dropped") {
		t.Errorf("CSV header %s", h)
	}
	if !strings.Contains(tb.String(), "client queue ms") || !strings.Contains(tb.String(), "dropped 3") {
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
