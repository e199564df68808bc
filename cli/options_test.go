package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"tokscope/config"
)

// runFlags runs the command in-process with args (usage errors return before anything
// starts) and returns its exit code and stderr.
func runFlags(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main("", args, &out, &errOut)
	return code, errOut.String()
}

// oneLineNaming checks a usage error: exit 2, exactly one line on stderr, naming the flag and
// saying what it accepts (one of the given phrases).
func oneLineNaming(t *testing.T, args []string, flag string, accepts ...string) {
	t.Helper()
	code, stderr := runFlags(t, args...)
	if code != ExitUsage {
		t.Errorf("%q: exit %d, want %d; stderr %q", args, code, ExitUsage, stderr)
		return
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || !strings.HasPrefix(stderr, "tokscope: ") {
		t.Errorf("%q: stderr is not one line: %q", args, stderr)
	}
	if !strings.Contains(stderr, flag) {
		t.Errorf("%q: %q does not name %s", args, stderr, flag)
	}
	for _, a := range accepts {
		if strings.Contains(stderr, a) {
			return
		}
	}
	t.Errorf("%q: %q does not say what %s accepts (any of %q)", args, stderr, flag, accepts)
}

// Values that parse but are out of range (check()) and values pflag cannot parse at all.
func TestInvalidFlagValues(t *testing.T) {
	cases := []struct {
		args    []string
		flag    string
		accepts []string
	}{
		{[]string{"-n", "0"}, "--concurrency", []string{"whole number ≥ 1"}},
		{[]string{"-n", "abc"}, "--concurrency", []string{"whole number ≥ 1"}},
		{[]string{"--concurrency", "99999999999999999999"}, "--concurrency", []string{"whole number ≥ 1"}},
		{[]string{"--concurrency=1.5"}, "--concurrency", []string{"whole number ≥ 1"}},
		{[]string{"--max-tokens", "0"}, "--max-tokens", []string{"whole number ≥ 1"}},
		{[]string{"--max-tokens", "x"}, "--max-tokens", []string{"whole number ≥ 1"}},
		{[]string{"--requests", "-1"}, "--requests", []string{"≥ 0"}},
		{[]string{"--requests", "many"}, "--requests", []string{"≥ 0"}},
		{[]string{"--warmup", "-1"}, "--warmup", []string{"≥ 0"}},
		{[]string{"--warmup", "one"}, "--warmup", []string{"≥ 0"}},
		{[]string{"--timeout", "0s"}, "--timeout", []string{"500ms, 2s, 1m"}},
		{[]string{"--timeout", "5"}, "--timeout", []string{"500ms, 2s, 1m"}},
		{[]string{"--timeout", "-1s"}, "--timeout", []string{"500ms, 2s, 1m"}},
		{[]string{"-i", "-1s"}, "--interval", []string{"500ms, 2s, 1m"}},
		{[]string{"-i", "soon"}, "--interval", []string{"500ms, 2s, 1m"}},
		{[]string{"--duration", "-1s"}, "--duration", []string{"500ms, 2s, 1m"}},
		{[]string{"--duration", "xyz"}, "--duration", []string{"500ms, 2s, 1m"}},
		{[]string{"-o", "xml"}, "--output", []string{"table, json, csv"}},
		{[]string{"--no-tui=maybe"}, "--no-tui", []string{"true or false"}},
		{[]string{"--demo=2"}, "--demo", []string{"true or false"}},
		{[]string{"--ttft-from", "bad"}, "--ttft-from", []string{"first-token, first-event, first-answer"}},
		{[]string{"--frobnicate"}, "--frobnicate", []string{"--help"}},
		{[]string{"-x"}, "-x", []string{"--help"}},
		{[]string{"--demo", "extra"}, `"extra"`, []string{"flags only"}},
		{[]string{"-u", "http://127.0.0.1:1/v1"}, "--model", []string{"one per --url in the same order"}},
		{[]string{"-u", "http://127.0.0.1:1/v1", "-m", "a", "-m", "b"}, "--model", []string{"pairs with the --url"}},
		{[]string{"--demo", "-u", "http://127.0.0.1:1/v1", "-m", "a"}, "--demo", []string{"exclude each other"}},
		{[]string{"--demo", "--no-tui"}, "--no-tui", []string{"--requests N or --duration D"}},
	}
	for _, c := range cases {
		args := c.args
		if !slices.Contains(args, "--demo") && !slices.Contains(args, "-u") {
			args = append([]string{"--demo"}, args...) // a valid command line but for the flag under test
		}
		oneLineNaming(t, args, c.flag, c.accepts...)
	}
}

// Every flag, from --help: an unparsable value for its type and a missing value each give one
// line naming the flag and what it accepts, for flags added later too.
func TestEveryFlagRejectsBadValuesInOneLine(t *testing.T) {
	var help, errOut bytes.Buffer
	if code := Main("", []string{"--help"}, &help, &errOut); code != ExitOK || errOut.Len() > 0 {
		t.Fatalf("--help: exit %d, stderr %q", code, errOut.String())
	}
	line := regexp.MustCompile(`^\s+(?:-\w, )?--([a-z0-9-]+)(?: ([\w\[\]:]+))?\s`)
	seen := 0
	for _, l := range strings.Split(help.String(), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		seen++
		name, typ := m[1], m[2]
		var bad string
		switch typ {
		case "int", "uint", "N":
			bad = "abc"
		case "N[:SD]":
			bad = "5:x"
		case "float", "float64":
			bad = "fast"
		case "duration", "D":
			bad = "5"
		case "":
			bad = "maybe" // a bool: --flag=maybe
		}
		if bad != "" {
			oneLineNaming(t, []string{"--" + name + "=" + bad}, "--"+name, "must be", "accepted", "needs", "e.g.")
		}
		if typ != "" {
			oneLineNaming(t, []string{"--" + name}, "--"+name, "needs a value")
		}
	}
	if seen < 15 {
		t.Fatalf("only %d flags found in --help:\n%s", seen, help.String())
	}
}

func TestLoadFlagErrors(t *testing.T) {
	cases := []struct {
		args    []string
		flag    string
		accepts []string
	}{
		{[]string{"--rate", "0"}, "--rate", []string{"> 0"}},
		{[]string{"--rate", "-2"}, "--rate", []string{"> 0"}},
		{[]string{"--rate", "fast"}, "--rate", []string{"> 0"}},
		{[]string{"--rate", "NaN"}, "--rate", []string{"> 0"}},
		{[]string{"--rate", "Inf"}, "--rate", []string{"> 0"}},
		{[]string{"--rate", "1e9"}, "--rate", []string{"≤ 10000"}},
		{[]string{"--rate", "2", "-i", "1s"}, "--interval", []string{"exclude each other"}},
		{[]string{"--sweep", ""}, "--sweep", []string{"comma-separated list of whole numbers"}},
		{[]string{"--sweep", "1,2,x"}, "--sweep", []string{"comma-separated list of whole numbers"}},
		{[]string{"--sweep", "0,1"}, "--sweep", []string{"from 1 to 1024"}},
		{[]string{"--sweep", "1,,2"}, "--sweep", []string{"comma-separated list of whole numbers"}},
		{[]string{"--sweep", "1.5"}, "--sweep", []string{"comma-separated list of whole numbers"}},
		{[]string{"--sweep", "2000"}, "--sweep", []string{"from 1 to 1024"}},
		{[]string{"--sweep", "1,2", "--step-duration", "0s"}, "--step-duration", []string{"positive duration"}},
		{[]string{"--step-duration", "5s"}, "--step-duration", []string{"needs --sweep"}},
		{[]string{"--sweep", "1,2", "--rate", "3"}, "--rate", []string{"exclude each other"}},
		{[]string{"--sweep", "1,2", "-n", "3"}, "--concurrency", []string{"exclude each other"}},
		{[]string{"--sweep", "1,2", "--requests", "3"}, "--requests", []string{"exclude each other"}},
		{[]string{"--sweep", "1,2", "--duration", "3s"}, "--duration", []string{"exclude each other"}},
		{[]string{"--rate", "2", "--no-tui"}, "--no-tui", []string{"--requests N or --duration D"}},
	}
	for _, c := range cases {
		oneLineNaming(t, append([]string{"--demo"}, c.args...), c.flag, c.accepts...)
	}
	for _, ok := range [][]string{{"--sweep", " 1, 2 ,4"}, {"--rate", "0.5"}, {"--rate", "2", "-n", "4"}} {
		o, err := parseFlags(append([]string{"--demo"}, ok...), nil)
		if err != nil {
			t.Errorf("%q: %v", ok, err)
		} else if ok[0] == "--sweep" && (len(o.sweepSteps) != 3 || o.sweepSteps[2] != 4 || o.stepDuration != 30*time.Second) {
			t.Errorf("%q: steps %v × %v", ok, o.sweepSteps, o.stepDuration)
		}
	}
}

func TestWorkloadFlagErrors(t *testing.T) {
	cases := []struct {
		args    []string
		flag    string
		accepts []string
	}{
		{[]string{"--input-tokens", "0"}, "--input-tokens", []string{"must be N or N:SD tokens"}},
		{[]string{"--input-tokens", "512:-1"}, "--input-tokens", []string{"must be N or N:SD tokens"}},
		{[]string{"--input-tokens", "many"}, "--input-tokens", []string{"e.g. 512 or 512:64"}},
		{[]string{"--output-tokens", "2000000"}, "--output-tokens", []string{"from 1 to 1048576"}},
		{[]string{"--output-tokens", ""}, "--output-tokens", []string{"must be N or N:SD tokens"}},
		{[]string{"--cache", "off"}, "--cache", []string{"accepted values are bust, reuse"}},
		{[]string{"--prompts", " "}, "--prompts", []string{"needs a JSONL or ShareGPT JSON file"}},
		{[]string{"--seed", "-1"}, "--seed", []string{"a whole number ≥ 0"}},
		{[]string{"--prompt", "hi", "--input-tokens", "100"}, "--input-tokens", []string{"exclude each other"}},
		{[]string{"--input-tokens", "100", "--prompts", "p.jsonl"}, "--prompts", []string{"exclude each other"}},
		{[]string{"--max-tokens", "9", "--output-tokens", "100"}, "--output-tokens", []string{"exclude each other"}},
		{[]string{"--input-tokens", "5"}, "--input-tokens", []string{"shorter than a prompt under --cache bust can be"}},
	}
	for _, c := range cases {
		oneLineNaming(t, append([]string{"--demo", "--no-tui", "--requests", "1"}, c.args...), c.flag, c.accepts...)
	}
	for _, args := range [][]string{{"--replay", "r.jsonl", "--input-tokens", "9"}, {"--replay", "r.jsonl", "--seed", "3"}} {
		oneLineNaming(t, args, args[2], "exclude each other")
	}

	o, err := parseFlags([]string{"--demo", "--input-tokens", " 512 : 64", "--output-tokens", "128", "--cache", "reuse", "--seed", "7"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ov := o.overrides()
	if *ov.InputTokens != (config.TokenLength{N: 512, SD: 64}) || *ov.OutputTokens != (config.TokenLength{N: 128}) || *ov.Cache != "reuse" ||
		ov.Prompts != nil || ov.Prompt != nil || o.probeOptions().RateSeed != 7 {
		t.Errorf("overrides %+v, seed %d", ov, o.probeOptions().RateSeed)
	}
	if o, _ := parseFlags([]string{"--demo"}, nil); o.overrides().Cache != nil {
		t.Error("--cache not given overrides the config file's cache")
	}
}

// TestBadPromptsFile: a bad line of a prompts file is one line naming file:line, exit 2,
// before anything is sent.
func TestBadPromptsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.jsonl")
	if err := os.WriteFile(path, []byte("{\"prompt\": \"a\"}\n{\"prompt\": \"\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stderr := runFlags(t, "--demo", "--no-tui", "--requests", "1", "--prompts", path)
	if code != ExitUsage || stderr != "tokscope: "+path+":2: \"prompt\" is empty\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	code, stderr = runFlags(t, "--demo", "--no-tui", "--requests", "1", "--prompts", path+".missing")
	if code != ExitUsage || !strings.Contains(stderr, "cannot read prompts: no such file") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
}

// A misspelt flag names the nearest one; a flag nothing is near gets the pointer to --help.
func TestUnknownFlagDidYouMean(t *testing.T) {
	code, stderr := runFlags(t, "--demo", "--concurency", "2")
	if code != ExitUsage || stderr != "tokscope: unknown flag: --concurency; did you mean --concurrency?\n" {
		t.Errorf("--concurency: exit %d, stderr %q", code, stderr)
	}
	code, stderr = runFlags(t, "--demo", "--zzzzzzzz")
	if code != ExitUsage || !strings.Contains(stderr, "unknown flag: --zzzzzzzz") || strings.Contains(stderr, "did you mean") {
		t.Errorf("--zzzzzzzz: exit %d, stderr %q", code, stderr)
	}
}

// Messages quote no help metavar markers, and --no-tui alone names every way a run ends.
func TestUsageMessagesReadPlainly(t *testing.T) {
	_, stderr := runFlags(t, "-o")
	if strings.Contains(stderr, "`") || !strings.Contains(stderr, "summary FORMAT with --no-tui") {
		t.Errorf("-o: %q", stderr)
	}
	_, stderr = runFlags(t, "--demo", "--no-tui")
	for _, want := range []string{"--requests", "--duration", "--sweep", "--find-max", "--trace"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("--no-tui alone does not name %s: %q", want, stderr)
		}
	}
}
