package record

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"tokscope/servermetrics"
)

// A GPU scrape written to the record reads back as the Update it was, and a replay of the file
// marks the endpoint as having had a GPU exporter and hands the scrape back with the server's.
func TestGPULinesRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 14, 15, 9, 26, 123456789, time.UTC)
	v := func(x float64) servermetrics.Value { return servermetrics.Value{V: x, OK: true} }
	ok := servermetrics.Update{Endpoint: 0, Source: servermetrics.SourceGPU, State: servermetrics.StateOK, GPU: servermetrics.GPUReading{
		At: at, GPUs: 2, Model: "NVIDIA H100 80GB HBM3", Host: "node-a",
		PowerW: v(412.5), Util: v(87.5), MemoryUsedMiB: v(150000), EnergyMJ: v(9.5e9),
		EnergyJ: v(410.25), Span: 1003 * time.Millisecond, FromCounter: true,
	}}
	down := servermetrics.Update{Endpoint: 0, Source: servermetrics.SourceGPU, State: servermetrics.StateUnavailable,
		Note: "connection refused", GPU: servermetrics.GPUReading{At: at.Add(time.Second)}}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	s := fullSample()
	for _, err := range []error{rec.WriteServer(s.Endpoint, s.Model, ok), rec.Write(&s), rec.WriteServer(s.Endpoint, s.Model, down), rec.Close()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	file, err := ReadFile(f)
	if err != nil || len(file.Records) != 1 || len(file.GPU) != 2 || len(file.Server) != 0 {
		t.Fatalf("%d records, %d gpu lines, %d server lines, %v", len(file.Records), len(file.GPU), len(file.Server), err)
	}
	for i, want := range []servermetrics.Update{ok, down} {
		if got := file.GPU[i].Update(0); !reflect.DeepEqual(got, want) {
			t.Errorf("scrape %d: read back %+v, wrote %+v", i, got, want)
		}
	}
	rp, err := LoadReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.Endpoints) != 1 || rp.Endpoints[0].GPUMetrics != RecordedGPU || len(rp.Server) != 2 || rp.Server[0].Source != servermetrics.SourceGPU {
		t.Errorf("replay: endpoints %+v, %d scrapes", rp.Endpoints, len(rp.Server))
	}
}
