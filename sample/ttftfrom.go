package sample

import (
	"fmt"
	"strings"
	"time"
)

// TTFTFrom chooses the instant that TTFT is measured to. The zero value means first-token,
// the definition of docs/metrics.md; the others let a run (or a replayed record) be compared with
// tools that define TTFT differently. It changes the TTFT figure only: decode tok/s, TPOT and
// the other metrics keep their own definitions.
type TTFTFrom string

const (
	TTFTFirstToken  TTFTFrom = "first-token"  // first chunk with content or reasoning (default)
	TTFTFirstEvent  TTFTFrom = "first-event"  // first SSE data chunk of any kind, often role-only
	TTFTFirstAnswer TTFTFrom = "first-answer" // first chunk with content (TTFA)
)

// TTFTFromValues are the accepted names, default first.
var TTFTFromValues = []TTFTFrom{TTFTFirstToken, TTFTFirstEvent, TTFTFirstAnswer}

// ParseTTFTFrom accepts one of TTFTFromValues ("" is first-token).
func ParseTTFTFrom(s string) (TTFTFrom, error) {
	if s == "" {
		return TTFTFirstToken, nil
	}
	for _, v := range TTFTFromValues {
		if TTFTFrom(s) == v {
			return v, nil
		}
	}
	names := make([]string, len(TTFTFromValues))
	for i, v := range TTFTFromValues {
		names[i] = string(v)
	}
	return "", fmt.Errorf("unknown TTFT definition %q: accepted values are %s", s, strings.Join(names, ", "))
}

// Name is the definition's name, "first-token" for the zero value.
func (f TTFTFrom) Name() string {
	if f == "" {
		return string(TTFTFirstToken)
	}
	return string(f)
}

// TTFT is the sample's time to first token under this definition; ok=false when that
// instant did not happen.
func (f TTFTFrom) TTFT(s *Sample) (time.Duration, bool) {
	switch f {
	case TTFTFirstEvent:
		return s.TTFEvent()
	case TTFTFirstAnswer:
		return s.TTFA()
	}
	return s.TTFT()
}
