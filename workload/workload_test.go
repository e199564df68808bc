package workload

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"tokscope/config"
)

func endpoint(mod func(*config.Endpoint)) config.Endpoint {
	ep := config.NewEndpoint("http://127.0.0.1:1/v1", "m")
	ep.Name = "e"
	if mod != nil {
		mod(&ep)
	}
	return ep
}

func mustNew(t testing.TB, ep config.Endpoint, o Options) *Workload {
	t.Helper()
	w, err := New(ep, o)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func count(t testing.TB, s string) int {
	t.Helper()
	n, err := CountTokens(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSyntheticExact: a synthetic prompt has exactly N tokens in the offline tokenizer, tag
// included, under both cache modes, from one token to several laps of the corpus.
func TestSyntheticExact(t *testing.T) {
	for _, cache := range config.CacheModes {
		for _, n := range []int{1, 2, 3, 7, 12, 13, 16, 31, 64, 100, 257, 512, 1000, 4096, 60000} {
			ep := endpoint(func(e *config.Endpoint) { e.InputTokens, e.Cache = config.TokenLength{N: n}, cache })
			w, err := New(ep, Options{Seed: 1})
			if cache == config.CacheBust && n <= tagTokens {
				if err == nil || !strings.Contains(err.Error(), "shorter than a prompt under --cache bust can be") {
					t.Errorf("bust n=%d: New = %v, want the tag error", n, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s n=%d: %v", cache, n, err)
			}
			for range 3 {
				req := w.Next()
				if len(req.Messages) != 1 || req.Messages[0].Role != "user" {
					t.Fatalf("messages %+v", req.Messages)
				}
				text := req.Messages[0].Content
				if got := count(t, text); got != n || req.PromptTokens != n {
					t.Errorf("%s n=%d: prompt has %d tokens, PromptTokens %d", cache, n, got, req.PromptTokens)
				}
				if cache == config.CacheBust && !strings.HasPrefix(text, req.Tag) {
					t.Errorf("bust prompt does not start with its tag %q: %.60q", req.Tag, text)
				}
			}
		}
	}
}

// tagTokens is the length of the first request's tag in the offline tokenizer.
const tagTokens = 10

// TestTagLength: the tag's length does not depend on the run id (so the same seed gives
// the same prompt text), and the shortest bust prompt is the tag and one token.
func TestTagLength(t *testing.T) {
	w := mustNew(t, endpoint(nil), Options{RunID: "000000042"})
	if got := w.tag(0); got != "[tokscope 000000042-1] " {
		t.Errorf("tag = %q", got)
	}
	for _, run := range []string{"000000000", "999999999", "123456789", "100200300"} {
		w := mustNew(t, endpoint(nil), Options{RunID: run})
		if n := count(t, strings.TrimSpace(w.tag(0))); n != tagTokens {
			t.Errorf("tag %q has %d tokens, want %d whatever the run id", w.tag(0), n, tagTokens)
		}
	}
	ep := endpoint(func(e *config.Endpoint) { e.InputTokens = config.TokenLength{N: tagTokens + 1} })
	w = mustNew(t, ep, Options{})
	for range 12 {
		r := w.Next()
		if got := count(t, r.Messages[0].Content); got != r.PromptTokens || got < count(t, strings.TrimSpace(r.Tag))+1 {
			t.Errorf("shortest prompt %q: %d tokens, PromptTokens %d", r.Messages[0].Content, got, r.PromptTokens)
		}
	}
}

// TestSeeded: the same seed gives the same prompts and lengths (apart from the run id in the
// tag); another seed or another endpoint index gives others.
func TestSeeded(t *testing.T) {
	ep := endpoint(func(e *config.Endpoint) {
		e.InputTokens, e.OutputTokens = config.TokenLength{N: 200, SD: 40}, config.TokenLength{N: 50, SD: 10}
	})
	prompts := func(o Options) []string {
		w := mustNew(t, ep, o)
		var out []string
		for range 20 {
			r := w.Next()
			out = append(out, strings.TrimPrefix(r.Messages[0].Content, r.Tag)+"|"+strconv.Itoa(r.MaxTokens))
		}
		return out
	}
	a, b := prompts(Options{Seed: 7}), prompts(Options{Seed: 7})
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Error("the same seed gave other prompts")
	}
	for _, o := range []Options{{Seed: 8}, {Seed: 7, Endpoint: 1}} {
		c := prompts(o)
		same := 0
		for i := range a {
			if a[i] == c[i] {
				same++
			}
		}
		if same > 1 {
			t.Errorf("%+v: %d of %d prompts equal to seed 7's", o, same, len(a))
		}
	}
	w1, w2 := mustNew(t, ep, Options{Seed: 7}), mustNew(t, ep, Options{Seed: 7})
	if w1.Next().Tag == w2.Next().Tag {
		t.Error("two runs with the same seed share a tag: the second would hit the first's prefix cache")
	}
}

// TestBustVersusReuse: under bust no two prompts share a prefix longer than the tag's
// fixed head; under reuse with SD 0 they are identical, and with SD > 0 a shorter prompt
// is a prefix of a longer one.
func TestBustVersusReuse(t *testing.T) {
	var tags []string
	next := func(ep config.Endpoint, n int) []string {
		w := mustNew(t, ep, Options{Seed: 3})
		var out []string
		tags = tags[:0]
		for range n {
			r := w.Next()
			out = append(out, r.Messages[0].Content)
			tags = append(tags, r.Tag)
		}
		return out
	}
	bust := next(endpoint(func(e *config.Endpoint) { e.InputTokens = config.TokenLength{N: 300} }), 50)
	for i := range bust {
		for j := range i {
			if p := commonPrefix(bust[i], bust[j]); p >= min(len(tags[i]), len(tags[j])) {
				t.Fatalf("bust prompts %d and %d share %d bytes, more than a tag: %.40q", i, j, p, bust[i])
			}
		}
	}
	reuse := next(endpoint(func(e *config.Endpoint) {
		e.InputTokens, e.Cache = config.TokenLength{N: 300}, config.CacheReuse
	}), 5)
	for _, p := range reuse[1:] {
		if p != reuse[0] {
			t.Fatal("reuse prompts differ")
		}
	}
	if strings.HasPrefix(reuse[0], "[tokscope") {
		t.Error("a reuse prompt carries a tag")
	}
	varied := next(endpoint(func(e *config.Endpoint) {
		e.InputTokens, e.Cache = config.TokenLength{N: 300, SD: 80}, config.CacheReuse
	}), 30)
	for _, p := range varied {
		if a, b := p, varied[0]; !strings.HasPrefix(a, b) && !strings.HasPrefix(b, a) {
			t.Fatalf("reuse prompts of different lengths are not prefixes of one another:\n%.80q\n%.80q", a, b)
		}
	}
	fixed := next(endpoint(nil), 3)
	for i, p := range fixed {
		if !strings.HasSuffix(p, "] "+config.DefaultPrompt) || !strings.HasPrefix(p, "[tokscope ") {
			t.Errorf("fixed prompt %d under bust = %q", i, p)
		}
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestDraws: lengths follow N and SD, rounded and clamped at 1 (output) or the shortest
// possible prompt (input).
func TestDraws(t *testing.T) {
	ep := endpoint(func(e *config.Endpoint) {
		e.Cache = config.CacheReuse
		e.OutputTokens = config.TokenLength{N: 100, SD: 20}
	})
	w := mustNew(t, ep, Options{Seed: 11})
	const n = 4000
	var sum, sq float64
	for range n {
		r := w.Next()
		if r.MinTokens != r.MaxTokens {
			t.Fatalf("min_tokens %d != max_tokens %d", r.MinTokens, r.MaxTokens)
		}
		v := float64(r.MaxTokens)
		sum += v
		sq += v * v
	}
	mean := sum / n
	sd := math.Sqrt(sq/n - mean*mean)
	if math.Abs(mean-100) > 1.5 || math.Abs(sd-20) > 1.5 {
		t.Errorf("output draws mean %.2f sd %.2f, want 100 and 20", mean, sd)
	}

	clamped := mustNew(t, endpoint(func(e *config.Endpoint) {
		e.Cache = config.CacheReuse
		e.OutputTokens = config.TokenLength{N: 2, SD: 50}
		e.InputTokens = config.TokenLength{N: 3, SD: 50}
	}), Options{Seed: 1})
	ones := 0
	for range 200 {
		r := clamped.Next()
		if r.MaxTokens < 1 || r.PromptTokens < 1 {
			t.Fatalf("draw below 1: %+v", r)
		}
		if r.MaxTokens == 1 {
			ones++
		}
		if got := count(t, r.Messages[0].Content); got != r.PromptTokens {
			t.Fatalf("prompt has %d tokens, PromptTokens %d", got, r.PromptTokens)
		}
	}
	if ones < 50 {
		t.Errorf("only %d of 200 draws clamped to 1", ones)
	}

	plain := mustNew(t, endpoint(func(e *config.Endpoint) { e.MaxTokens = 77 }), Options{})
	if r := plain.Next(); r.MaxTokens != 77 || r.MinTokens != 0 || r.PromptTokens != 0 {
		t.Errorf("without --output-tokens: %+v", r)
	}
}

// TestFileWorkload: requests cycle through the entries in order; an entry's max_tokens
// replaces max_tokens, --output-tokens replaces both; the bust tag goes before the first
// message's text and the shared entries are left untouched.
func TestFileWorkload(t *testing.T) {
	set, err := Parse("p.jsonl", strings.NewReader(`{"prompt": "one", "max_tokens": 5}
{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "two"}]}
{"messages": [{"role": "user", "content": [{"type": "text", "text": "three"}, {"type": "text", "text": "3"}]}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	ep := endpoint(func(e *config.Endpoint) { e.Prompts, e.MaxTokens = "p.jsonl", 40 })
	w := mustNew(t, ep, Options{Prompts: set, RunID: "000000001"})
	want := []struct {
		first string
		max   int
	}{
		{"[tokscope 000000001-1] one", 5},
		{"[tokscope 000000001-2] be brief", 40},
		{"[tokscope 000000001-3] three", 40},
		{"[tokscope 000000001-4] one", 5},
	}
	for i, wt := range want {
		r := w.Next()
		m := r.Messages[0]
		first := m.Content
		if m.Parts != nil {
			first = m.Parts[0]
		}
		if first != wt.first || r.MaxTokens != wt.max || r.Index != uint64(i) {
			t.Errorf("request %d: %q max %d index %d, want %q max %d", i, first, r.MaxTokens, r.Index, wt.first, wt.max)
		}
	}
	if set.Items[0].Messages[0].Content != "one" || set.Items[2].Messages[0].Parts[0] != "three" {
		t.Error("the tag was written into the shared entries")
	}
	if p := set.Items[2].Messages[0].Parts; len(p) != 2 || p[1] != "3" {
		t.Errorf("parts = %q", p)
	}

	ep.Cache = config.CacheReuse
	ep.OutputTokens = config.TokenLength{N: 9}
	w = mustNew(t, ep, Options{Prompts: set})
	if r := w.Next(); r.Messages[0].Content != "one" || r.MaxTokens != 9 || r.MinTokens != 9 {
		t.Errorf("reuse with --output-tokens: %+v", r)
	}

	var fe *FileError
	if _, err := New(ep, Options{}); !errors.As(err, &fe) || !strings.Contains(err.Error(), "p.jsonl: cannot read prompts") {
		t.Errorf("New loads the prompts file it was not given: %v", err)
	}
}

// TestInteractive: a typed prompt gets its own tag and does not advance the sequence.
func TestInteractive(t *testing.T) {
	w := mustNew(t, endpoint(func(e *config.Endpoint) { e.OutputTokens = config.TokenLength{N: 30, SD: 5} }), Options{RunID: "000000002"})
	r := w.Interactive("hello")
	if r.Messages[0].Content != "[tokscope 000000002-s1] hello" || r.MaxTokens != 30 || r.MinTokens != 30 {
		t.Errorf("interactive = %+v", r)
	}
	if n := w.Next(); n.Index != 0 || n.Tag != "[tokscope 000000002-1] " {
		t.Errorf("Next after Interactive = %+v", n)
	}
}

// TestConcurrentNext: every index is handed out once, whatever the goroutines.
func TestConcurrentNext(t *testing.T) {
	w := mustNew(t, endpoint(func(e *config.Endpoint) { e.InputTokens = config.TokenLength{N: 40, SD: 10} }), Options{})
	var mu sync.Mutex
	seen := make(map[uint64]bool)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				r := w.Next()
				mu.Lock()
				seen[r.Index] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i := range uint64(200) {
		if !seen[i] {
			t.Fatalf("index %d never handed out (%d seen)", i, len(seen))
		}
	}
}

func TestForEndpoints(t *testing.T) {
	eps := []config.Endpoint{
		endpoint(func(e *config.Endpoint) { e.Name = "a" }),
		endpoint(func(e *config.Endpoint) { e.Name = "b"; e.InputTokens = config.TokenLength{N: 5} }),
	}
	_, err := ForEndpoints(eps, 0)
	if err == nil || !strings.HasPrefix(err.Error(), `endpoint "b": input_tokens (--input-tokens) 5 is shorter`) {
		t.Errorf("err = %v", err)
	}
}

func BenchmarkSynthetic(b *testing.B) {
	for _, n := range []int{512, 8192} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			w := mustNew(b, endpoint(func(e *config.Endpoint) { e.InputTokens = config.TokenLength{N: n} }), Options{})
			w.Next() // the corpus is tokenized once, on first use
			b.ResetTimer()
			for b.Loop() {
				w.Next()
			}
		})
	}
}

// TestSyntheticExactEveryLength: every length from the shortest bust prompt to 600 tokens,
// each cut from another place of the corpus, is exact (the cut is adjusted, never
// assumed).
func TestSyntheticExactEveryLength(t *testing.T) {
	for n := tagTokens + 1; n <= 600; n++ {
		w := mustNew(t, endpoint(func(e *config.Endpoint) { e.InputTokens = config.TokenLength{N: n} }), Options{Seed: uint64(n)})
		r := w.Next()
		if got := count(t, r.Messages[0].Content); got != n || r.PromptTokens != n {
			t.Fatalf("n=%d: %d tokens (PromptTokens %d): %q", n, got, r.PromptTokens, r.Messages[0].Content)
		}
	}
}
