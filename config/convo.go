package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Conversations (docs/workloads.md, "Conversations, shared prefixes, traces"): the endpoint settings
// turns, think_time and shared_prefix, given at every level like the others.

// MaxTurns bounds turns: (a conversation re-sends all its turns, so its prompt grows with each).
const MaxTurns = 1000

// ThinkTime is the pause between a reply and the next turn of its conversation: Min, or a
// uniform draw in [Min, Max] when Max > Min.
type ThinkTime struct {
	Min, Max time.Duration
}

// IsSet reports whether there is a pause at all.
func (t ThinkTime) IsSet() bool { return t.Max > 0 }

func (t ThinkTime) String() string {
	if t.Max > t.Min {
		return t.Min.String() + "-" + t.Max.String()
	}
	return t.Min.String()
}

// ParseThinkTime reads "D" or "MIN-MAX" (Go durations, e.g. 2s or 500ms-3s).
func ParseThinkTime(s string) (ThinkTime, error) {
	lo, hi, ranged := strings.Cut(strings.TrimSpace(s), "-")
	a, err := time.ParseDuration(strings.TrimSpace(lo))
	if err != nil {
		return ThinkTime{}, fmt.Errorf("must be a duration D or a range MIN-MAX such as 2s or 500ms-3s")
	}
	b := a
	if ranged {
		if b, err = time.ParseDuration(strings.TrimSpace(hi)); err != nil {
			return ThinkTime{}, fmt.Errorf("must be a duration D or a range MIN-MAX such as 2s or 500ms-3s")
		}
	}
	if a < 0 || b < a {
		return ThinkTime{}, fmt.Errorf("must be non-negative, MIN no larger than MAX")
	}
	return ThinkTime{Min: a, Max: b}, nil
}

func (l *loader) thinkTime(p *Partial, e entry) *Error {
	s, ok, err := l.str(e)
	if err != nil || !ok {
		return err
	}
	t, perr := ParseThinkTime(s)
	if perr != nil {
		return l.errValue(e, "think_time %s, got %q", perr, s)
	}
	p.ThinkTime = &t
	return nil
}

func init() {
	settingDecoders["turns"] = func(l *loader, p *Partial, e entry) *Error {
		v, ok, err := l.integer(e, MaxTurns)
		if err == nil && ok && v < 1 {
			return l.errValue(e, "turns must be at least 1, got %d", v)
		}
		return put(&p.Turns)(v, ok, err)
	}
	settingDecoders["think_time"] = (*loader).thinkTime
	settingDecoders["shared_prefix"] = func(l *loader, p *Partial, e entry) *Error {
		return put(&p.SharedPrefix)(l.integer(e, MaxLengthTokens))
	}
}

// applyConvo lays the conversation keys of p over e (part of apply).
func (e *Endpoint) applyConvo(p *Partial) {
	set(&e.Turns, p.Turns)
	set(&e.ThinkTime, p.ThinkTime)
	set(&e.SharedPrefix, p.SharedPrefix)
}

// traceFile reads the top-level trace: path; a relative one is relative to the config file's
// directory. The file must exist now (its lines are read, and refused at the first bad one,
// before anything is sent).
func (l *loader) traceFile(e entry) (string, bool, *Error) {
	v, err := l.text(e, func(s string) string {
		if msg := checkText("trace", s); msg != "" {
			return msg + " (a Mooncake JSONL trace)"
		}
		return ""
	})
	if err != nil {
		return "", false, err
	}
	if !filepath.IsAbs(v) && l.file != "" {
		v = filepath.Join(filepath.Dir(l.file), v)
	}
	if st, serr := os.Stat(v); serr != nil || st.IsDir() {
		return "", false, l.errValue(e, "trace: cannot read %s (a Mooncake JSONL trace)", v)
	}
	return v, true, nil
}

// Where a replay of an agent session starts (session_start:, --session-start).
const (
	SessionStartFirst  = "first"
	SessionStartRandom = "random"
)

// sessionStart reads the top-level session_start: first (every replay from its first turn)
// or random (from a turn drawn from the run's seed).
func (l *loader) sessionStart(e entry) (string, bool, *Error) {
	v, err := l.text(e, func(s string) string {
		if s != SessionStartFirst && s != SessionStartRandom {
			return fmt.Sprintf("session_start must be %s (the default: a session from its first turn) or %s (from a turn drawn from the run's seed)",
				SessionStartFirst, SessionStartRandom)
		}
		return ""
	})
	return v, err == nil, err
}

// sessionsSpec reads the top-level sessions: a file, glob or directory of agent sessions; a
// relative one is relative to the config file's directory. Its files are read and checked
// when the run is built (workload.LoadSessions), before anything is sent.
func (l *loader) sessionsSpec(e entry) (string, bool, *Error) {
	v, err := l.text(e, func(s string) string {
		if msg := checkText("sessions", s); msg != "" {
			return msg + " (agent sessions: a file, glob or directory)"
		}
		return ""
	})
	if err != nil {
		return "", false, err
	}
	if !filepath.IsAbs(v) && l.file != "" {
		v = filepath.Join(filepath.Dir(l.file), v)
	}
	return v, true, nil
}
