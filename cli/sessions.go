package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
	"tokscope/feature"

	"github.com/spf13/pflag"

	"tokscope/config"
	"tokscope/workload"
)

// sessionFlags are --sessions and its settings: agent sessions replayed lane by lane
// (workload/sessions*.go, probe/sessions.go).
type sessionFlags struct {
	spec     string // --sessions FILE|GLOB|DIR
	format   string // --sessions-format
	toolTime string // --tool-time
	gapCap   time.Duration
	scale    float64 // --sessions-scale
	toolMsgs string  // --tool-messages
	start    string  // --session-start
	gaps     workload.GapPolicy
}

func addSessionFlags(fs *pflag.FlagSet, o *options) {
	fs.StringVar(&o.sess.spec, "sessions", "", "replay agent sessions from a `FILE`, glob or directory (AgentX/Weka JSON, TraceLab or AA agentperf JSONL): -n sessions in flight per endpoint, each turn as recorded")
	fs.StringVar(&o.sess.format, "sessions-format", "", "read --sessions as `FORMAT` instead of detecting it: "+strings.Join(workload.SessionFormats, " | "))
	fs.StringVar(&o.sess.toolTime, "tool-time", "recorded", "`MODE` of the waits between a session's turns: recorded | none | scaled:F (F times the recorded)")
	fs.DurationVar(&o.sess.gapCap, "gap-cap", workload.DefaultGapCap, "no wait between a session's turns is longer than `D` (0: no cap)")
	fs.StringVar(&o.sess.toolMsgs, "tool-messages", workload.ToolMessagesAPI, "`MODE` of a session's tool calls and results: api (each API's own tool messages) | text (plain user text)")
	fs.StringVar(&o.sess.start, "session-start", workload.SessionStartFirst, "`WHERE` each replay of a session starts: first (its first turn) | random (a turn drawn from --seed; the context so far is its first prompt)")
	fs.Float64Var(&o.sess.scale, "sessions-scale", 1, "multiply every recorded prompt and output length by `F` (for a server whose context is smaller than the trace's)")
}

// checkSessions checks the session flags and what they exclude.
func (o *options) checkSessions() error {
	if o.set("sessions-format") && !oneOf(o.sess.format, workload.SessionFormats) {
		return usagef("invalid value %q for --sessions-format: give %s", o.sess.format, strings.Join(workload.SessionFormats, ", "))
	}
	if !oneOf(o.sess.toolMsgs, workload.ToolMessageModes) {
		return usagef("invalid value %q for --tool-messages: give %s", o.sess.toolMsgs, strings.Join(workload.ToolMessageModes, ", "))
	}
	if !oneOf(o.sess.start, workload.SessionStarts) {
		return usagef("invalid value %q for --session-start: give %s", o.sess.start, strings.Join(workload.SessionStarts, ", "))
	}
	g, err := workload.ParseToolTime(o.sess.toolTime)
	if err != nil {
		return usagef("invalid value %q for --tool-time: %s", o.sess.toolTime, err)
	}
	if o.sess.gapCap < 0 {
		return usagef("invalid value %v for --gap-cap: must be at least 0", o.sess.gapCap)
	}
	g.Cap = o.sess.gapCap
	o.sess.gaps = g
	if o.set("sessions-scale") && !(o.sess.scale > 0 && o.sess.scale <= 1) {
		return usagef("invalid value %v for --sessions-scale: give a factor above 0, at most 1", o.sess.scale)
	}
	if o.set("sessions") {
		for _, f := range []string{"trace", "turns", "rate", "prompts", "input-tokens"} {
			if o.set(f) {
				return usagef("--sessions and --%s exclude each other: a session's turns are the trace's own", f)
			}
		}
	}
	return nil
}

func oneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// useSessions loads the run's session pool (--sessions, else the config's sessions:) and
// gives it to every endpoint's workload. A bad file is refused here, before anything is
// sent, with its file:line or JSON path.
func (o *options) useSessions(cfg *config.Config, works []*workload.Workload, stderr io.Writer) error {
	spec := o.sess.spec
	if spec == "" {
		spec = cfg.Sessions
	}
	if spec == "" {
		return nil
	}
	pool, err := workload.LoadSessions(spec, o.sess.format)
	if err != nil {
		return fmt.Errorf("--sessions: %w", err)
	}
	start := o.sess.start
	if !o.set("session-start") && cfg.SessionStart != "" {
		start = cfg.SessionStart
	}
	for i, w := range works {
		so := workload.SessionOptions{Gaps: o.sess.gaps, Scale: o.sess.scale, ToolMessages: o.sess.toolMsgs, Start: start}
		if err := w.UseSessions(pool, so); err != nil {
			return fmt.Errorf("endpoint %q: %w", cfg.Endpoints[i].Name, err)
		}
	}
	fmt.Fprintf(stderr, "tokscope: --sessions %s: %s, %s (%s)\n", spec, feature.Counted(len(pool.Sessions), "session"), feature.Counted(pool.Turns, "turn"), poolFormats(pool))
	return nil
}

// poolFormats names the pool's format, or, when its files mix several (each file's is
// detected on its own), every format and how many of the sessions are in it.
func poolFormats(pool *workload.SessionPool) string {
	count := map[string]int{}
	for _, s := range pool.Sessions {
		count[s.Format]++
	}
	if len(count) == 1 {
		return pool.Sessions[0].Format
	}
	var parts []string
	for _, f := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("%s %d", f, count[f]))
	}
	return "sessions by format: " + strings.Join(parts, ", ")
}
