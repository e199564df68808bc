package ui

import (
	"testing"
	"time"

	"tokscope/sample"
)

// BenchmarkView is the cost of View with 8 endpoints: it only joins cached strings.
//
//	go test ./ui -run '^$' -bench View -benchmem
func BenchmarkView(b *testing.B) {
	for _, v := range []struct {
		name string
		keys []string
	}{
		{"dashboard", nil}, {"compare", []string{"2"}}, {"detail", []string{"enter"}}, {"stream", []string{"4", "ctrl+r"}},
	} {
		b.Run(v.name, func(b *testing.B) {
			m, _ := newTestModel(b, 8, 120, 40, 30)
			m = press(b, m, v.keys...)
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}

// BenchmarkRedraw is one throttled redraw with 8 endpoints after new Samples: snapshot,
// card text and sparklines (at most ~4 per second while data flows).
func BenchmarkRedraw(b *testing.B) {
	for _, v := range []struct {
		name string
		keys []string
	}{
		{"dashboard", nil}, {"compare", []string{"2"}}, {"detail", []string{"enter"}},
	} {
		b.Run(v.name, func(b *testing.B) {
			m, _ := newTestModel(b, 8, 120, 40, 30)
			m = press(b, m, v.keys...)
			extra := history(m.eps, 1)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				for _, ev := range extra {
					d := *ev.(*sample.Done)
					d.Sample.Start = d.Sample.Start.Add(time.Duration(i) * time.Millisecond)
					m = update(b, m, eventsMsg{events: []sample.Event{&d}})
				}
				m = update(b, m, redrawMsg{})
			}
		})
	}
}

// BenchmarkDeltaBatch is handling one full batch of stream deltas (no drawing).
func BenchmarkDeltaBatch(b *testing.B) {
	m, _ := newTestModel(b, 8, 120, 40, 0)
	m = press(b, m, "4", "ctrl+r")
	batch := make([]sample.Event, maxBatch)
	for i := range batch {
		batch[i] = &sample.Delta{Endpoint: sample.EndpointIndex(i % 8), Stream: 1, At: t0.Add(time.Duration(i) * time.Millisecond), Text: "token "}
	}
	b.ReportAllocs()
	for b.Loop() {
		m.streamScreen().run.panes[0].answer = m.streamScreen().run.panes[0].answer[:0]
		m = update(b, m, eventsMsg{events: batch})
	}
}
