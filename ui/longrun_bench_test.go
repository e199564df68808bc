package ui

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/stats"
)

// BenchmarkLongRun drives one million finished requests across 16 endpoints — about a day of
// a busy dashboard — through the statistics of the headless path (a stats.Aggregator alone)
// and through the whole UI Model (its Aggregator, per-endpoint state, a redraw every 2048
// requests at 120×40). It reports the live heap (after GC) before, halfway and after, and
// the cost per request; the heap must stay flat and well under 64 MiB.
//
// One iteration is the full million; run it once:
//
//	go test ./ui -run '^$' -bench LongRun -benchtime 1x
//
// Every request carries its own 66-chunk slice (as the probe hands each Sample its own), so
// that whatever the UI keeps is really kept; 2 % fail, each with a different message.
func BenchmarkLongRun(b *testing.B) {
	for _, target := range []string{"aggregator", "model"} {
		b.Run(target, func(b *testing.B) {
			for range b.N {
				longRun(b, target)
			}
		})
	}
}

const (
	longRunRequests  = 1_000_000
	longRunEndpoints = 16
	longRunTokens    = 64
	longRunBatch     = 512 // events per eventsMsg, as waitForEvent batches them
	longRunRedraw    = 4   // batches between redraws (≈ 4 Hz at ~8 requests/s per endpoint)
)

func longRun(b *testing.B, target string) {
	eps := testEndpoints(longRunEndpoints)
	for i := range eps {
		eps[i].Name = fmt.Sprintf("%s-%02d", eps[i].Name, i) // 16 distinct names
	}
	pool := longRunPool(eps)
	start := t0.Add(-24 * time.Hour)
	clock := start
	now := func() time.Time { return clock }
	// Requests arrive evenly over the simulated day: ~86 ms apart overall.
	step := 24 * time.Hour / longRunRequests

	var agg *stats.Aggregator
	var m Model
	switch target {
	case "aggregator":
		agg = stats.New(eps)
	case "model":
		m = New(nil, eps, make(chan sample.Event), Options{Now: now})
		next, _ := m.Update(resize(120, 40))
		m = next.(Model)
	}

	b.StopTimer()
	before := liveHeapMiB()
	var half float64
	var heaps []string // every 100k requests, for the log
	batch := make([]sample.Event, 0, longRunBatch)
	batches := 0
	b.StartTimer()
	began := time.Now()
	for i := range longRunRequests {
		ep := i % longRunEndpoints
		src := &pool[i%len(pool)]
		d := &sample.Done{Endpoint: sample.EndpointIndex(ep), Sample: *src}
		s := &d.Sample
		s.Endpoint, s.Model = eps[ep].Name, eps[ep].Model
		s.Seq = uint64(i/longRunEndpoints + 1)
		s.Start = clock
		s.Chunks = slices.Clone(src.Chunks)
		if s.Outcome == sample.OutcomeError {
			s.ErrorMessage = fmt.Sprintf("upstream error %d: overloaded", i) // never the same twice
		}
		clock = clock.Add(step)

		switch target {
		case "aggregator":
			agg.AddAt(sample.EndpointIndex(ep), s)
			if i%2048 == 0 {
				_ = agg.Snapshot(clock)
			}
		case "model":
			batch = append(batch, d)
			if len(batch) == longRunBatch {
				next, _ := m.Update(feed(m, eventsMsg{events: batch}))
				m = next.(Model)
				batch = make([]sample.Event, 0, longRunBatch) // the Model may keep the events it got
				if batches++; batches%longRunRedraw == 0 {
					next, _ = m.Update(redrawMsg{})
					m = next.(Model)
				}
			}
		}
		if (i+1)%(longRunRequests/10) == 0 {
			b.StopTimer()
			h := liveHeapMiB()
			if i+1 == longRunRequests/2 {
				half = h
			}
			heaps = append(heaps, fmt.Sprintf("%.1f", h))
			b.StartTimer()
		}
	}
	elapsed := time.Since(began)
	b.StopTimer()
	after := liveHeapMiB()
	if target == "model" && m.View() == "" {
		b.Fatal("empty view")
	}
	runtime.KeepAlive(pool)
	runtime.KeepAlive(agg)
	runtime.KeepAlive(&m)

	b.Logf("%s: live heap %.1f MiB at the start, then every 100k requests: %s MiB", target, before, strings.Join(heaps, " "))
	b.ReportMetric(before, "MiB-live-heap-start")
	b.ReportMetric(half, "MiB-live-heap-half")
	b.ReportMetric(after, "MiB-live-heap")
	b.ReportMetric(float64(elapsed.Nanoseconds())/longRunRequests, "ns/request")
	if after > 64 {
		b.Errorf("live heap %.1f MiB after %d requests, budget 64 MiB", after, longRunRequests)
	}
	if after > 1.25*half+4 {
		b.Errorf("live heap grows: %.1f MiB halfway, %.1f MiB at the end", half, after)
	}
	b.StartTimer()
}

// longRunPool is 1024 distinct finished requests per profile: ok ones at each test
// profile's speed, and one in fifty failed.
func longRunPool(eps []config.Endpoint) []sample.Sample {
	plan := make([]request, 1024)
	for i := range plan {
		if i%50 == 49 {
			plan[i] = request{i: i % len(eps), seq: i, start: t0, kind: "http_503", status: 503}
			continue
		}
		p := profiles[i%len(profiles)]
		plan[i] = request{i: i % len(eps), seq: i + 2, start: t0, ttft: p.ttft * (1 + 0.25*jitter(i, 1)), decode: p.decode * (1 + 0.15*jitter(i, 2)),
			tokens: longRunTokens, reasoning: min(p.reasoning, longRunTokens/2)}
	}
	return traffic(eps, plan)
}

func liveHeapMiB() float64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}
