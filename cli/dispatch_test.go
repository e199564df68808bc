package cli

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"tokscope/cli/clitest"
)

// help runs args in-process and returns stdout, failing unless it exits 0 with nothing on
// stderr.
func help(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := Main("", args, &out, &errOut); code != ExitOK || errOut.Len() > 0 {
		t.Fatalf("%q: exit %d, stderr %q", args, code, errOut.String())
	}
	return out.String()
}

// Every visible flag of a measuring run is under one heading of --help, and every flag a
// group names exists: a new flag must be given its place.
func TestEveryFlagHasAGroup(t *testing.T) {
	fs := newFlagSet("tokscope")
	registerFlags(fs, &options{})
	simCommand().own(fs, &options{})
	watchFlags := newFlagSet("tokscope watch") // its flags are its own: some share a name
	watchCommand().own(watchFlags, &options{})
	fs.BoolP("help", "h", false, "")
	grouped := map[string]string{}
	for _, g := range flagGroups {
		for _, name := range g.flags {
			if prev, dup := grouped[name]; dup {
				t.Errorf("--%s is under both %q and %q", name, prev, g.heading)
			}
			grouped[name] = g.heading
			if fs.Lookup(name) == nil && watchFlags.Lookup(name) == nil {
				t.Errorf("%q names --%s, which is no flag", g.heading, name)
			}
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if _, ok := grouped[f.Name]; !ok && !f.Hidden {
			t.Errorf("--%s is under no heading of flagGroups", f.Name)
		}
	})
	out := help(t, "--help")
	if strings.Contains(out, "Other flags:") {
		t.Errorf("--help has flags under no heading:\n%s", out)
	}
	last := -1
	for _, g := range flagGroups {
		if g.heading == "Simulator" || g.heading == "Watch" {
			continue // tokscope sim's and watch's own
		}
		i := strings.Index(out, "\n"+g.heading+":\n")
		if i < last {
			t.Errorf("--help lacks %q, or has it out of order:\n%s", g.heading, out)
		}
		last = i
	}
}

// Each flag's lines sit under its heading, in one column across the headings.
func TestHelpColumnsAligned(t *testing.T) {
	out := help(t, "--help")
	column := -1
	for _, l := range strings.Split(out, "\n") {
		name, ok := flagLineName(l)
		if !ok {
			continue
		}
		gap := strings.Index(l[strings.Index(l, "--"+name):], "  ") + strings.Index(l, "--"+name)
		desc := gap + len(l[gap:]) - len(strings.TrimLeft(l[gap:], " "))
		if column == -1 {
			column = desc
		}
		if desc != column {
			t.Errorf("--%s's description starts at column %d, the others at %d:\n%s", name, desc, column, l)
		}
	}
	if column == -1 {
		t.Fatalf("no flag line found in --help:\n%s", out)
	}
}

// tokscope --help lists the commands, each command has its --help (and tokscope help
// COMMAND the same), showing only the flags it takes; the old spellings are hidden.
func TestCommandHelp(t *testing.T) {
	top := help(t, "--help")
	if help(t, "help") != top || help(t, "-h") != top {
		t.Error("tokscope help and -h differ from tokscope --help")
	}
	for _, c := range commands() {
		if !strings.Contains(top, "\n  "+c.name+" ") || !strings.Contains(top, c.summary) {
			t.Errorf("tokscope --help does not list %s with its summary:\n%s", c.name, top)
		}
		own := help(t, c.name, "--help")
		if !strings.HasPrefix(own, c.about) || !strings.Contains(own, "Usage:\n  tokscope "+c.usage+"\n") {
			t.Errorf("tokscope %s --help:\n%s", c.name, own)
		}
		if c.name != "help" && help(t, "help", c.name) != own {
			t.Errorf("tokscope help %s differs from tokscope %s --help", c.name, c.name)
		}
		for _, name := range c.flags {
			if !strings.Contains(own, "--"+name+" ") {
				t.Errorf("tokscope %s --help lacks --%s", c.name, name)
			}
		}
		if strings.Contains(own, "--concurrency") {
			t.Errorf("tokscope %s --help shows the measuring run's flags", c.name)
		}
	}
	for _, a := range aliases {
		if strings.Contains(top, "--"+a.flag+" ") {
			t.Errorf("tokscope --help shows the old spelling --%s", a.flag)
		}
	}
	if sim := help(t, "sim", "--help"); !strings.Contains(sim, "ttft=DURATION") || !strings.Contains(sim, "slots=N") || !strings.Contains(sim, "fast-gpu") {
		t.Errorf("tokscope sim --help lacks the schedule syntax or the profiles:\n%s", sim)
	}
}

// A word where a command goes: a misspelt command gets a "did you mean", another word the
// list of commands; a command word after flags is told to come first. Bad words and flags of
// the commands, and an address tokscope sim cannot bind: one line, exit 2.
func TestUnknownCommands(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replya", "run.jsonl"}, `unknown command "replya"; did you mean "replay"?`},
		{[]string{"model", "http://127.0.0.1:1/v1"}, `did you mean "models"?`},
		{[]string{"frobnicate"}, "the commands are replay, models, calibrate, sim, watch, help"},
		{[]string{"help", "simm"}, `did you mean "sim"?`},
		{[]string{"help", "sim", "replay"}, "help takes one command"},
		{[]string{"--demo", "replay"}, "a command comes first: tokscope replay --help"},
		{[]string{"sim", "extra"}, `unexpected argument "extra"`},
		{[]string{"sim", "--listen", "127.0.0.1:"}, `invalid value "127.0.0.1:" for --listen`},
		{[]string{"sim", "--listen", busy.Addr().String()}, "--listen " + busy.Addr().String() + ": "}, // a port in use
		{[]string{"calibrate", "--api", "chat,ollama"}, "the one API"},
		{[]string{"replay"}, "replay needs FILE…"},
		{[]string{"replay", "run.jsonl", "--demo"}, "unknown flag: --demo"},
	} {
		code, stderr := runFlags(t, tc.args...)
		if code != ExitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// The commands and the old spellings parse to the same run.
func TestCommandsAndTheirOldSpellings(t *testing.T) {
	for _, tc := range []struct{ now, old []string }{
		{[]string{"replay", "--no-tui", "a.jsonl", "b.jsonl"}, []string{"--replay", "a.jsonl", "--no-tui", "b.jsonl"}},
		{[]string{"models", "http://127.0.0.1:1/v1"}, []string{"--list-models", "-u", "http://127.0.0.1:1/v1"}},
		{[]string{"calibrate", "--api", "ollama"}, []string{"--calibrate", "--api", "ollama"}},
	} {
		now, err := parseArgs(tc.now, nil)
		if err != nil {
			t.Fatalf("%q: %v", tc.now, err)
		}
		old, err := parseArgs(tc.old, nil)
		if err != nil {
			t.Fatalf("%q: %v", tc.old, err)
		}
		if now.replay != old.replay || !slices.Equal(now.urls, old.urls) || now.listModels != old.listModels ||
			now.calibrate != old.calibrate || now.api(0) != old.api(0) || now.noTUI != old.noTUI {
			t.Errorf("%q and %q differ: %+v\n%+v", tc.now, tc.old, now, old)
		}
		if now.alias != "" || !strings.Contains(old.alias, "is now spelled tokscope "+tc.now[0]) {
			t.Errorf("%q: note %q; %q: note %q", tc.now, now.alias, tc.old, old.alias)
		}
	}
}

// An Indexed Job's shard variables are for runs that send a load: a command in the same pod
// is not refused for the variables it inherits.
func TestCommandsIgnoreTheShardVariables(t *testing.T) {
	t.Setenv("TOKSCOPE_SHARDS", "not a number")
	t.Setenv("JOB_COMPLETION_INDEX", "0")
	if _, err := parseArgs([]string{"--demo", "--no-tui", "--requests", "3"}, nil); err == nil {
		t.Fatal("a measuring run took a bad $TOKSCOPE_SHARDS")
	}
	if o, err := parseArgs([]string{"sim", "--listen", "0"}, nil); err != nil || o.listen != "127.0.0.1:0" {
		t.Errorf("sim --listen 0: %v, address %q; want 127.0.0.1:0 (a bare port binds loopback)", err, o.listen)
	}
	for _, args := range [][]string{{"sim", "--listen", "0"}, {"models", "http://127.0.0.1:1/v1"}, {"calibrate"}, {"replay", "run.jsonl"}} {
		if _, err := parseArgs(args, nil); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
}

// A replay without a terminal is told to add --no-tui alone (its length is the record's, not
// --requests or --duration), and only once its files are found: a missing file is reported
// as such, not as the terminal.
func TestReplayWithoutTerminal(t *testing.T) {
	url := clitest.BusySim(t)
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	var stdout, stderr bytes.Buffer
	args := []string{"--no-tui", "--requests", "1", "--server-metrics", "off", "-u", url, "-m", "m", "--record", rec}
	if code := Main("", args, &stdout, &stderr); code != ExitOK {
		t.Fatalf("record: exit %d, stderr %q", code, stderr.String())
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "out.txt")) // a file: not a terminal
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	const want = "tokscope: standard output is not a terminal, so the live view cannot be shown; for a summary on stdout add --no-tui\n"
	for _, args := range [][]string{{"replay", rec}, {"--replay", rec}} {
		stderr.Reset()
		if code := Main("", args, out, &stderr); code != ExitUsage || !strings.HasSuffix(stderr.String(), want) || strings.Count(stderr.String(), "terminal") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", args, code, stderr.String(), ExitUsage, want)
		}
	}
	missing := filepath.Join(t.TempDir(), "nonexist.jsonl")
	stderr.Reset()
	if code := Main("", []string{"replay", missing}, out, &stderr); code != ExitUsage ||
		stderr.String() != "tokscope: replay: open "+missing+": no such file or directory\n" {
		t.Errorf("replay of a missing file: exit %d, stderr %q", code, stderr.String())
	}
	if st, _ := out.Stat(); st.Size() != 0 {
		t.Errorf("%d bytes written to the file", st.Size())
	}
}
