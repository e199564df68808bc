package ui

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"tokscope/config"
	"tokscope/fanout"
	"tokscope/sample"
	"tokscope/sample/sampletest"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
	time.Local = time.UTC
	os.Exit(m.Run())
}

// t0 is the pinned clock of every test.
var t0 = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

func pinned() time.Time { return t0 }

// fakeControls records what the UI asked of the Runner.
type fakeControls struct {
	paused  map[sample.EndpointIndex]bool
	conc    map[sample.EndpointIndex]int
	streams []string // "ep:prompt"
	races   []string
	nextID  uint64
	dropped uint64
}

func newFakeControls() *fakeControls {
	return &fakeControls{paused: map[sample.EndpointIndex]bool{}, conc: map[sample.EndpointIndex]int{}}
}

func (e *fakeControls) SetPaused(ep sample.EndpointIndex, p bool)     { e.paused[ep] = p }
func (e *fakeControls) Paused(ep sample.EndpointIndex) bool           { return e.paused[ep] }
func (e *fakeControls) SetConcurrency(ep sample.EndpointIndex, n int) { e.conc[ep] = n }
func (e *fakeControls) Concurrency(ep sample.EndpointIndex) int {
	if n, ok := e.conc[ep]; ok {
		return n
	}
	return 1
}
func (e *fakeControls) Stream(ep sample.EndpointIndex, prompt string) uint64 {
	e.streams = append(e.streams, fmt.Sprintf("%d:%s", ep, prompt))
	e.nextID++
	return e.nextID
}
func (e *fakeControls) Race(prompt string) uint64 {
	e.races = append(e.races, prompt)
	e.nextID++
	return e.nextID
}
func (e *fakeControls) DroppedDeltas() uint64 { return e.dropped }

var endpointNames = []struct{ name, model, url string }{
	{"vllm-a100", "meta-llama/Llama-3.1-8B-Instruct", "http://10.0.0.5:8000/v1"},
	{"llama.cpp", "qwen2.5-coder-7b-q4_k_m", "http://127.0.0.1:8080/v1"},
	{"ollama", "deepseek-r1:14b", "http://127.0.0.1:11434/v1"},
	{"openrouter", "anthropic/claude-3.5-haiku", "https://openrouter.ai/api/v1"},
	{"groq", "llama-3.3-70b-versatile", "https://api.groq.com/openai/v1"},
	{"together", "mistralai/Mixtral-8x7B-Instruct-v0.1", "https://api.together.xyz/v1"},
	{"sglang-h100-with-a-very-long-endpoint-name", "Qwen/Qwen2.5-72B-Instruct", "http://10.0.0.9:30000/v1"},
	{"lmstudio", "phi-4", "http://192.168.1.20:1234/v1"},
}

func testEndpoints(n int) []config.Endpoint {
	eps := make([]config.Endpoint, n)
	for i := range eps {
		e := endpointNames[i%len(endpointNames)]
		eps[i] = config.Endpoint{Name: e.name, Model: e.model, BaseURL: e.url, Concurrency: 1, Cache: config.CacheBust}
	}
	if n > 1 {
		eps[1].Cache = config.CacheReuse // llama.cpp, measuring its prompt cache on purpose
	}
	return eps
}

// jitter is a deterministic value in [-1, 1] for endpoint ep, request seq.
func jitter(ep, seq int) float64 { return math.Sin(float64(ep*7919+seq*104729) * 0.001) }

// request is one request of a generated data set: of endpoint eps[i], number seq, started at
// start; ok at a speed (TTFT ms, decode chunks/s, its tokens and how many are reasoning), or
// failed when kind is set.
type request struct {
	i, seq            int
	start             time.Time
	ttft, decode      float64
	tokens, reasoning int
	kind, message     string
	status            int
}

// traffic is the Samples of the planned requests, as the probe reports them. An ok request is
// written at 0.3 ms, its headers at 60 % of its TTFT, a role-only chunk at 95 %; then its
// token chunks at its decode rate (reasoning ones first, 4 bytes each, a stall every 40th),
// counted by usage; its prompt 530 tokens, which the server's cache misses under bust, holds
// all but the last block of from the second request on under reuse, and OpenRouter does not
// report. The first request of an endpoint opens its connection (DNS, connect, TLS over
// https), the others reuse it. A failed request's headers come at 40 ms.
func traffic(eps []config.Endpoint, plan []request) []sample.Sample {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	out := make([]sample.Sample, 0, len(plan))
	for _, r := range plan {
		ep := eps[r.i]
		if r.kind != "" {
			out = append(out, sampletest.Err(ep.Name, ep.Model, uint64(r.seq), r.start, r.kind, r.status, r.message).
				Times(ms(1), ms(40)).EndAt(ms(41)).Sample())
			continue
		}
		b := sampletest.OK(ep.Name, ep.Model, uint64(r.seq), r.start).Times(ms(0.3), ms(r.ttft*0.6)).
			Role(ms(r.ttft * 0.95))
		at := r.ttft
		for k := range r.tokens {
			if k < r.reasoning {
				b.Chunk(ms(at), 0, 4)
			} else {
				b.Chunk(ms(at), 4, 0)
			}
			gap := 1000 / r.decode
			if k%40 == 39 {
				gap *= 6 // an occasional stall
			}
			at += gap
		}
		cached := 0
		switch {
		case ep.Cache == config.CacheReuse && r.seq > 1:
			cached = 528
		case strings.HasPrefix(ep.Name, "openrouter"):
			cached = -1
		}
		b.Tokens(r.tokens, sample.SourceUsage).Prompt(530, cached).EndAfter(ms(1)).
			With(func(s *sample.Sample) { s.ReasoningTokens, s.Cache = r.reasoning, ep.Cache })
		if r.seq == 1 {
			tls := sample.Absent
			if strings.HasPrefix(ep.BaseURL, "https") {
				tls = ms(24)
			}
			b.NewConn(ms(1.2), ms(0.8), tls)
		}
		out = append(out, b.Sample())
	}
	return out
}

// profile is each test endpoint's speed: TTFT ms, decode tok/s, tokens, reasoning tokens.
var profiles = []struct {
	ttft, decode      float64
	tokens, reasoning int
}{
	{95, 118, 120, 0}, {210, 42, 96, 0}, {480, 31, 140, 60}, {620, 88, 110, 0},
	{150, 260, 128, 0}, {340, 95, 100, 0}, {260, 55, 128, 0}, {900, 22, 64, 0},
}

// history is n finished requests per endpoint over the last minutes before t0, with a few
// errors on endpoint 3 (rate limited) and the last request of endpoint 1 failing.
func history(eps []config.Endpoint, n int) []sample.Event {
	var plan []request
	for seq := 1; seq <= n; seq++ {
		for i := range eps {
			p := profiles[i%len(profiles)]
			r := request{i: i, seq: seq, start: t0.Add(-time.Duration(n-seq+1) * 3 * time.Second).Add(time.Duration(i) * 100 * time.Millisecond),
				ttft: p.ttft * (1 + 0.25*jitter(i, seq)), decode: p.decode * (1 + 0.15*jitter(i+11, seq)), tokens: p.tokens, reasoning: p.reasoning}
			switch {
			case i == 3 && seq%5 == 0:
				r.kind, r.message, r.status = "http_429", "Rate limit exceeded: free-models-per-min (retry after 12s)", 429
			case i == 1 && seq == n:
				r.kind, r.message, r.status = "timeout", "context deadline exceeded after 120s", 0
			}
			plan = append(plan, r)
		}
	}
	var evs []sample.Event
	for k, s := range traffic(eps, plan) {
		evs = append(evs, &sample.Done{Endpoint: sample.EndpointIndex(plan[k].i), Sample: s})
	}
	return evs
}

// inFlight are the events of requests in flight at t0 on every other endpoint: sent 2 s
// before, first token 1.7 s before, tokens so far estimated (no per-chunk usage).
func inFlight(eps []config.Endpoint, seq int) []sample.Event {
	var evs []sample.Event
	for i := 0; i < len(eps); i += 2 {
		start := t0.Add(-2 * time.Second)
		evs = append(evs, &sample.Started{Endpoint: sample.EndpointIndex(i), Seq: uint64(seq), At: start},
			&sample.Progress{Endpoint: sample.EndpointIndex(i), Seq: uint64(seq), Start: start, At: 1900 * time.Millisecond,
				FirstEvent: 280 * time.Millisecond, FirstToken: 300 * time.Millisecond, FirstAnswer: 300 * time.Millisecond,
				Tokens: float64(40 + 30*i), Estimated: true, Chunks: 40 + 30*i, MaxTokens: 256})
	}
	return evs
}

// newTestModel is a model over n endpoints at w×h, fed with requests finished requests each.
func newTestModel(t testing.TB, n, w, h, requests int) (Model, *fakeControls) {
	t.Helper()
	ctl := newFakeControls()
	m := New(ctl, testEndpoints(n), make(chan sample.Event), Options{Now: pinned, Prompt: "Why is the sky blue?"})
	m = update(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	if requests > 0 {
		m = update(t, m, eventsMsg{events: history(m.eps, requests)})
		m = update(t, m, redrawMsg{})
	}
	return m, ctl
}

// update runs one message through Update, without running any Cmd. The events of an
// eventsMsg first reach the Model's Board, as the run's loop gives them to it before it
// queues them for the screen.
func update(t testing.TB, m Model, msg tea.Msg) Model {
	t.Helper()
	next, _ := m.Update(feed(m, msg))
	return next.(Model)
}

// throughLoop is the run's loop in front of a screen: it gives board every event of events
// as it comes and queues it for the screen, whose channel it returns.
func throughLoop(board *Board, events <-chan sample.Event) <-chan sample.Event {
	return fanout.NewLoop(events, fanout.Config{Observers: board, Screen: true}).Start().Screen()
}

// feed gives the events of msg, when it is an eventsMsg, to m's Board, as the run's loop
// does; it returns msg.
func feed(m Model, msg tea.Msg) tea.Msg {
	if em, ok := msg.(eventsMsg); ok {
		for _, ev := range em.events {
			m.board.Observe(ev)
		}
	}
	return msg
}

// press sends keys given as bubbletea key names ("tab", "enter", "q", "ctrl+r", "+").
func press(t testing.TB, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range keys {
		m = update(t, m, keyMsg(k))
	}
	return m
}

// keyTypes are the key names keyMsg knows; any other name is typed as runes.
var keyTypes = map[string]tea.KeyType{
	"enter": tea.KeyEnter, "esc": tea.KeyEsc, "tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab,
	"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
	"ctrl+c": tea.KeyCtrlC, "ctrl+r": tea.KeyCtrlR, "backspace": tea.KeyBackspace,
}

func keyMsg(k string) tea.KeyMsg {
	if typ, ok := keyTypes[k]; ok {
		return tea.KeyMsg{Type: typ}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// raceEvents is a race over every endpoint with id: started, some reasoning, text, one done
// and one failed.
func raceEvents(eps []config.Endpoint, id uint64) []sample.Event {
	var evs []sample.Event
	words := []string{"The ", "sky ", "looks ", "blue ", "because ", "air ", "molecules ", "scatter ",
		"short ", "blue ", "wavelengths ", "of ", "sunlight ", "more ", "than ", "red ", "ones—", "Rayleigh ",
		"scattering. ", "At ", "sunset ", "the ", "light ", "travels ", "further.\n\nSo ", "reds ", "remain."}
	for i := range eps {
		start := t0.Add(-4 * time.Second)
		evs = append(evs, &sample.Started{Endpoint: sample.EndpointIndex(i), Seq: 1, Stream: id, At: start})
		at := start.Add(time.Duration(profiles[i%len(profiles)].ttft) * time.Millisecond)
		if i == 2 {
			for j, w := range []string{"Okay, ", "the ", "user ", "asks ", "about ", "Rayleigh ", "scattering."} {
				evs = append(evs, &sample.Delta{Endpoint: sample.EndpointIndex(i), Stream: id, At: at, Text: w, Reasoning: true, Tokens: 1})
				at = at.Add(time.Duration(20+j) * time.Millisecond)
			}
		}
		first := at
		n := len(words) - i*3
		chunks := 0
		if i == 2 {
			chunks = 7
		}
		last := at
		for j, w := range words[:max(n, 3)] {
			gap := time.Duration(1000/profiles[i%len(profiles)].decode) * time.Millisecond
			if j == 9 && i == 1 {
				gap = 900 * time.Millisecond // a stall
			}
			evs = append(evs, &sample.Delta{Endpoint: sample.EndpointIndex(i), Stream: id, At: at, Text: w})
			chunks++
			last = at
			at = at.Add(gap)
		}
		// What the probe reported last: tokens so far estimated, 1.5 per chunk learned.
		evs = append(evs, &sample.Progress{Endpoint: sample.EndpointIndex(i), Seq: 1, Stream: id, Start: start, At: last.Sub(start),
			FirstEvent: first.Sub(start), FirstToken: first.Sub(start), FirstAnswer: first.Sub(start),
			Tokens: 1.5 * float64(chunks), Estimated: true, Chunks: chunks, MaxTokens: 256})
		if i == 0 {
			s := traffic(eps, []request{{i: i, seq: 1, start: start, ttft: profiles[0].ttft, decode: profiles[0].decode, tokens: len(words)}})[0]
			evs = append(evs, &sample.Done{Endpoint: sample.EndpointIndex(i), Stream: id, Sample: s})
		}
		if i == 3 {
			s := traffic(eps, []request{{i: i, seq: 1, start: start, kind: "stream_error", message: "upstream provider error: overloaded", status: 200}})[0]
			evs = append(evs, &sample.Done{Endpoint: sample.EndpointIndex(i), Stream: id, Sample: s})
		}
	}
	return evs
}

func resize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// The model knows no view by kind; tests look into them through its table.
func (m *Model) streamScreen() *streamView   { return m.views[viewStream].(*streamView) }
func (m *Model) compareScreen() *compareView { return m.views[viewCompare].(*compareView) }
