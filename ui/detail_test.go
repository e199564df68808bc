package ui

import (
	"strings"
	"testing"
	"time"

	"tokscope/sample"
	"tokscope/sample/sampletest"
)

// The detail view says when an endpoint's server closes every connection (connect time is
// then in every TTFT there), and only for that endpoint.
func TestDetailSaysConnPerRequest(t *testing.T) {
	m, _ := newTestModel(t, 2, 120, 40, 5)
	ep, ms := m.eps[0], time.Millisecond
	s := sampletest.OK(ep.Name, ep.Model, 6, t0.Add(-time.Second)).Times(300*time.Microsecond, 60*ms).Role(95*ms).
		Chunks(20, 100*ms, 10*ms, 4).Tokens(20, sample.SourceUsage).Prompt(530, 0).EndAfter(ms).
		With(func(s *sample.Sample) { s.Cache = ep.Cache }).Sample()
	m = update(t, m, eventsMsg{events: []sample.Event{
		&sample.Done{Endpoint: 0, Sample: s},
		&sample.Status{Endpoint: 0, State: sample.StateIdle, Concurrency: 1, ConnPerRequest: true},
	}})
	m = update(t, m, redrawMsg{})
	m = press(t, m, "enter")
	const want = "server closes every connection:"
	if !strings.Contains(m.View(), want) {
		t.Errorf("detail view lacks %q:\n%s", want, m.View())
	}
	m = press(t, m, "right")
	if strings.Contains(m.View(), want) {
		t.Errorf("the other endpoint's detail says it too:\n%s", m.View())
	}
}

// While the run's last requests finish within the grace, the footer says how many.
func TestFooterSaysFinishing(t *testing.T) {
	m, _ := newTestModel(t, 2, 120, 40, 5)
	m = update(t, m, eventsMsg{events: []sample.Event{
		&sample.Status{Endpoint: 0, State: sample.StateFinishing, InFlight: 3, Concurrency: 3},
		&sample.Status{Endpoint: 1, State: sample.StateFinishing, InFlight: 1, Concurrency: 1},
	}})
	footer := func() string {
		lines := strings.Split(m.View(), "\n")
		return lines[len(lines)-1]
	}
	if !strings.Contains(footer(), "finishing 4 requests…") {
		t.Errorf("footer %q", footer())
	}
	m = update(t, m, eventsMsg{events: []sample.Event{
		&sample.Status{Endpoint: 0, State: sample.StateStopped, Concurrency: 3},
	}})
	if !strings.Contains(footer(), "finishing 1 request…") {
		t.Errorf("footer %q", footer())
	}
	m = update(t, m, eventsMsg{events: []sample.Event{
		&sample.Status{Endpoint: 1, State: sample.StateStopped, Concurrency: 1},
	}, closed: true})
	if strings.Contains(footer(), "finishing") {
		t.Errorf("footer %q after the run ended", footer())
	}
}

// After identical permanent errors the card says why the endpoint backs off.
func TestCardSaysWhyItBacksOff(t *testing.T) {
	m, _ := newTestModel(t, 2, 120, 40, 5)
	ep, ms := m.eps[0], time.Millisecond
	e := sampletest.Err(ep.Name, ep.Model, 6, t0.Add(-time.Second), "http_404", 404, "404 Not Found: The model does not exist").
		Times(ms, 40*ms).EndAt(41 * ms).Sample()
	m = update(t, m, eventsMsg{events: []sample.Event{
		&sample.Done{Endpoint: 0, Sample: e},
		&sample.Status{Endpoint: 0, State: sample.StateBackoff, Until: t0.Add(4 * time.Second), Backoff: 4 * time.Second,
			Reason: "3× http_404 in a row: 404 Not Found: The model does not exist"},
	}})
	m = update(t, m, redrawMsg{})
	if view := m.View(); !strings.Contains(view, "3× http_404 in a row") || !strings.Contains(view, "backing off 4s") {
		t.Errorf("the card does not say why it backs off:\n%s", view)
	}
}
