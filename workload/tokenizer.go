package workload

import (
	"sync"
	"sync/atomic"

	"github.com/tiktoken-go/tokenizer"
)

// The offline tokenizer, loaded once per process for everything that counts tokens offline:
// the synthetic prompts here, and the probe's output-token estimates (probe imports
// workload, not the other way round, so the one loader lives in the lower layer).
// cl100k_base rather than o200k: it is exact for Llama 3 on English and code (docs/metrics.md).

// Tokenizer is the offline tokenizer. The first call builds its tables (tens of
// milliseconds); every later one returns the same codec. Safe for concurrent use.
func Tokenizer() (tokenizer.Codec, error) { return loadTokenizer() }

var loadTokenizer = sync.OnceValues(func() (tokenizer.Codec, error) {
	c, err := tokenizer.Get(tokenizer.Cl100kBase)
	tokenizerLoaded.Store(err == nil)
	return c, err
})

var tokenizerLoaded atomic.Bool

// TokenizerReady says whether Tokenizer's tables are built, without waiting for them: a
// stream that counts tokens live must not stop reading for tens of milliseconds.
func TokenizerReady() bool { return tokenizerLoaded.Load() }

// CountTokens is text's length in the offline tokenizer.
func CountTokens(text string) (int, error) {
	c, err := Tokenizer()
	if err != nil {
		return 0, err
	}
	return c.Count(text)
}
