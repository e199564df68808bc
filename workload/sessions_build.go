package workload

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tokscope/config"
)

// Prompts of agent sessions. A session's block ids each get one text of BlockSize tokens, cut
// from the corpus at a start of their own (no two ids of a replay share a start), so that
// two turns whose ids share a leading run of k share exactly k blocks of text; a turn's
// prompt is its blocks' texts, then the rest of its length cut from the start of its tail
// id's text (the block its context's next turn has there), exactly In tokens in all. Under
// --cache bust the run id chooses the starts, so a second run finds nothing of the first in
// a prefix cache.

// SessionOptions are the run-wide settings of a session replay.
type SessionOptions struct {
	Gaps GapPolicy
	// ToolMessages is ToolMessagesAPI (""/default: tool calls and results in each API's own
	// form) or ToolMessagesText (every turn one user message; recorded tool messages as text).
	ToolMessages string
	// Scale multiplies every recorded length (prompt and output; block j of a scaled prompt
	// is the trace's block j/Scale, so shared runs shrink in proportion): 1 replays the trace
	// as recorded. For servers whose
	// context is smaller than the trace's.
	Scale float64
	// Start is SessionStartFirst (""/default: every replay from its first turn) or
	// SessionStartRandom (from a root turn drawn from the run's seed, as AIPerf offers).
	Start string
}

// Where a replay starts (--session-start).
const (
	SessionStartFirst  = config.SessionStartFirst
	SessionStartRandom = config.SessionStartRandom
)

// SessionStarts lists --session-start's values.
var SessionStarts = []string{SessionStartFirst, SessionStartRandom}

// GapPolicy is --tool-time and --gap-cap: how long a replay waits where the trace recorded a
// tool's run or a pause.
type GapPolicy struct {
	None  bool          // --tool-time none: no wait
	Scale float64       // --tool-time scaled:F (1 for recorded)
	Cap   time.Duration // --gap-cap: no wait is longer (0: none)
}

// DefaultGapCap is --gap-cap's default.
const DefaultGapCap = 10 * time.Second

// ParseToolTime reads --tool-time: recorded, none or scaled:F.
func ParseToolTime(s string) (GapPolicy, error) {
	switch {
	case s == "" || s == "recorded":
		return GapPolicy{Scale: 1}, nil
	case s == "none":
		return GapPolicy{None: true}, nil
	case strings.HasPrefix(s, "scaled:"):
		f, err := strconv.ParseFloat(strings.TrimPrefix(s, "scaled:"), 64)
		if err != nil || !(f >= 0) || f > 1000 {
			return GapPolicy{}, errors.New("scaled:F needs a factor F from 0 to 1000, e.g. scaled:0.5")
		}
		return GapPolicy{Scale: f}, nil
	}
	return GapPolicy{}, errors.New("give recorded, none or scaled:F")
}

// Wait is how long to wait for a recorded gap.
func (p GapPolicy) Wait(recorded time.Duration) time.Duration {
	if p.None || recorded <= 0 {
		return 0
	}
	d := time.Duration(float64(recorded) * p.Scale)
	if p.Cap > 0 {
		d = min(d, p.Cap)
	}
	return d
}

// sessionState is a workload's session replay: the pool, the settings, the endpoint's ideal
// prefix cache and its counters.
type sessionState struct {
	pool     *SessionPool
	opts     SessionOptions
	taken    atomic.Uint64 // sessions handed out
	contexts atomic.Uint64 // contexts (sessions and sub-agents) numbered
	ideal    idealCache
}

// UseSessions makes the workload replay pool's sessions (NewSessionRun).
func (w *Workload) UseSessions(pool *SessionPool, o SessionOptions) error {
	if _, err := loadCorpus(); err != nil {
		return fmt.Errorf("--sessions needs the offline tokenizer: %w", err)
	}
	if !(o.Scale > 0) {
		o.Scale = 1
	}
	if o.Gaps == (GapPolicy{}) {
		o.Gaps = GapPolicy{Scale: 1}
	}
	w.sess = &sessionState{pool: pool, opts: o}
	return nil
}

// Sessions is the pool in use; nil without --sessions.
func (w *Workload) Sessions() *SessionPool {
	if w.sess == nil {
		return nil
	}
	return w.sess.pool
}

// SessionGaps is the gap policy of the replay.
func (w *Workload) SessionGaps() GapPolicy { return w.sess.opts.Gaps }

// SessionRun is one replay of one session of the pool: the texts of its blocks, shared by
// its root agent and its sub-agents (which may send at once).
type SessionRun struct {
	w        *Workload
	S        *Session
	Instance uint64 // the endpoint's replay number, from 1
	off      int
	stride   int
	mu       sync.Mutex
	texts    map[int32]string
	start    int // the root's first step replayed (SessionStartRandom); 0 from the first turn
	turns    int // the turns replayed, sub-agents' included
}

// Steps are the root agent's steps the replay sends: all of them, or from its start turn on
// (SessionStartRandom; the sub-agents started before it are left out with the turns).
func (r *SessionRun) Steps() []Step { return r.S.Root.Steps[r.start:] }

// Turns is how many turns the replay sends, its sub-agents' included: the session's, or
// those from its start turn on.
func (r *SessionRun) Turns() int { return r.turns }

// randomStart draws the root turn a replay starts at, from the workload's seed and the
// replay's number (the same run, the same starts): the index of its step, and the turns from
// there on.
func (w *Workload) randomStart(s *Session, k uint64) (int, int) {
	var at []int
	for i, st := range s.Root.Steps {
		if st.Turn != nil {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return 0, s.Turns
	}
	rng := rand.New(rand.NewPCG(w.seed, w.stream^k^0x5e55105c0ffee))
	i := at[rng.IntN(len(at))]
	return i, countTurns(&Agent{Steps: s.Root.Steps[i:]})
}

// NewSessionRun starts the replay of the pool's next session (in order, round and round).
func (w *Workload) NewSessionRun() *SessionRun {
	st := w.sess
	k := st.taken.Add(1)
	s := st.pool.Sessions[(k-1)%uint64(len(st.pool.Sessions))]
	c, _ := loadCorpus()
	salt := ""
	if w.busting() {
		salt = w.runID
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%s", salt, k, s.Name)
	sum := h.Sum64()
	n := len(c.starts)
	stride := 1 + int(sum>>32)%(n-1)
	for gcd(stride, n) != 1 {
		stride++
	}
	run := &SessionRun{w: w, S: s, Instance: k, off: int(sum % uint64(n)), stride: stride, texts: map[int32]string{}, turns: s.Turns}
	if st.opts.Start == SessionStartRandom {
		run.start, run.turns = w.randomStart(s, k)
	}
	return run
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// NewContext numbers a context of the run (its root agent, or a sub-agent) among the
// endpoint's contexts, from 1.
func (r *SessionRun) NewContext() uint64 { return r.w.sess.contexts.Add(1) }

// SessionTurn places a request in an agent session (Request.Session).
type SessionTurn struct {
	ID     uint64 // the context (root agent or sub-agent), from 1 per endpoint
	Parent uint64 // the context that started this sub-agent; 0 for a root agent
	// Root is the session's root context (ID itself for a root agent), and SessionTurns the
	// number of turns of the whole session, sub-agents' included: a reader knows a session
	// complete when it has seen that many of its turns.
	Root         uint64
	SessionTurns int
	// Lane is the endpoint's loop the session runs in, from 1 (-n N: 1…N).
	Lane int
	// PromptTokens is the prompt's length in the offline tokenizer (IdealCached's unit).
	PromptTokens int
	Depth        int // 0 for a root agent, 1 for its sub-agents, …
	Turn         int // the turn's place in its context, from 1
	// Gap is the wait before this turn since the context's previous turn ended (the recorded
	// tool or think time under the gap policy, and any sub-agents it joined); 0 for a first turn.
	Gap time.Duration
	// Blocks is how many full blocks of the trace's block size the prompt holds;
	// IdealCached how many of its tokens (offline tokenizer) a perfect prefix cache would
	// serve: what earlier prompts sent to the endpoint share with it.
	Blocks      int
	IdealCached int
	// Tool: the recorded input of the turn is a tool's result.
	Tool bool
}

// Request builds turn t of the run, placed at where: its prompt of the recorded length and
// blocks (or its recorded messages), its recorded output length, and its ideal cached
// prefix given every prompt the endpoint sent before.
func (r *SessionRun) Request(t *Turn, where SessionTurn, th *Thread) Request {
	text := r.w.sess.opts.ToolMessages == ToolMessagesText
	w := r.w
	scale := w.sess.opts.Scale
	out := max(1, int(math.Round(float64(t.Out)*scale)))
	req := Request{MaxTokens: out, MinTokens: out}
	b := r.S.BlockSize
	blocks, tail, tailTokens := t.Blocks, t.Tail, 0
	ns := r.Instance
	if t.Messages != nil {
		req.Tag = ""
		if w.busting() {
			req.Tag = fmt.Sprintf("[tokscope %s-s%d] ", w.runID, r.Instance)
		} else {
			ns = 0 // the same messages in every replay: one text for all
		}
		msgs := t.Messages
		if text {
			msgs = asText(msgs)
		}
		req.Messages = withTag(msgs, req.Tag)
		req.PromptTokens = t.In
	} else {
		in := max(1, int(math.Round(float64(t.In)*scale)))
		if scale != 1 {
			blocks, tail = scaleBlocks(blocks, t.Tail, in/b, scale)
		}
		tailTokens = in - len(blocks)*b
		body, n := r.prompt(blocks, tail, tailTokens)
		if text {
			th = nil
		}
		req.Messages = th.messages(body, t.Tool)
		req.PromptTokens = n
	}
	where.Blocks = len(blocks)
	where.Tool = t.Tool
	where.SessionTurns = r.turns
	where.PromptTokens = req.PromptTokens
	where.IdealCached = w.sess.ideal.take(ns, blocks, tail, tailTokens, b)
	req.Session = &where
	req.Turn = where.Turn
	return req
}

// scaleBlocks are the blocks of a prompt scaled by scale to keep blocks: block j is the
// trace's block j/scale, so that two turns that share the first k of their blocks share
// about k·scale of theirs (truncating instead would share everything up to a short length);
// tail is the id at the next such place.
func scaleBlocks(blocks []int32, tail int32, keep int, scale float64) ([]int32, int32) {
	out := make([]int32, 0, keep)
	for j := 0; j < keep; j++ {
		i := int(float64(j) / scale)
		if i >= len(blocks) {
			break
		}
		out = append(out, blocks[i])
	}
	if i := int(float64(len(out)) / scale); i < len(blocks) {
		tail = blocks[i]
	}
	return out, tail
}

// prompt is the text of blocks and tailTokens of tail's text, and its length in tokens.
func (r *SessionRun) prompt(blocks []int32, tail int32, tailTokens int) (string, int) {
	var s strings.Builder
	for _, id := range blocks {
		s.WriteString(r.block(id))
	}
	if tailTokens > 0 {
		s.WriteString(r.cut(tail, tailTokens))
	}
	text := s.String()
	n, _ := CountTokens(text)
	return text, n
}

// block is id's text: BlockSize tokens from its own start in the corpus.
func (r *SessionRun) block(id int32) string {
	r.mu.Lock()
	s, ok := r.texts[id]
	r.mu.Unlock()
	if ok {
		return s
	}
	s = r.cut(id, r.S.BlockSize)
	r.mu.Lock()
	r.texts[id] = s
	r.mu.Unlock()
	return s
}

// cut is the first n tokens of id's text.
func (r *SessionRun) cut(id int32, n int) string {
	c, _ := loadCorpus()
	start := c.starts[(r.off+int(id)*r.stride)%len(c.starts)]
	if s, err := c.exact("", start, n); err == nil {
		return s
	}
	s, _ := c.text(start, n)
	return s
}

// idealCache is an endpoint's perfect prefix cache, by blocks: for each run of leading block
// ids sent (a chain hash) and the id that followed it, how many tokens of that id's text were
// sent. A turn's ideal cached prefix is the longest run of its leading blocks that earlier
// prompts sent, and of its tail what they sent of the same text.
type idealCache struct {
	mu    sync.Mutex
	cover map[[2]uint64]int
}

// take is the ideal cached length of a prompt, then accounts it as sent.
func (c *idealCache) take(ns uint64, blocks []int32, tail int32, tailTokens, b int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cover == nil {
		c.cover = map[[2]uint64]int{}
	}
	key := func(id int32) uint64 { return ns<<32 ^ uint64(uint32(id)) ^ 0x9e3779b97f4a7c15 }
	cached, hit := 0, true
	chain := uint64(ns) * 0x100000001b3
	for _, id := range blocks {
		k := [2]uint64{chain, key(id)}
		if hit {
			got := c.cover[k]
			cached += min(got, b)
			hit = got >= b
		}
		c.cover[k] = b
		chain = (chain ^ key(id)) * 0x100000001b3
	}
	if tailTokens > 0 {
		k := [2]uint64{chain, key(tail)}
		if hit {
			cached += min(c.cover[k], tailTokens)
		}
		c.cover[k] = max(c.cover[k], tailTokens)
	}
	return cached
}
