package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Cache modes (Endpoint.Cache, --cache).
const (
	// CacheBust starts every request's prompt with a unique tag, so that no server prefix
	// cache can serve it: TTFT then includes the prefill of the whole prompt.
	CacheBust = "bust"
	// CacheReuse sends the prompts as they are: repeated prompts measure the cached path.
	CacheReuse = "reuse"
	// DefaultCache is bust: a benchmark that silently measured cache hits would report TTFT
	// far below what a new prompt costs.
	DefaultCache = CacheBust
)

// CacheModes lists the accepted cache modes, for messages.
var CacheModes = []string{CacheBust, CacheReuse}

// MaxLengthTokens bounds --input-tokens and --output-tokens (and every draw from them): no
// model takes a million-token prompt, and a typo must not build a gigabyte of text.
const MaxLengthTokens = 1 << 20

// TokenLength is a length in tokens, N[:SD]: each request draws its own from a normal
// distribution of mean N and standard deviation SD (0 = always N). The zero value is "not
// set".
type TokenLength struct {
	N  int
	SD float64
}

// IsSet reports whether a length was given.
func (l TokenLength) IsSet() bool { return l.N > 0 }

// String is the N[:SD] form; "" when not set.
func (l TokenLength) String() string {
	switch {
	case !l.IsSet():
		return ""
	case l.SD == 0:
		return strconv.Itoa(l.N)
	}
	return strconv.Itoa(l.N) + ":" + strconv.FormatFloat(l.SD, 'f', -1, 64)
}

// ParseTokenLength reads N or N:SD: N a whole number from 1 to MaxLengthTokens, SD a number ≥ 0
// (fractions allowed). The error says what is accepted, without naming a flag or a key.
func ParseTokenLength(s string) (TokenLength, error) {
	bad := func() (TokenLength, error) {
		return TokenLength{}, fmt.Errorf("must be N or N:SD tokens (N a whole number from 1 to %d, SD ≥ 0), e.g. 512 or 512:64, got %q",
			MaxLengthTokens, s)
	}
	ns, sds, hasSD := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.Atoi(strings.TrimSpace(ns))
	if err != nil || n < 1 || n > MaxLengthTokens {
		return bad()
	}
	l := TokenLength{N: n}
	if hasSD {
		sd, err := strconv.ParseFloat(strings.TrimSpace(sds), 64)
		if err != nil || sd < 0 || math.IsNaN(sd) || math.IsInf(sd, 0) || sd > MaxLengthTokens {
			return bad()
		}
		l.SD = sd
	}
	return l, nil
}

func checkLength(field string, l TokenLength) string {
	if l == (TokenLength{}) {
		return ""
	}
	if l.N < 1 || l.N > MaxLengthTokens || l.SD < 0 || math.IsNaN(l.SD) || l.SD > MaxLengthTokens {
		return fmt.Sprintf("%s must be N or N:SD tokens (N from 1 to %d, SD ≥ 0), got %d:%g", field, MaxLengthTokens, l.N, l.SD)
	}
	return ""
}

func checkCache(mode string) string {
	switch mode {
	case CacheBust, CacheReuse:
		return ""
	}
	return fmt.Sprintf("cache must be %s or %s, got %q", CacheBust, CacheReuse, mode)
}
