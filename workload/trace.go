package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"tokscope/config"
)

// Timestamped traces (--trace): Mooncake's JSONL, one request a line,
// {"timestamp": ms, "input_length": N, "output_length": N, "hash_ids": [...]}. Each request is
// sent at its timestamp (probe's open loop, from a schedule rather than Poisson draws), with a
// synthetic prompt of exactly input_length tokens (the offline tokenizer, as --input-tokens)
// and exactly output_length output tokens (as --output-tokens). Its prompt is made of
// TraceBlockTokens-token blocks, one per hash id, the same text wherever the id repeats, so
// two requests whose hash_ids share a leading run share exactly that prefix of text.

// TraceBlockTokens is Mooncake's block size.
const TraceBlockTokens = 512

// MaxTraceLines bounds a trace (it is read whole, and every prompt is cut before the run).
const MaxTraceLines = 100_000

// TraceEntry is one request of a trace.
type TraceEntry struct {
	At     time.Duration // from the trace's first timestamp... as given (ms), before speed-up
	Input  int
	Output int
	Hashes []int64
	Line   int
}

// Trace is a loaded trace.
type Trace struct {
	Path    string
	Entries []TraceEntry
	// origin is the whole trace's first timestamp when Entries are a shard's share of it
	// (Share), so that each shard sends its requests when the whole trace would.
	origin    time.Duration
	hasOrigin bool
}

// Share is the part of t that one shard of a run sends: the entries whose index takes
// accepts (a --shard's Takes), at the times the whole trace gives them.
func (t *Trace) Share(takes func(i int) bool) *Trace {
	out := &Trace{Path: t.Path}
	if len(t.Entries) > 0 {
		out.origin, out.hasOrigin = t.Entries[0].At, true
	}
	for i, e := range t.Entries {
		if takes(i) {
			out.Entries = append(out.Entries, e)
		}
	}
	return out
}

// Schedule is every request's send offset from the run's start: the timestamps less the
// first, divided by speedup.
func (t *Trace) Schedule(speedup float64) []time.Duration {
	out := make([]time.Duration, len(t.Entries))
	if len(t.Entries) == 0 {
		return out
	}
	first := t.Entries[0].At
	if t.hasOrigin {
		first = t.origin
	}
	for i, e := range t.Entries {
		out[i] = time.Duration(float64(e.At-first) / max(speedup, 1e-9))
	}
	return out
}

// LoadTrace reads a trace. The first bad line is a *FileError naming it: a line that is not
// one JSON object, a timestamp that is missing, negative or earlier than the line before, an
// input_length or output_length outside 1…config.MaxLengthTokens, hash_ids that are not
// whole non-negative numbers.
func LoadTrace(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{File: path, Msg: "cannot read the trace: " + err.Error()}
	}
	defer f.Close()
	t := &Trace{Path: path}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimRight(sc.Bytes(), " \t\r") // the start kept: a key's column counts from it
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		e, err := parseTraceLine(raw)
		if err == nil && len(t.Entries) > 0 && e.At < t.Entries[len(t.Entries)-1].At {
			err = errors.New("timestamp earlier than the line before: a trace is in time order")
		}
		if err != nil {
			return nil, atKey(path, raw, line, err)
		}
		e.Line = line
		if len(t.Entries) >= MaxTraceLines {
			return nil, &FileError{File: path, Line: line, Msg: fmt.Sprintf("more than %d requests", MaxTraceLines)}
		}
		t.Entries = append(t.Entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, &FileError{File: path, Line: line + 1, Msg: err.Error()}
	}
	if len(t.Entries) == 0 {
		return nil, &FileError{File: path, Msg: `no requests: write one JSON object a line, e.g. {"timestamp": 0, "input_length": 600, "output_length": 20, "hash_ids": [0, 1]}`}
	}
	return t, nil
}

// traceKeys are the keys of a trace line (Mooncake's); any other is refused, with a "did you
// mean" when it is near one ("input_lenght").
var traceKeys = []string{"timestamp", "input_length", "output_length", "hash_ids"}

func parseTraceLine(raw []byte) (TraceEntry, error) {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) == nil {
		for _, k := range keysInOrder(raw, keys) {
			if !slices.Contains(traceKeys, k) {
				return TraceEntry{}, unknownKey(k, traceKeys)
			}
		}
	}
	var v struct {
		Timestamp *float64  `json:"timestamp"`
		Input     *float64  `json:"input_length"`
		Output    *float64  `json:"output_length"`
		Hashes    []float64 `json:"hash_ids"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&v); err != nil {
		return TraceEntry{}, fmt.Errorf("not a JSON object with timestamp, input_length, output_length, hash_ids: %v", err)
	}
	if v.Timestamp == nil || *v.Timestamp < 0 || math.IsInf(*v.Timestamp, 0) {
		return TraceEntry{}, errors.New(`"timestamp" must be a number of milliseconds, at least 0`)
	}
	e := TraceEntry{At: time.Duration(*v.Timestamp * float64(time.Millisecond))}
	for _, f := range []struct {
		name string
		v    *float64
		dst  *int
	}{{"input_length", v.Input, &e.Input}, {"output_length", v.Output, &e.Output}} {
		if f.v == nil || *f.v != math.Trunc(*f.v) || *f.v < 1 || *f.v > config.MaxLengthTokens {
			return TraceEntry{}, fmt.Errorf("%q must be a whole number of tokens from 1 to %d", f.name, config.MaxLengthTokens)
		}
		*f.dst = int(*f.v)
	}
	for _, h := range v.Hashes {
		if h < 0 || h != math.Trunc(h) || h > 1<<53 {
			return TraceEntry{}, errors.New(`"hash_ids" must be whole numbers, at least 0`)
		}
		e.Hashes = append(e.Hashes, int64(h))
	}
	return e, nil
}

// traceBuilder cuts a trace's prompts: one text per hash id, kept for its repeats.
type traceBuilder struct {
	c      *corpus
	tag    string
	blocks map[int64]string
}

// blockStart is where hash id h's text starts in the corpus: the same for every request.
func (b *traceBuilder) blockStart(h int64, salt string) int {
	f := fnv.New64a()
	fmt.Fprintf(f, "%s/%d", salt, h)
	return b.c.starts[int(f.Sum64()%uint64(len(b.c.starts)))]
}

// block is hash id h's TraceBlockTokens-token text.
func (b *traceBuilder) block(h int64) string {
	if s, ok := b.blocks[h]; ok {
		return s
	}
	s, err := b.c.exact("", b.blockStart(h, "b"), TraceBlockTokens)
	if err != nil {
		s, _ = b.c.text(b.blockStart(h, "b"), TraceBlockTokens)
	}
	b.blocks[h] = s
	return s
}

// prompt is request i's prompt: the tag, the blocks of its leading hash ids that fit whole,
// then the rest of input_length cut from the next id's text (or the request's own, past its
// ids), so that the whole is exactly input_length tokens.
func (b *traceBuilder) prompt(i int, e TraceEntry) (string, int) {
	tagTokens := 0
	if b.tag != "" {
		tagTokens, _ = b.c.codec.Count(b.tag)
	}
	var head strings.Builder
	head.WriteString(b.tag)
	full := 0
	for full < len(e.Hashes) && tagTokens+(full+1)*TraceBlockTokens < e.Input {
		head.WriteString(b.block(e.Hashes[full]))
		full++
	}
	start := b.blockStart(int64(i), fmt.Sprintf("own-%d", i))
	if full < len(e.Hashes) {
		start = b.blockStart(e.Hashes[full], "b")
	}
	n := max(e.Input, tagTokens+full*TraceBlockTokens+1)
	if s, err := b.c.exact(head.String(), start, n); err == nil {
		return s, n
	}
	body, _ := b.c.text(start, max(n-tagTokens-full*TraceBlockTokens, 1))
	s := head.String() + body
	got, _ := b.c.codec.Count(s)
	return s, got
}

// UseTrace makes the workload's requests those of t (TraceRequest): every prompt is cut now,
// before anything is sent. Under --cache bust every prompt starts with the run's tag (the
// same for all, so blocks stay shared within the run and not with an earlier run's cache).
func (w *Workload) UseTrace(t *Trace) error {
	c, err := loadCorpus()
	if err != nil {
		return fmt.Errorf("--trace needs the offline tokenizer: %w", err)
	}
	b := &traceBuilder{c: c, blocks: map[int64]string{}}
	if w.busting() {
		b.tag = fmt.Sprintf("[tokscope %s-trace]", w.runID)
	}
	w.trace = make([]Request, len(t.Entries))
	for i, e := range t.Entries {
		text, n := b.prompt(i, e)
		w.trace[i] = w.withPrefix(Request{Index: uint64(i), Messages: []Message{{Role: "user", Content: text}},
			MaxTokens: e.Output, MinTokens: e.Output, PromptTokens: n, Tag: b.tag})
	}
	return nil
}

// TraceLen is the number of requests of the trace in use; 0 without one.
func (w *Workload) TraceLen() int { return len(w.trace) }

// TraceRequest is request k of the trace (k < TraceLen).
func (w *Workload) TraceRequest(k uint64) Request { return w.trace[k%uint64(len(w.trace))] }
