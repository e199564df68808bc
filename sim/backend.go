package sim

import (
	"sync"
	"sync/atomic"
	"time"
)

// backend is what a profile's requests share, as on one inference server: the running batch
// and its slots, the queue in front of them, the KV cache and the prefix cache, and the
// counters /metrics exposes.
type backend struct {
	maxRunning int       // 0 = unlimited
	epoch      time.Time // step 0 of Profile.Step's clock: when the backend was made
	kvCapacity int64
	cache      *prefixCache // nil when the profile has no prefix cache

	mu      sync.Mutex
	queue   []*ticket    // waiting requests, first in first out
	running atomic.Int64 // written under mu, read without it by the schedules

	kvTokens         atomic.Int64  // prompt + generated tokens of the running requests
	promptTokens     atomic.Uint64 // prompt tokens of the requests whose prefill is done
	generationTokens atomic.Uint64 // tokens generated (sent or, for non-streaming, due)
	cacheQueries     atomic.Uint64 // prompt tokens looked up in the prefix cache
	cacheHits        atomic.Uint64 // of which found cached

	busy busyMeter // running requests over time, the GPUs' work (gpu.go); under mu
}

func newEngine(p Profile) *backend {
	e := &backend{maxRunning: p.MaxRunning, kvCapacity: int64(p.KVCacheTokens), epoch: time.Now()}
	if p.PrefixCache {
		e.cache = newPrefixCache(p.KVCacheTokens / p.PrefixBlockTokens)
	}
	return e
}

// ticket is one request's place in the backend: waiting, then running until it leaves.
type ticket struct {
	ready    chan struct{} // closed on admission
	at       time.Time     // the admission instant; read only after ready is closed
	admitted bool          // guarded by backend.mu
	prompt   int           // prompt tokens, in the KV cache from admission on
	kv       atomic.Int64  // tokens this request holds in the KV cache
}

// enqueue registers a request of prompt tokens arriving at now: admitted at once when a slot
// is free and nobody waits, queued otherwise. Every ticket must leave.
func (e *backend) enqueue(now time.Time, prompt int) *ticket {
	t := &ticket{ready: make(chan struct{}), prompt: prompt}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.queue) == 0 && e.free() {
		e.admit(t, now)
	} else {
		e.queue = append(e.queue, t)
	}
	return t
}

func (e *backend) free() bool { return e.maxRunning == 0 || e.running.Load() < int64(e.maxRunning) }

// admit starts t running, its prompt taking its room in the KV cache in the same step, so that
// /metrics never shows a running request without it; e.mu is held.
func (e *backend) admit(t *ticket, now time.Time) {
	e.busy.advance(now, e.running.Load())
	e.running.Add(1)
	e.hold(t, t.prompt)
	t.at, t.admitted = now, true
	close(t.ready)
}

// leave ends t, waiting or running: a running request frees its slot and its KV-cache tokens,
// and the longest-waiting requests take the free slots.
func (e *backend) leave(t *ticket) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !t.admitted {
		for i, q := range e.queue {
			if q == t {
				e.queue = append(e.queue[:i], e.queue[i+1:]...)
				break
			}
		}
		return
	}
	now := time.Now()
	e.busy.advance(now, e.running.Load())
	e.running.Add(-1)
	e.kvTokens.Add(-t.kv.Swap(0))
	for len(e.queue) > 0 && e.free() {
		next := e.queue[0]
		e.queue[0] = nil
		e.queue = e.queue[1:]
		e.admit(next, now)
	}
}

// hold adds n tokens to what t holds in the KV cache.
func (e *backend) hold(t *ticket, n int) {
	t.kv.Add(int64(n))
	e.kvTokens.Add(int64(n))
}

// generated counts n tokens of t as generated: they are now in the KV cache too.
func (e *backend) generated(t *ticket, n int) {
	e.hold(t, n)
	e.generationTokens.Add(uint64(n))
}

// lookup asks the prefix cache how many leading tokens of a prompt it holds, counting the
// query as vLLM does (in tokens). Without a cache it returns 0 and counts nothing.
func (e *backend) lookup(pr prompt) int {
	if e.cache == nil {
		return 0
	}
	// Like vLLM, never serve the last prompt token from the cache: it must be computed to
	// produce the first output token.
	cached := e.cache.match(pr.blocks[:min(len(pr.blocks), (pr.tokens-1)/pr.blockTokens)]) * pr.blockTokens
	e.cacheQueries.Add(uint64(pr.tokens))
	e.cacheHits.Add(uint64(cached))
	return cached
}

// prefilled records that a prompt's prefill is done: its tokens count as processed and its
// blocks enter the prefix cache.
func (e *backend) prefilled(pr prompt) {
	e.promptTokens.Add(uint64(pr.tokens))
	if e.cache != nil {
		e.cache.insert(pr.blocks)
	}
}

// State is a profile's serving state at one instant: what its /metrics series report.
type State struct {
	Running, Waiting int
	KVCacheUsage     float64 // prompt + generated tokens of the running requests / KVCacheTokens, at most 1
	PromptTokens     uint64  // vllm:prompt_tokens_total
	GenerationTokens uint64  // vllm:generation_tokens_total
	PrefixQueries    uint64  // vllm:prefix_cache_queries_total (tokens)
	PrefixHits       uint64  // vllm:prefix_cache_hits_total (tokens)
}

func (e *backend) state() State {
	e.mu.Lock() // admissions and departures change the slots, the queue and the KV cache together
	running, waiting, kv := e.running.Load(), len(e.queue), e.kvTokens.Load()
	e.mu.Unlock()
	return State{
		Running:          int(running),
		Waiting:          waiting,
		KVCacheUsage:     min(1, float64(max(0, kv))/float64(e.kvCapacity)),
		PromptTokens:     e.promptTokens.Load(),
		GenerationTokens: e.generationTokens.Load(),
		PrefixQueries:    e.cacheQueries.Load(),
		PrefixHits:       e.cacheHits.Load(),
	}
}
