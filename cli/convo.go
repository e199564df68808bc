package cli

import (
	"github.com/spf13/pflag"

	"tokscope/config"
)

// convoFlags are --turns, --think-time and --shared-prefix (DESIGN.md, "Conversations,
// shared prefixes, traces"): endpoint settings of the command line's level.
type convoFlags struct {
	turns        int
	thinkText    string
	thinkTime    config.ThinkTime
	sharedPrefix int
}

func addConvoFlags(fs *pflag.FlagSet, o *options) {
	fs.IntVar(&o.convo.turns, "turns", 1, "conversations of `N` turns per stream: turn k sends every earlier turn with the replies exactly as they streamed, and a new user message")
	fs.StringVar(&o.convo.thinkText, "think-time", "", "pause between a reply and the next turn of its conversation (`D` or MIN-MAX)")
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
