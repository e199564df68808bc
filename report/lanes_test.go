package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/workload"
)

// A run of agent sessions gets the "Agent sessions" section: a lanes chart per endpoint, with
// a bar for each turn (decode thick from the first token), failed turns in the error colour,
// and the ideal and served cache hits; a run without sessions has none of it.
func TestLanesSection(t *testing.T) {
	cfg := []config.Endpoint{{Name: "a", Model: "m"}}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var samples []sample.Sample
	for lane := 1; lane <= 2; lane++ {
		for turn := 1; turn <= 3; turn++ {
			s := sample.Sample{Endpoint: "a", Model: "m", Start: t0.Add(time.Duration(turn) * time.Second), FirstToken: 200 * time.Millisecond,
				FirstAnswer: 200 * time.Millisecond, LastToken: 600 * time.Millisecond, End: 600 * time.Millisecond,
				Outcome: sample.OutcomeOK, Tokens: 20, PromptTokens: 1000, CachedTokens: 500,
				Chunks: []sample.Chunk{{At: 200 * time.Millisecond, Content: 4}, {At: 600 * time.Millisecond, Content: 4}},
				Session: &workload.SessionTurn{ID: uint64(lane), Root: uint64(lane), Lane: lane, Turn: turn, SessionTurns: 3,
					IdealCached: 800, PromptTokens: 1000}}
			if lane == 2 && turn == 3 {
				s.Outcome, s.ErrorKind, s.FirstToken, s.FirstAnswer, s.LastToken = sample.OutcomeError, "http_500", sample.Absent, sample.Absent, sample.Absent
				s.Chunks = nil
			}
			samples = append(samples, s)
		}
	}
	var buf bytes.Buffer
	if err := Write(&buf, synthInput(t, cfg, samples)); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{`id="lanes"`, `id="lanes-0"`, "a: lanes", "80.0%", "50.0%", "62.5%", "stroke:#D62728"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// With a 100 ms TTFT objective every turn (200 ms) misses it: drawn in the error colour
	// even when none failed.
	ok := append([]sample.Sample(nil), samples[:5]...)
	slo := []config.Endpoint{{Name: "a", Model: "m", SLO: config.SLO{TTFT: 100 * time.Millisecond}}}
	buf.Reset()
	if err := Write(&buf, synthInput(t, slo, ok)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "stroke:#D62728") {
		t.Error("turns that missed the objectives are not in the error colour")
	}
	buf.Reset()
	if err := Write(&buf, synthInput(t, cfg, ok)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "stroke:#D62728") {
		t.Error("ok turns without objectives in the error colour")
	}
	for i := range samples {
		samples[i].Session = nil
	}
	buf.Reset()
	if err := Write(&buf, synthInput(t, cfg, samples)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `id="lanes"`) {
		t.Error("a run without sessions has a lanes section")
	}
}

// Sub-agents running at once get rows of their own under their lane, a row is taken again
// once its sub-agent ended, and each sub-agent is tied to its parent's row at its fork and
// its join.
func TestLaneLayoutSubAgents(t *testing.T) {
	s := int64(time.Second)
	req := func(lane, depth int, ctx, parent uint64, from, to float64) request {
		return request{start: int64(from * float64(s)), end: int64(to * float64(s)), outcome: sample.OutcomeOK,
			turn: laneTurn{lane: lane, depth: depth, ctx: ctx, parent: parent}}
	}
	reqs := []request{
		req(1, 0, 1, 0, 0, 1), req(1, 1, 2, 1, 2, 5), req(1, 1, 3, 1, 3, 6), req(1, 1, 3, 1, 7, 8),
		req(1, 2, 5, 3, 4, 4.5), // under sub-agent 3, while 2 and 3 run: a third row
		req(1, 1, 4, 1, 6, 7),   // after sub-agent 2 ended: its row again
		req(1, 0, 1, 0, 10, 11), req(2, 0, 6, 0, 0, 2),
	}
	ctxs, ticks := laneLayout(reqs)
	want := map[uint64]float64{1: 5, 2: 4, 3: 3, 5: 2, 4: 4, 6: 1}
	for id, y := range want {
		if ctxs[id] == nil || ctxs[id].y != y {
			t.Errorf("context %d on y %v, want %v", id, ctxs[id], y)
		}
	}
	var labels []string
	for _, tk := range ticks {
		labels = append(labels, strconv.FormatFloat(tk.Value, 'f', -1, 64)+":"+tk.Label)
	}
	if got := strings.Join(labels, " "); got != "5:1 4:sub 3:sub 2:sub 1:2" {
		t.Errorf("ticks %s", got)
	}
	ep := endpointRef{name: "a", series: &endpointSeries{requests: reqs}}
	c := laneChart(ep, 0)
	links := c.layers[0]
	if links.width != 0.5 {
		t.Fatalf("first layer is not the links: %+v", links)
	}
	// Sub-agent 5 forks from sub-agent 3's row (y 3) down to its own (y 2) at 4 s, and joins
	// back up at 4.5 s.
	found := false
	for i := 0; i+5 < len(links.xs); i += 6 {
		if links.xs[i] == 4 && links.ys[i] == 3 && links.ys[i+1] == 2 && links.xs[i+4] == 4.5 && links.ys[i+5] == 3 {
			found = true
		}
	}
	if !found {
		t.Errorf("no fork and join of sub-agent 5 in %v %v", links.xs, links.ys)
	}
}

// A turn misses its TTFT objective, and is drawn in the error colour, by the run's
// --ttft-from: first token at 50 ms and first answer at 300 ms meet a 100 ms objective under
// first-token and miss it under first-answer; the thin part ends at the instant it names.
func TestLanesTTFTFrom(t *testing.T) {
	cfg := []config.Endpoint{{Name: "a", Model: "m", SLO: config.SLO{TTFT: 100 * time.Millisecond}}}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := sample.Sample{Endpoint: "a", Model: "m", Start: t0, FirstEvent: 50 * time.Millisecond, FirstToken: 50 * time.Millisecond,
		FirstAnswer: 300 * time.Millisecond, LastToken: 600 * time.Millisecond, End: 600 * time.Millisecond,
		Outcome: sample.OutcomeOK, Tokens: 20, CachedTokens: -1,
		Chunks:  []sample.Chunk{{At: 50 * time.Millisecond, Reasoning: 4}, {At: 300 * time.Millisecond, Content: 4}, {At: 600 * time.Millisecond, Content: 4}},
		Session: &workload.SessionTurn{ID: 1, Root: 1, Lane: 1, Turn: 1}}
	for _, c := range []struct {
		from   sample.TTFTFrom
		failed bool
		thinTo float64
	}{{sample.TTFTFirstToken, false, 0.05}, {sample.TTFTFirstAnswer, true, 0.3}} {
		col := NewCollector(cfg)
		col.SetTTFTFrom(c.from)
		cp := s
		col.Add(&cp)
		ch := laneChart(endpointRef{name: "a", series: col.eps[0]}, t0.UnixNano())
		var failed bool
		for _, l := range ch.layers {
			failed = failed || l.failed
		}
		if failed != c.failed {
			t.Errorf("%s: drawn failed %v, want %v", c.from, failed, c.failed)
		}
		// Without the objective, the thin part (wait) ends at the first token it names.
		col = NewCollector([]config.Endpoint{{Name: "a", Model: "m"}})
		col.SetTTFTFrom(c.from)
		cp = s
		col.Add(&cp)
		ch = laneChart(endpointRef{name: "a", series: col.eps[0]}, t0.UnixNano())
		if w := ch.layers[0]; w.width != 1.5 || !near(w.xs[1], c.thinTo) {
			t.Errorf("%s: the thin part %+v, want it to end at %v s", c.from, w, c.thinTo)
		}
	}
}

// Where the server reports its queue, a turn's bar is dashed for it before its thin part.
func TestLanesServerQueue(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	srv := sample.NoServerTiming("vllm")
	srv.QueueMs, srv.TTFTms = 100, 280
	s := sample.Sample{Endpoint: "a", Model: "m", Start: t0, Wrote: 0, FirstToken: 300 * time.Millisecond, FirstAnswer: 300 * time.Millisecond,
		LastToken: 600 * time.Millisecond, End: 600 * time.Millisecond, Outcome: sample.OutcomeOK, Tokens: 20, CachedTokens: -1, Server: &srv,
		Chunks:  []sample.Chunk{{At: 300 * time.Millisecond, Content: 4}, {At: 600 * time.Millisecond, Content: 4}},
		Session: &workload.SessionTurn{ID: 1, Root: 1, Lane: 1, Turn: 1}}
	col := NewCollector([]config.Endpoint{{Name: "a", Model: "m"}})
	col.Add(&s)
	ch := laneChart(endpointRef{name: "a", series: col.eps[0]}, t0.UnixNano())
	var queue, wait *layer
	for i := range ch.layers {
		switch l := &ch.layers[i]; {
		case l.dashed:
			queue = l
		case l.width == 1.5:
			wait = l
		}
	}
	if queue == nil || wait == nil || !near(queue.xs[0], 0) || !near(queue.xs[1], 0.1) || !near(wait.xs[0], 0.1) || !near(wait.xs[1], 0.3) {
		t.Errorf("queue %+v, wait %+v", queue, wait)
	}
}
