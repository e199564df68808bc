package workload

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Conversations (--turns) and the shared system prompt (--shared-prefix): docs/workloads.md,
// "Conversations, shared prefixes, traces".

// Turns is how many requests a conversation of the endpoint has (1 outside --turns).
func (w *Workload) Turns() int { return max(w.ep.Turns, 1) }

// sharedPrefix cuts the --shared-prefix system text: the first N tokens of the corpus, the
// same for every endpoint and run, so that a server's prefix cache can serve it and nothing
// after it (the cache-busting tag comes after it, in the first user message).
func (w *Workload) sharedPrefix() error {
	n := w.ep.SharedPrefix
	if n <= 0 {
		return nil
	}
	c, err := loadCorpus()
	if err != nil {
		return fmt.Errorf("--shared-prefix needs the offline tokenizer: %w", err)
	}
	text, err := c.exact("", 0, n)
	if err != nil {
		body, terr := c.text(0, n)
		if terr != nil {
			return fmt.Errorf("--shared-prefix: %w", err)
		}
		text = body
	}
	w.prefix = strings.TrimPrefix(text, " ")
	return nil
}

// withPrefix puts the shared system text before req's messages.
func (w *Workload) withPrefix(req Request) Request {
	if w.prefix == "" {
		return req
	}
	msgs := make([]Message, 0, len(req.Messages)+1)
	msgs = append(msgs, Message{Role: "system", Content: w.prefix})
	req.Messages = append(msgs, req.Messages...)
	if req.PromptTokens > 0 {
		req.PromptTokens += w.ep.SharedPrefix
	}
	return req
}

// Conversation is one stream's conversation in progress: the turns sent and the replies as
// they streamed. It is used by one goroutine at a time.
type Conversation struct {
	w       *Workload
	id      uint64
	tag     string
	item    *Item // the prompts file's entry of its first turn; nil without a file
	turn    int   // turns handed out
	history []Message
	ended   bool
}

// NewConversation starts the next conversation of the endpoint.
func (w *Workload) NewConversation() *Conversation {
	return &Conversation{w: w, id: w.convs.Add(1)}
}

// Done reports whether every turn was handed out, or the conversation was ended.
func (c *Conversation) Done() bool { return c.ended || c.turn >= c.w.Turns() }

// End ends the conversation before its last turn (a turn failed: its reply is unknown).
func (c *Conversation) End() { c.ended = true }

// Turn is how many turns were handed out.
func (c *Conversation) Turn() int { return c.turn }

// Next is the conversation's next turn: the shared prefix, every earlier turn with its reply,
// then a new user message. The first turn is the workload's next request with its tag; a
// later turn's message is the ShareGPT conversation's next human turn, else the workload's
// next request (a JSONL line, a synthetic prompt of --input-tokens, the fixed prompt),
// untagged: the conversation's tag is in its first turn.
func (c *Conversation) Next() Request {
	w := c.w
	i := w.next.Add(1) - 1
	c.turn++
	req := w.build(i, c.turn == 1 && w.busting())
	if c.turn == 1 {
		c.tag = req.Tag
		if w.set != nil {
			c.item = &w.set.Items[i%uint64(len(w.set.Items))]
		}
	} else {
		req.Tag, req.PromptTokens = c.tag, 0
		if c.item != nil && c.turn-2 < len(c.item.Later) {
			req.Messages = []Message{{Role: "user", Content: c.item.Later[c.turn-2]}}
		}
	}
	c.history = append(c.history, req.Messages...)
	req.Messages = append([]Message(nil), c.history...)
	req.Conversation, req.Turn = c.id, c.turn
	return w.withPrefix(req)
}

// Reply adds the answer of the last turn as it streamed (reasoning excluded).
func (c *Conversation) Reply(text string) {
	c.history = append(c.history, Message{Role: "assistant", Content: text})
}

// ThinkTime draws the pause before the conversation's next turn (0 without --think-time).
func (w *Workload) ThinkTime() time.Duration {
	t := w.ep.ThinkTime
	if t.Max <= t.Min {
		return t.Min
	}
	return t.Min + rand.N(t.Max-t.Min+1)
}
