package workload

import (
	_ "embed"
	"errors"
	"slices"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// corpusText is natural English prose: the Queries of Isaac Newton's Opticks (4th edition,
// 1730; public domain), taken from Go's src/testdata/Isaac.Newton-Opticks.txt with the
// italics underscores, side notes and figure captions removed and lines joined into
// paragraphs. Synthetic prompts are cut from it, so that every tokenizer meets words, not
// random token ids (which tokenize into far more pieces than text of the same length).
//
//go:embed corpus.txt
var corpusText string

// corpus is the tokenized corpusText, read as a ring: a prompt longer than the corpus wraps
// around to its start (the text ends with a paragraph break).
type corpus struct {
	ids []uint
	// starts are the token indices where a word begins after a space: the places a
	// synthetic prompt may begin without cutting a word in two.
	starts []int
	codec  tokenizer.Codec
}

var loadCorpus = sync.OnceValues(func() (*corpus, error) {
	c, err := Tokenizer()
	if err != nil {
		return nil, err
	}
	ids, toks, err := c.Encode(corpusText)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, errors.New("workload: empty corpus")
	}
	cp := &corpus{ids: ids, codec: c}
	for i, t := range toks {
		if len(t) > 1 && t[0] == ' ' && isLetter(t[1]) {
			cp.starts = append(cp.starts, i)
		}
	}
	return cp, nil
})

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// text decodes n tokens of the ring from token index start. Cut at one of starts, it
// begins with the space before its first word.
func (c *corpus) text(start, n int) (string, error) {
	buf := make([]uint, 0, n)
	for len(buf) < n {
		i := (start + len(buf)) % len(c.ids)
		buf = append(buf, c.ids[i:min(len(c.ids), i+n-len(buf))]...)
	}
	return c.codec.Decode(buf)
}

// exact returns prefix + text cut from the ring at start, n tokens long in the offline
// tokenizer (prefix included; n must exceed prefix's own length). Decoding a slice of
// tokens and encoding the text again can give a token more or less where the slice cut a
// word; the slice is lengthened or shortened until the count is exact, and the start moves
// to the next word when that does not converge. Cut at one of starts, the text begins with
// a space, which separates it from the prefix.
func (c *corpus) exact(prefix string, start, n int) (string, error) {
	pre, err := c.codec.Count(prefix)
	if err != nil {
		return "", err
	}
	if n <= pre {
		return "", errors.New("workload: prompt length within the tag")
	}
	startIdx, _ := slices.BinarySearch(c.starts, start)
	for range 16 {
		m := n - pre
		for range 8 {
			body, err := c.text(start, m)
			if err != nil {
				return "", err
			}
			s := prefix + body
			got, err := c.codec.Count(s)
			if err != nil {
				return "", err
			}
			if got == n {
				return s, nil
			}
			m = max(1, m+n-got)
		}
		startIdx = (startIdx + 1) % len(c.starts)
		start = c.starts[startIdx]
	}
	return "", errors.New("workload: no exact cut of the corpus")
}
