// Package workload builds what each request of an endpoint sends: its messages (a fixed
// prompt, a synthetic prompt of N tokens, or the next entry of a prompts file), the tag that
// keeps server prefix caches from serving it (--cache bust), and its output length
// (max_tokens, and ignore_eos + min_tokens for --output-tokens).
//
// It imports config and the offline tokenizer; never probe, stats, export, ui, bubbletea or
// lipgloss.
package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"

	"tokscope/config"
)

// Message is one chat message.
type Message struct {
	Role    string
	Content string
	// Parts holds the texts of a content given as an array of {"type": "text"} parts, sent
	// as such; nil when the content is a plain string (then Content holds it).
	Parts []string
	// ToolCalls are an assistant message's tool calls, and ToolCallID names the call a
	// "tool" message answers (agent sessions, sessions_tools.go); each API sends them in its
	// own form.
	ToolCalls  []ToolCall
	ToolCallID string
}

// ToolCall is one tool call of an assistant message: its id, the function's name and its
// arguments (a JSON object, as text).
type ToolCall struct {
	ID, Name, Arguments string
}

// Request is what one request sends beyond the endpoint's fixed settings (model, headers,
// extra_body).
type Request struct {
	// Index is the request's place in the workload's sequence, from 0: request i of a
	// prompts file is its entry i mod len, and its random draws depend on i alone.
	Index    uint64
	Messages []Message
	// MaxTokens is the request's max_tokens (the model's max_completion_tokens).
	MaxTokens int
	// MinTokens > 0 asks the server to produce exactly MaxTokens tokens: the body also gets
	// "ignore_eos": true and "min_tokens": MinTokens (--output-tokens). Servers that do not
	// know the fields ignore them (vLLM and SGLang honour ignore_eos; vLLM min_tokens).
	MinTokens int
	// PromptTokens is the prompt's length in the offline tokenizer for a synthetic prompt
	// (tag included), 0 otherwise. The server's count (usage) adds its chat template.
	PromptTokens int
	// Tag is the cache-busting tag the prompt starts with; "" under --cache reuse. A
	// conversation's turns all carry its first turn's tag.
	Tag string
	// Conversation is the request's conversation under --turns (from 1, per endpoint) and
	// Turn its place in it (from 1); both 0 outside conversations (convo.go).
	Conversation uint64
	Turn         int
	// Session places the request in an agent session under --sessions (sessions_build.go);
	// nil otherwise.
	Session *SessionTurn
}

// Options are a workload's run-wide settings.
type Options struct {
	// Seed drives every draw: the lengths of synthetic prompts and outputs and where a
	// synthetic prompt is cut from the corpus. Same seed, same prompts (apart from the tag's
	// run id, see RunID).
	Seed uint64
	// Endpoint is the endpoint's index in the run: mixed into the seed so that two endpoints
	// (which may be one server under two names) do not send the same texts.
	Endpoint int
	// Prompts is the loaded prompts file when the endpoint names one; nil loads it (Load).
	Prompts *Set
	// RunID goes into every tag; "" draws a random one. It is not derived from Seed on
	// purpose: a second run with the same seed must not find its prompts in the prefix cache
	// the first run filled.
	RunID string
}

// Workload hands out the requests of one endpoint. Next is safe for concurrent use.
type Workload struct {
	ep     config.Endpoint
	set    *Set
	corpus *corpus // synthetic prompts only
	seed   uint64
	stream uint64
	runID  string

	minInput    int    // the shortest synthetic prompt: the tag and one token of text
	prefix      string // the --shared-prefix system text; "" without
	convs       atomic.Uint64
	trace       []Request     // the requests of a --trace, cut by UseTrace
	sess        *sessionState // the agent sessions of --sessions (UseSessions); nil without
	next        atomic.Uint64
	interactive atomic.Uint64
}

// New prepares the workload of ep. It fails when ep's prompts file cannot be loaded (a
// *FileError), or when a synthetic prompt cannot be built (the tokenizer is unavailable, or
// --input-tokens is shorter than the cache-busting tag).
func New(ep config.Endpoint, o Options) (*Workload, error) {
	w := &Workload{
		ep:     ep,
		seed:   o.Seed,
		stream: 0x6a09e667f3bcc909 ^ uint64(o.Endpoint)<<40,
		runID:  o.RunID,
	}
	if w.ep.Cache == "" {
		w.ep.Cache = config.DefaultCache
	}
	if w.runID == "" {
		w.runID = fmt.Sprintf("%09d", rand.N(1_000_000_000))
	}
	if err := w.sharedPrefix(); err != nil {
		return nil, err
	}
	switch {
	case ep.Prompts != "":
		w.set = o.Prompts
		if w.set == nil {
			set, err := Load(ep.Prompts)
			if err != nil {
				return nil, err
			}
			w.set = set
		}
	case ep.InputTokens.IsSet():
		c, err := loadCorpus()
		if err != nil {
			return nil, fmt.Errorf("synthetic prompts need the offline tokenizer: %w", err)
		}
		w.corpus = c
		w.minInput = 1
		if w.busting() {
			n, err := c.codec.Count(strings.TrimSuffix(w.tag(0), " "))
			if err != nil {
				return nil, err
			}
			w.minInput = n + 1
		}
		if ep.InputTokens.N < w.minInput {
			return nil, fmt.Errorf("input_tokens (--input-tokens) %d is shorter than a prompt under --cache bust can be: its tag takes %d tokens; "+
				"give at least %d, or --cache reuse", ep.InputTokens.N, w.minInput-1, w.minInput)
		}
	}
	return w, nil
}

// Endpoint is the endpoint the workload serves (its cache mode filled in).
func (w *Workload) Endpoint() config.Endpoint { return w.ep }

func (w *Workload) busting() bool { return w.ep.Cache == config.CacheBust }

// tag is request i's cache-busting tag, with the space that separates it from the text.
// It comes first in the prompt, so the longest prefix any cache can match ends inside it; a
// bracketed reference like a ticket number, it reads as metadata and models leave it out of
// their answer. The run id has a fixed number of digits, so the tag's length in tokens, and
// with it the rest of a synthetic prompt, does not change from run to run.
func (w *Workload) tag(i uint64) string {
	return fmt.Sprintf("[tokscope %s-%d] ", w.runID, i+1)
}

// Next returns the next request. It never fails: every input was checked by New and Load.
func (w *Workload) Next() Request {
	i := w.next.Add(1) - 1
	return w.withPrefix(w.build(i, w.busting()))
}

// build is request i, behind its tag when tagged.
func (w *Workload) build(i uint64, tagged bool) Request {
	rng := rand.New(rand.NewPCG(w.seed, w.stream^i))
	req := Request{Index: i, MaxTokens: w.ep.MaxTokens}
	if tagged {
		req.Tag = w.tag(i)
	}
	// The draws come in a fixed order, each whether it is used or not, so that changing
	// one setting does not change the others' draws.
	inLen := draw(rng, w.ep.InputTokens, max(w.minInput, 1))
	start := rng.IntN(1 << 30)
	outLen := draw(rng, w.ep.OutputTokens, 1)

	switch {
	case w.set != nil:
		item := w.set.Items[i%uint64(len(w.set.Items))]
		req.Messages = withTag(item.Messages, req.Tag)
		if item.MaxTokens > 0 {
			req.MaxTokens = item.MaxTokens
		}
	case w.corpus != nil:
		text, n := w.synthetic(req.Tag, w.busting(), start, inLen)
		req.Messages = []Message{{Role: "user", Content: text}}
		req.PromptTokens = n
	default:
		req.Messages = []Message{{Role: "user", Content: req.Tag + w.ep.Prompt}}
	}
	if w.ep.OutputTokens.IsSet() {
		req.MaxTokens, req.MinTokens = outLen, outLen
	}
	return req
}

// synthetic is a prompt of n tokens: tag, then text from the corpus. Under bust every
// request's text starts at its own word of the corpus; under reuse every prompt starts at
// the corpus's beginning, so that a shorter prompt is a prefix of a longer one and a prefix
// cache can serve it. Should the exact cut fail (it has never been seen to), the prompt is
// the plain corpus text of n tokens as decoded, and its length is counted, not assumed.
func (w *Workload) synthetic(tag string, spread bool, start, n int) (string, int) {
	c := w.corpus
	at := 0
	prefix := strings.TrimSuffix(tag, " ") // the text brings its own space
	if spread {
		at = c.starts[start%len(c.starts)]
	}
	if tag != "" {
		if t, err := c.codec.Count(prefix); err == nil && n <= t {
			n = t + 1 // a later request's tag has more digits than the first one's
		}
	}
	if s, err := c.exact(prefix, at, n); err == nil {
		return s, n
	}
	body, _ := c.text(at, n)
	s := prefix + body
	got, _ := c.codec.Count(s)
	return s, got
}

// Interactive returns the request for a prompt typed by the user (the Stream and Race
// views): the prompt as given, behind its own tag under bust, with the endpoint's output
// length. It does not advance Next's sequence.
func (w *Workload) Interactive(prompt string) Request {
	i := w.interactive.Add(1) - 1
	req := Request{Index: i, MaxTokens: w.ep.MaxTokens}
	if w.busting() {
		req.Tag = fmt.Sprintf("[tokscope %s-s%d] ", w.runID, i+1)
	}
	req.Messages = []Message{{Role: "user", Content: req.Tag + prompt}}
	if l := w.ep.OutputTokens; l.IsSet() {
		req.MaxTokens, req.MinTokens = l.N, l.N
	}
	return req
}

// draw is one length from N[:SD]: a normal draw rounded to a whole number of tokens and
// clamped to [least, config.MaxLengthTokens]. It always consumes one normal draw.
func draw(rng *rand.Rand, l config.TokenLength, least int) int {
	z := rng.NormFloat64()
	if !l.IsSet() {
		return 0
	}
	v := math.Round(float64(l.N) + l.SD*z)
	return int(min(max(v, float64(least)), config.MaxLengthTokens))
}

// withTag returns msgs with tag put before the first message's text; msgs is not modified
// (a prompts file's entries are shared by every request and endpoint).
func withTag(msgs []Message, tag string) []Message {
	if tag == "" {
		return msgs
	}
	out := make([]Message, len(msgs))
	copy(out, msgs)
	first := out[0]
	if first.Parts != nil {
		first.Parts = append([]string{tag + first.Parts[0]}, first.Parts[1:]...)
	} else {
		first.Content = tag + first.Content
	}
	out[0] = first
	return out
}

// ForEndpoints builds the workload of every endpoint (Options.Endpoint is its index),
// loading each prompts file once: endpoints naming the same file share its Set. The first
// error (a bad line of a prompts file names it) is returned before anything is sent.
func ForEndpoints(eps []config.Endpoint, seed uint64) ([]*Workload, error) {
	sets := make(map[string]*Set)
	out := make([]*Workload, len(eps))
	for i, ep := range eps {
		o := Options{Seed: seed, Endpoint: i}
		if ep.Prompts != "" {
			set, ok := sets[ep.Prompts]
			if !ok {
				var err error
				if set, err = Load(ep.Prompts); err != nil {
					return nil, err
				}
				sets[ep.Prompts] = set
			}
			o.Prompts = set
		}
		w, err := New(ep, o)
		if err != nil {
			return nil, fmt.Errorf("endpoint %q: %w", ep.Name, err)
		}
		out[i] = w
	}
	return out, nil
}

// Prompts is the prompts file the workload cycles through; nil when it has none.
func (w *Workload) Prompts() *Set { return w.set }
