package report

import (
	"io"
	"testing"
	"time"
)

func tenThousand(b *testing.B) Input {
	eps := append(synthEndpoints[:3:3], synthEndpoint{"reasoner", "r1", 250 * time.Millisecond, 45, 256, 0.01})
	for i := range eps {
		eps[i].tokens = 256
	}
	cfg, samples := synthRun(eps, 2500, 16, true)
	return synthInput(b, cfg, samples)
}

// BenchmarkWrite10k renders the report of 10,000 requests (4 endpoints, 256 chunks each).
func BenchmarkWrite10k(b *testing.B) {
	in := tenThousand(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCollectorAdd is the cost of one finished 256-chunk request reaching the Collector.
func BenchmarkCollectorAdd(b *testing.B) {
	cfg, samples := synthRun(synthEndpoints[:1], 200, 4, false)
	c := NewCollector(cfg)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.AddAt(0, &samples[1+i%200])
		i++
	}
}
