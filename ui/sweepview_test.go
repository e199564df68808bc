package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"tokscope/config"
	"tokscope/fanout"
	"tokscope/sample"
	"tokscope/sample/sampletest"
	"tokscope/stats"
	"tokscope/sweep"
)

// scriptedSchedule is a sweep's schedule as a test writes it: each step begins, and the last
// ends, at the instants it says.
type scriptedSchedule struct {
	starts []time.Time
	end    time.Time
}

func (s *scriptedSchedule) begin(at time.Time)                 { s.starts = append(s.starts, at) }
func (s *scriptedSchedule) finish(at time.Time)                { s.end = at }
func (s *scriptedSchedule) Schedule() ([]time.Time, time.Time) { return s.starts, s.end }

// sweepPlan is the test sweep: c 1, 2, 4, 8, 16 × 30 s.
var sweepPlan = sweep.Plan{Concurrency: []int{1, 2, 4, 8, 16}, StepDuration: 30 * time.Second}

// sweepEvents scripts a sweep over eps whose steps began at t0−100 s, −70 s, −40 s and −10 s:
// three steps are over (and final at t0), the fourth runs with 20 s left. Each endpoint runs
// the step's concurrency of back-to-back streams that slow down as it grows.
func sweepEvents(sw *scriptedSchedule, eps []config.Endpoint) []sample.Event {
	var plan []request
	seq := 0
	for k := range 4 {
		start := t0.Add(time.Duration(-100+30*k) * time.Second)
		sw.begin(start)
		if k == 3 {
			break // running: nothing finished yet
		}
		conc := sweepPlan.Concurrency[k]
		for i := range eps {
			p := profiles[i%len(profiles)]
			ttft := p.ttft * (1 + 0.3*float64(k))
			decode := p.decode / (1 + 0.12*float64(k)*float64(i+1))
			dur := time.Duration((ttft + float64(p.tokens)*1000/decode) * float64(time.Millisecond))
			for stream := range conc {
				at := start.Add(time.Duration(stream) * 37 * time.Millisecond)
				for at.Add(dur).Before(start.Add(sweepPlan.StepDuration)) {
					seq++
					r := request{i: i, seq: seq, start: at, ttft: ttft * (1 + 0.1*jitter(i, seq)), decode: decode, tokens: p.tokens}
					if i == 3 && seq%4 == 0 {
						r.kind, r.message, r.status = "http_429", "rate limited", 429
					}
					plan = append(plan, r)
					at = at.Add(dur + 50*time.Millisecond)
				}
			}
		}
	}
	var evs []sample.Event
	for k, s := range traffic(eps, plan) {
		evs = append(evs, &sample.Done{Endpoint: sample.EndpointIndex(plan[k].i), Sample: s})
	}
	return evs
}

// newSweepModel is a model over n endpoints running sweepPlan, three steps done.
func newSweepModel(t testing.TB, n, w, h int) Model {
	t.Helper()
	eps := testEndpoints(n)
	sw := &scriptedSchedule{}
	m := New(newFakeControls(), eps, make(chan sample.Event), Options{Now: pinned, Board: NewBoard(eps, sweep.NewTracker(sweepPlan, sw, eps, pinned), nil)})
	m = update(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	m = update(t, m, eventsMsg{events: sweepEvents(sw, eps)})
	m = update(t, m, redrawMsg{})
	return m
}

// fakeArrivals is the fake Controls of an open-loop run.
type fakeArrivals struct {
	*fakeControls
}

func (fakeArrivals) Arrivals(ep sample.EndpointIndex) (uint64, uint64) {
	return uint64(100 + 10*ep), uint64(ep * ep)
}

// Waiting: the last endpoint is overloaded, two arrivals wait (for 12.8 s and 3 s).
func (fakeArrivals) Waiting(ep sample.EndpointIndex) []time.Time {
	if ep != 3 {
		return nil
	}
	return []time.Time{t0.Add(-12800 * time.Millisecond), t0.Add(-3 * time.Second)}
}

// newRateModel is the dashboard of an open-loop run at 2/s, with client queue times.
func newRateModel(t testing.TB, n, w, h int) Model {
	t.Helper()
	eps := testEndpoints(n)
	m := New(fakeArrivals{newFakeControls()}, eps, make(chan sample.Event), Options{Now: pinned, Board: NewBoard(eps, nil, nil, stats.WithRate(2))})
	m = update(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	evs := history(eps, 30)
	for i, ev := range evs {
		if d, ok := ev.(*sample.Done); ok {
			d.Sample.Queue = time.Duration(float64(i%9)*float64(d.Endpoint+1)*37) * time.Millisecond
		}
	}
	m = update(t, m, eventsMsg{events: evs})
	m = update(t, m, redrawMsg{})
	return m
}

// TestGoldenSweep: the sweep view with three steps done and the fourth running, and the
// dashboard of an open-loop run (queue line on every card).
func TestGoldenSweep(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("sweep_%dx%d", size[0], size[1]), func(t *testing.T) {
			m := newSweepModel(t, 4, size[0], size[1])
			golden.RequireEqual(t, []byte(m.View()))
		})
		t.Run(fmt.Sprintf("rate_dashboard_%dx%d", size[0], size[1]), func(t *testing.T) {
			m := newRateModel(t, 4, size[0], size[1])
			golden.RequireEqual(t, []byte(m.View()))
		})
	}
	t.Run("no_sweep_80x24", func(t *testing.T) {
		m, _ := newTestModel(t, 4, 80, 24, 3)
		m = press(t, m, "5")
		golden.RequireEqual(t, []byte(m.View()))
	})
}

// TestLayoutPropertySweep renders the sweep view (and the open-loop dashboard) at every size
// of the layout property test: no line wider than the terminal, no more lines than its height.
func TestLayoutPropertySweep(t *testing.T) {
	wStep, hStep := 5, 4
	if testing.Short() || raceBuild {
		wStep, hStep = 13, 9
	}
	for _, n := range []int{0, 1, 4, 8} {
		for _, v := range []struct {
			name string
			m    func() Model
		}{
			{"no sweep", func() Model { m, _ := newTestModel(t, n, 80, 24, 3); return press(t, m, "5") }},
			{"sweep", func() Model { return newSweepModel(t, n, 80, 24) }},
			{"sweep-right", func() Model { return press(t, newSweepModel(t, n, 80, 24), "right", "right") }},
			{"rate", func() Model { return newRateModel(t, n, 80, 24) }},
		} {
			m := v.m()
			for w := 20; w <= 250; w += wStep {
				for h := 5; h <= 80; h += hStep {
					m = update(t, m, resize(w, h))
					checkFits(t, m.View(), w, h, v.name, n)
				}
			}
		}
	}
}

// The sweep view is in the header and the Tab cycle only while a sweep runs; a sweep opens on
// it; 5 always shows it.
func TestSweepViewSwitching(t *testing.T) {
	m := newSweepModel(t, 2, 120, 30)
	if m.view != viewSweep || !strings.Contains(m.header, "5 Sweep") {
		t.Fatalf("a sweep opens on view %s; header %q", m.views[m.view].Name(), m.header)
	}
	for i, want := range []view{viewDashboard, viewCompare, viewDetail, viewStream, viewSweep} {
		if m = press(t, m, "tab"); m.view != want {
			t.Fatalf("tab %d: %s, want %s", i+1, m.views[m.view].Name(), m.views[want].Name())
		}
	}
	if m = press(t, m, "esc"); m.view != viewDashboard {
		t.Fatalf("esc from the sweep view: %s", m.views[m.view].Name())
	}

	plain, _ := newTestModel(t, 2, 120, 30, 2)
	if strings.Contains(plain.header, "Sweep") {
		t.Fatalf("header of a run without a sweep: %q", plain.header)
	}
	if plain = press(t, plain, "shift+tab"); plain.view != viewStream {
		t.Fatalf("shift+tab from the dashboard without a sweep: %s", plain.views[plain.view].Name())
	}
	if plain = press(t, plain, "5"); plain.view != viewSweep || !strings.Contains(plain.View(), "--sweep 1,2,4,8,16") {
		t.Fatalf("5 without a sweep:\n%s", plain.View())
	}
}

// Steps fill in live: a step's row and chart points appear once it is final, and the clock
// alone finalizes a step that ended without any event.
func TestSweepFillsInLive(t *testing.T) {
	now := t0
	clock := func() time.Time { return now }
	eps := testEndpoints(1)
	sw := &scriptedSchedule{}
	tr := sweep.NewTracker(sweep.Plan{Concurrency: []int{1, 2}, StepDuration: 10 * time.Second}, sw, eps, clock)
	m := New(newFakeControls(), eps, make(chan sample.Event), Options{Now: clock, Board: NewBoard(eps, tr, nil)})
	m = update(t, m, resize(120, 40))
	if !strings.Contains(m.View(), "waiting for the warm-ups") || !strings.Contains(m.View(), "no step finished yet") {
		t.Fatalf("before the first step:\n%s", m.View())
	}
	sw.begin(t0)
	ep, ms := eps[0], time.Millisecond
	s := sampletest.OK(ep.Name, ep.Model, 1, t0.Add(time.Second)).Times(300*time.Microsecond, 60*ms).Role(95*ms).
		Chunks(20, 100*ms, 20*ms, 4).Tokens(20, sample.SourceUsage).Prompt(530, 0).EndAfter(ms).
		NewConn(1200*time.Microsecond, 800*time.Microsecond, sample.Absent). // the first request, over http
		With(func(s *sample.Sample) { s.Cache = ep.Cache }).Sample()
	m = update(t, m, eventsMsg{events: []sample.Event{&sample.Done{Endpoint: 0, Sample: s}}})
	now = t0.Add(3 * time.Second)
	m = update(t, m, redrawMsg{})
	if !strings.Contains(m.View(), "step 1/2") || !strings.Contains(m.View(), "running") {
		t.Fatalf("during step 1:\n%s", m.View())
	}
	sw.begin(t0.Add(10 * time.Second))
	now = t0.Add(11 * time.Second)
	m = update(t, m, clockMsg{})
	if got := tr.Results(); len(got) != 1 || got[0].Requests != 1 {
		t.Fatalf("after step 1 ended: %+v", got)
	}
	if !strings.Contains(m.View(), "step 2/2") || strings.Contains(m.View(), "no step finished yet") {
		t.Fatalf("step 1 is not drawn:\n%s", m.View())
	}
	sw.finish(t0.Add(20 * time.Second))
	now = t0.Add(21 * time.Second)
	m = update(t, m, clockMsg{})
	if !strings.Contains(m.View(), "complete: 2 steps") {
		t.Fatalf("after the sweep:\n%s", m.View())
	}
}

// Endpoints with the same figures: every letter still shows at every step (one took the
// next free cell instead of hiding the other).
func TestSweepChartLettersDoNotHideEachOther(t *testing.T) {
	st := DefaultStyles()
	c := &sweepChart{styles: &st, style: st.SparkDecode}
	same := []float64{120, 230, 410, 520}
	c.Set("aggregate tok/s by concurrency", []string{"1", "2", "4", "8"}, [][]float64{same, same, {120, 231, 405, 600}}, 60, 16)
	view := ansi.Strip(c.View())
	for _, letter := range []string{"A", "B", "C"} {
		if n := strings.Count(view, letter); n != 4 {
			t.Errorf("%s shows %d times, want once per step (4):\n%s", letter, n, view)
		}
	}
}

// The end of the Runner's events (End, from the run's loop) closes the sweep's steps on the
// Board: a step still waiting for a request in flight is final, and the view says the sweep
// was interrupted; the screen marks the run stopped.
func TestSweepEndClosesTheSteps(t *testing.T) {
	now := t0
	clock := func() time.Time { return now }
	eps := testEndpoints(1)
	sw := &scriptedSchedule{}
	tr := sweep.NewTracker(sweep.Plan{Concurrency: []int{1, 2}, StepDuration: 10 * time.Second}, sw, eps, clock)
	m := New(newFakeControls(), eps, make(chan sample.Event), Options{Now: clock, Board: NewBoard(eps, tr, nil)})
	m = update(t, m, resize(120, 40))
	sw.begin(t0)
	m = update(t, m, eventsMsg{events: []sample.Event{&sample.Started{Endpoint: 0, Seq: 1, At: t0.Add(9 * time.Second)}}})
	sw.begin(t0.Add(10 * time.Second))
	now = t0.Add(12 * time.Second)
	m = update(t, m, clockMsg{})
	if p := tr.Progress(); p.Finished != 0 {
		t.Fatalf("step 1 final with its request in flight: %+v", p)
	}
	m = update(t, m, eventsMsg{events: []sample.Event{&fanout.End{}}})
	m = update(t, m, redrawMsg{})
	if p := tr.Progress(); p.Finished != 1 || !p.Interrupted {
		t.Fatalf("after End: %+v, want step 1 final, the sweep interrupted", p)
	}
	if !m.stopped || !strings.Contains(m.View(), "interrupted") {
		t.Fatalf("after End the view does not say the sweep was interrupted:\n%s", m.View())
	}
}

// Each endpoint is named once in the sweep view: the charts' legend is the table's title, and
// ←/→ are offered only when there is another endpoint to choose.
func TestSweepNamesEachEndpointOnce(t *testing.T) {
	for _, n := range []int{1, 3} {
		for _, w := range []int{80, 120} {
			m := newSweepModel(t, n, w, 30)
			screen := m.View()
			for _, ep := range m.eps {
				if c := strings.Count(screen, ep.Name); c != 1 {
					t.Errorf("%d endpoint(s), %d columns: %q shows %d times:\n%s", n, w, ep.Name, c, screen)
				}
			}
			if got := strings.Contains(screen, "←/→ endpoint"); got != (n > 1) {
				t.Errorf("%d endpoint(s), %d columns: ←/→ offered %v:\n%s", n, w, got, screen)
			}
		}
	}
}
