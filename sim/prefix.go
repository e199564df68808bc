package sim

import (
	"container/list"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"strings"
	"sync"
)

// prompt is a request's prompt as the simulated tokenizer sees it.
type prompt struct {
	tokens      int      // the messages' tokens + 4 per message (at least 1)
	blockTokens int      // tokens per block of blocks; 0 when nothing is hashed
	blocks      []uint64 // hash of each full block, chained to the blocks before it
	// text is how many of the tokens are the messages' text (text parts and tool results),
	// the rest being the template's and the tool calls'; textAt[i] how many of blocks[:i+1]'s.
	text   int
	textAt []int
}

// templateToken stands for the chat template's four tokens around each message.
var templateToken = [4]string{"\x00<|start|>", "\x00<|role|>", "\x00<|sep|>", "\x00<|end|>"}

// readPrompt tokenizes messages with the profile's tokenizer (tok): each message is four
// template tokens (which depend on its role) followed by the tokens of its parts (a tool
// call's name and arguments, a text's or a tool result's content). With blockTokens > 0 it
// also hashes every full block of blockTokens tokens, each hash covering its predecessor's,
// as vLLM's prefix cache does: equal hashes mean equal prefixes.
func readPrompt(messages []chatMessage, blockTokens int, tok tokenFunc) prompt {
	pr := prompt{blockTokens: blockTokens}
	h := fnv.New64a()
	inBlock := 0
	var sum [8]byte
	token := func(text bool, parts ...[]byte) {
		pr.tokens++
		if text {
			pr.text++
		}
		if blockTokens == 0 {
			return
		}
		for _, s := range parts {
			_, _ = h.Write(s)
		}
		_, _ = h.Write([]byte{0})
		if inBlock++; inBlock == blockTokens {
			block := h.Sum64()
			pr.blocks = append(pr.blocks, block)
			pr.textAt = append(pr.textAt, pr.text)
			h.Reset()
			binary.LittleEndian.PutUint64(sum[:], block)
			_, _ = h.Write(sum[:])
			inBlock = 0
		}
	}
	for _, m := range messages {
		role := []byte(m.role())
		for _, t := range templateToken {
			token(false, []byte(t), role)
		}
		for _, p := range m.parts() {
			isText := p.kind != PartToolCall
			if !isText {
				tok(p.name, func(b []byte) { token(false, b) })
			}
			tok(p.text, func(b []byte) { token(isText, b) })
		}
	}
	pr.tokens = max(pr.tokens, 1)
	return pr
}

// textIn is how many of the first n blocks' tokens are the messages' text.
func (pr prompt) textIn(n int) int {
	if n <= 0 || n > len(pr.textAt) {
		return 0
	}
	return pr.textAt[n-1]
}

// prefixCache is a bounded LRU set of block hashes.
type prefixCache struct {
	mu       sync.Mutex
	capacity int
	order    *list.List // of uint64, most recently used first
	byHash   map[uint64]*list.Element
}

func newPrefixCache(capacity int) *prefixCache {
	return &prefixCache{capacity: capacity, order: list.New(), byHash: make(map[uint64]*list.Element)}
}

// Blocks are marked used last to first, so that a prefix's first block is always more recent
// than the blocks behind it and eviction takes the tails first, as vLLM's does: a cached block
// is only of use while its whole prefix is cached.

// match returns how many leading blocks are cached, marking them used.
func (c *prefixCache) match(blocks []uint64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for n < len(blocks) && c.byHash[blocks[n]] != nil {
		n++
	}
	for i := n - 1; i >= 0; i-- {
		c.order.MoveToFront(c.byHash[blocks[i]])
	}
	return n
}

// insert caches blocks, evicting the least recently used beyond capacity.
func (c *prefixCache) insert(blocks []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(blocks) - 1; i >= 0; i-- {
		if e, ok := c.byHash[blocks[i]]; ok {
			c.order.MoveToFront(e)
			continue
		}
		c.byHash[blocks[i]] = c.order.PushFront(blocks[i])
	}
	for c.order.Len() > c.capacity {
		oldest := c.order.Back()
		delete(c.byHash, c.order.Remove(oldest).(uint64))
	}
}

// withReply is the prompt of messages followed by the answer the simulator is about to give
// (its content, reasoning left out, as a client re-sends it), hashed like readPrompt: the
// blocks a conversation's next turn starts with when it re-sends this turn's reply. A served
// request caches them, as a server keeps the KV of the tokens it generated; a client that
// re-sends the reply exactly then finds the whole earlier turn cached. llama.cpp re-tokenises
// the reply, which may split the last block differently: the simulator caches exact prefixes.
func withReply(messages []chatMessage, answer string, blockTokens int, tok tokenFunc) prompt {
	if blockTokens == 0 {
		return prompt{}
	}
	content, err := json.Marshal(strings.TrimSpace(answer))
	if err != nil {
		return prompt{}
	}
	all := append(append([]chatMessage(nil), messages...), chatMessage{Role: "assistant", Content: content})
	return readPrompt(all, blockTokens, tok)
}

// served caches the blocks of a request's prompt with its reply (withReply) once its answer
// was sent whole.
func (e *backend) served(pr prompt) {
	if e != nil && e.cache != nil && len(pr.blocks) > 0 {
		e.cache.insert(pr.blocks)
	}
}
