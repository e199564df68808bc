package servermetrics

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// BenchmarkReading is what one scrape costs once the body has arrived: the Prometheus text
// parser, the family's figures for one endpoint, and the counters turned into rates.
func BenchmarkReading(b *testing.B) {
	for _, name := range []string{"vllm-v1-0.10.txt", "tgi.txt", "llamacpp-b10470/metrics-2-streams-running.txt"} {
		body, err := os.ReadFile("testdata/" + name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			var tr tracker
			at := time.Now()
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				fams, err := parse(bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				in, _, ok := extract(fams, "m")
				if !ok {
					b.Fatal("not recognised")
				}
				at = at.Add(time.Second)
				_ = tr.reading(at, in)
			}
		})
	}
}
