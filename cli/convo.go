package cli

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"tokscope/config"
	"tokscope/workload"
)

// convoFlags are --turns, --think-time and --shared-prefix (docs/workloads.md, "Conversations,
// shared prefixes, traces"): endpoint settings of the command line's level.
type convoFlags struct {
	turns        int
	thinkText    string
	thinkTime    config.ThinkTime
	sharedPrefix int
	trace        string  // --trace FILE: run-wide, not an endpoint setting
	traceSpeedup float64 // --trace-speedup
}

func addConvoFlags(fs *pflag.FlagSet, o *options) {
	fs.IntVar(&o.convo.turns, "turns", 1, "conversations of `N` turns per stream: turn k sends every earlier turn with the replies exactly as they streamed, and a new user message")
	fs.StringVar(&o.convo.thinkText, "think-time", "", "pause between a reply and the next turn of its conversation (`D` or MIN-MAX)")
	fs.StringVar(&o.convo.trace, "trace", "", "replay a timestamped trace `FILE` (Mooncake JSONL: {\"timestamp\": ms, \"input_length\", \"output_length\", \"hash_ids\": [...]}) open loop on its timestamps")
	fs.Float64Var(&o.convo.traceSpeedup, "trace-speedup", 1, "divide the trace's timestamps by `F`")
	fs.IntVar(&o.convo.sharedPrefix, "shared-prefix", 0, "every prompt begins with the same `N`-token system text, as a fleet's system prompt does; the cache-busting tag comes after it")
}

// checkConvo parses --think-time and checks --turns and --shared-prefix.
func (o *options) checkConvo() error {
	if o.set("turns") && (o.convo.turns < 1 || o.convo.turns > config.MaxTurns) {
		return usagef("invalid value %d for --turns: give 1 to %d", o.convo.turns, config.MaxTurns)
	}
	if o.set("shared-prefix") && (o.convo.sharedPrefix < 0 || o.convo.sharedPrefix > config.MaxLengthTokens) {
		return usagef("invalid value %d for --shared-prefix: give 0 to %d tokens", o.convo.sharedPrefix, config.MaxLengthTokens)
	}
	if o.set("trace-speedup") && !(o.convo.traceSpeedup > 0 && o.convo.traceSpeedup < 1e6) {
		return usagef("invalid value %v for --trace-speedup: must be > 0, e.g. 2 to replay twice as fast", o.convo.traceSpeedup)
	}
	if o.set("trace") {
		for _, f := range []string{"rate", "sweep", "find-max", "turns"} {
			if o.set(f) {
				return usagef("--trace and --%s exclude each other: the trace's timestamps pace the requests, each its own", f)
			}
		}
	}
	if o.set("think-time") {
		t, err := config.ParseThinkTime(o.convo.thinkText)
		if err != nil {
			return usagef("invalid value %q for --think-time: %s", o.convo.thinkText, err)
		}
		o.convo.thinkTime = t
	}
	return nil
}

// convoOverrides adds the conversation flags to the command line's level.
func (o *options) convoOverrides(p *config.Overrides) {
	p.Turns = given(o, "turns", &o.convo.turns)
	p.ThinkTime = given(o, "think-time", &o.convo.thinkTime)
	p.SharedPrefix = given(o, "shared-prefix", &o.convo.sharedPrefix)
}

// useTrace loads the run's trace (--trace, else the config's trace:) and makes it the
// schedule: every endpoint replays it whole, each request at its timestamp (divided by
// --trace-speedup), open loop with the client queue reported as with --rate (the trace's
// mean rate). --requests defaults to the trace's length; the queue holds the whole trace, so
// that no arrival is dropped: a trace faster than the endpoint shows its backlog. A bad line
// is refused here, before anything is sent, as file:line.
func (o *options) useTrace(cfg *config.Config, works []*workload.Workload) (schedule []time.Duration, err error) {
	path := o.convo.trace
	if path == "" {
		path = cfg.Trace
	}
	if path == "" {
		return nil, nil
	}
	tr, err := workload.LoadTrace(path)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	// The rule of --requests: every shard refuses a trace with fewer lines than shards,
	// not only the shards whose share would be empty.
	if o.shard.On() && len(tr.Entries) < o.shard.Of {
		return nil, fmt.Errorf("--trace %s: %d lines is fewer than the %d shards (%s): some shards would have none",
			path, len(tr.Entries), o.shard.Of, o.shard)
	}
	tr = tr.Share(o.shard.Takes) // a shard's share: every N-th line
	for i, w := range works {
		if err := w.UseTrace(tr); err != nil {
			return nil, fmt.Errorf("endpoint %q: %w", cfg.Endpoints[i].Name, err)
		}
	}
	schedule = tr.Schedule(o.convo.traceSpeedup)
	if span := schedule[len(schedule)-1]; span > 0 {
		o.rate = float64(len(schedule)-1) / span.Seconds()
	} else {
		o.rate = float64(len(schedule))
	}
	if o.requests <= 0 || o.requests > len(schedule) {
		o.requests = len(schedule)
	}
	return schedule, nil
}
