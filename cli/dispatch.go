package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"tokscope/config"
)

// The command line is `tokscope [flags]` (a measuring run) or `tokscope COMMAND [flags]
// [ARGS]`: the modes that measure nothing are commands of their own, each one entry of
// commands(), with its own flags and --help.

// command is one entry of the dispatch table.
type command struct {
	name    string // the word after tokscope; "" for the measuring run itself
	summary string // one line, for tokscope --help
	usage   string // the synopsis after "tokscope "
	about   string // what it does, for its --help
	// flags are the measuring run's flags it takes, by name; nil takes all of them.
	flags []string
	// own defines the flags only it has.
	own func(fs *pflag.FlagSet, o *options)
	// after, if any, is more help, printed after the flags.
	after func() string
	// args takes the words after the flags; nil refuses any.
	args func(o *options, words []string) error
	// tui: it shows the live view unless --no-tui (so needs a terminal then).
	tui bool
	// run does it and returns the exit status.
	run func(ctx context.Context, env *runEnv) int
}

// runEnv is what a command's run takes: the parsed command line, the process (standard
// input, discovery's places, signals) and the output streams.
type runEnv struct {
	opts           *options
	proc           process
	interrupted    *interrupts
	stdout, stderr io.Writer
}

// commands is the dispatch table, in the order tokscope --help lists them.
func commands() []*command {
	return []*command{replayCommand(), modelsCommand(), calibrateCommand(), simCommand(), watchCommand(), helpCommand()}
}

// measureCommand is tokscope without a command: measure the endpoints.
func measureCommand() *command {
	return &command{
		usage: "[flags]",
		about: "Measures LLM inference endpoints live (time to first token, decode speed, inter-token latency, errors),\n" +
			"in the terminal or headless (--no-tui) with a summary on stdout.",
		tui:  true,
		args: takeMeasureArgs,
		run:  runMeasure,
	}
}

// findCommand is the command called name, nil if none is.
func findCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// parseArgs reads the whole command line: a command word first, else a measuring run.
func parseArgs(args []string, stdout io.Writer) (*options, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return parseFlags(args, stdout)
	}
	if c := findCommand(args[0]); c != nil {
		return parseCommand(c, args[1:], stdout)
	}
	return nil, unknownCommand(args[0])
}

// unknownCommand: a word where a command or a flag goes.
func unknownCommand(word string) error {
	if best := config.Closest(word, commandNames()); best != "" {
		return usagef("unknown command %q; did you mean %q? (see tokscope --help)", word, best)
	}
	return usagef("unknown command %q: the commands are %s; a measuring run takes flags only (see tokscope --help)",
		word, strings.Join(commandNames(), ", "))
}

// parseCommand parses c's flags and words into options, then checks them; -h/--help prints
// c's help on stdout and returns pflag.ErrHelp.
func parseCommand(c *command, args []string, stdout io.Writer) (*options, error) {
	o := &options{command: c}
	all := newFlagSet("tokscope")
	registerFlags(all, o)
	fs := all
	if c.flags != nil {
		fs = newFlagSet("tokscope " + c.name)
		for _, name := range c.flags {
			fs.AddFlag(all.Lookup(name))
		}
	}
	if c.own != nil {
		c.own(fs, o)
	}
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return nil, flagParseError(err, fs)
	}
	if *help {
		writeHelp(stdout, c, fs)
		return nil, pflag.ErrHelp
	}
	o.set, o.args = fs.Changed, args
	if c.name != "" {
		o.args = append([]string{c.name}, args...) // as given, for the report's settings
	}
	takeArgs := c.args
	if takeArgs == nil {
		takeArgs = noArgs
	}
	if err := takeArgs(o, fs.Args()); err != nil {
		return nil, err
	}
	return o, o.check()
}

// noArgs refuses words after the flags; a command word there was meant first.
func noArgs(o *options, words []string) error {
	if len(words) == 0 {
		return nil
	}
	if findCommand(words[0]) != nil {
		return usagef("unexpected argument %q (flags only; a command comes first: tokscope %s --help)", words[0], words[0])
	}
	return usagef("unexpected argument %q (flags only; see --help)", words[0])
}

// helpCommand is `tokscope help [COMMAND]`: the help of tokscope or of a command.
func helpCommand() *command {
	var topic []string // the command asked about, if any
	return &command{
		name: "help", summary: "show the help of tokscope or of a command", usage: "help [COMMAND]",
		about: "Shows the help of tokscope, or of COMMAND (as tokscope COMMAND --help does).",
		flags: []string{},
		args: func(o *options, words []string) error {
			switch {
			case len(words) > 1:
				return usagef("help takes one command, got %d words", len(words))
			case len(words) == 1 && findCommand(words[0]) == nil:
				return unknownCommand(words[0])
			}
			topic = words
			return nil
		},
		run: func(_ context.Context, env *runEnv) int {
			_, _ = parseArgs(append(topic, "--help"), env.stdout)
			return ExitOK
		},
	}
}

// writeHelp prints c's help: its synopsis and what it does, the commands (for tokscope
// itself), and its flags under the headings of flagGroups.
func writeHelp(w io.Writer, c *command, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  tokscope %s\n", c.about, c.usage)
	if c.name == "" {
		fmt.Fprintf(w, "  tokscope COMMAND [flags] [ARGS]\n\nCommands:\n")
		for _, cmd := range commands() {
			fmt.Fprintf(w, "  %-10s %s\n", cmd.name, cmd.summary)
		}
	}
	writeFlagGroups(w, fs)
	if c.after != nil {
		fmt.Fprintf(w, "\n%s", c.after())
	}
	if c.name == "" {
		fmt.Fprintf(w, "\nRun tokscope COMMAND --help for a command's flags. Exit status: 0 every counted request succeeded,\n"+
			"1 some failed, 2 a bad command line or config (nothing was measured), 3 an SLO target missed.\n")
	}
}

// flagGroups are the headings of --help, each with its flags in the order shown. A flag in
// no group is shown under "Other flags" (TestEveryFlagHasAGroup keeps that heading empty).
var flagGroups = []struct {
	heading string
	flags   []string
}{
	{"Endpoints", []string{"config", "url", "model", "api", "api-key-env", "demo"}},
	{"Workload (what each request sends)", []string{"prompt", "max-tokens", "input-tokens", "output-tokens", "prompts", "cache", "seed",
		"turns", "think-time", "shared-prefix"}},
	{"Load (how many requests, how fast, how long)", []string{"concurrency", "interval", "rate", "requests", "duration", "warmup",
		"grace", "timeout", "sweep", "step-duration", "trace", "trace-speedup"}},
	{"Agent sessions", []string{"sessions", "sessions-format", "tool-time", "gap-cap", "tool-messages", "session-start", "sessions-scale"}},
	{"Objectives", []string{"slo", "slo-target", "find-max", "find-max-limit", "tier", "tier-require", "accelerators", "ttft-from"}},
	{"Outputs", []string{"no-tui", "output", "record", "report", "metrics-listen", "otlp"}},
	{"Server side", []string{"server-metrics", "gpu-metrics"}},
	{"Fleet", []string{"shard"}},
	{"Simulator", []string{"listen"}},
	{"Watch", []string{"targets", "discover", "window", "once", "replay", "sort", "filter", "canary-model"}},
	{"General", []string{"log", "version", "help"}},
}

// helpWidth is where --help wraps the flags' descriptions.
const helpWidth = 110

// writeFlagGroups prints fs's visible flags under their headings, in columns aligned across
// the groups: pflag lays out every flag at once, and the lines are then sorted into groups.
func writeFlagGroups(w io.Writer, fs *pflag.FlagSet) {
	lines := map[string][]string{} // flag name → its lines of help
	var current string
	for _, l := range strings.Split(strings.TrimRight(fs.FlagUsagesWrapped(helpWidth), "\n"), "\n") {
		if name, ok := flagLineName(l); ok {
			current = name
		}
		lines[current] = append(lines[current], l)
	}
	shown := map[string]bool{}
	print := func(heading string, names []string) {
		var block []string
		for _, n := range names {
			if _, ok := lines[n]; ok && !shown[n] {
				block, shown[n] = append(block, lines[n]...), true
			}
		}
		if len(block) > 0 {
			fmt.Fprintf(w, "\n%s:\n%s\n", heading, strings.Join(block, "\n"))
		}
	}
	for _, g := range flagGroups {
		print(g.heading, g.flags)
	}
	var rest []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && !shown[f.Name] {
			rest = append(rest, f.Name)
		}
	})
	print("Other flags", rest)
}

// flagLineName is the flag a line of pflag's usages begins ("  -c, --config FILE …" or
// "      --url …"); a wrapped description's lines are indented further.
func flagLineName(line string) (string, bool) {
	var rest string
	switch {
	case len(line) > 6 && line[:2] == "  " && line[2] == '-' && line[3] != '-' && strings.HasPrefix(line[4:], ", --"):
		rest = line[8:]
	case strings.HasPrefix(line, "      --"):
		rest = line[8:]
	default:
		return "", false
	}
	name, _, _ := strings.Cut(rest, " ")
	return name, !slices.Contains([]string{"", "-"}, name)
}
