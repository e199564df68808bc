package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"tokscope/config"
)

// Exit statuses, the contract of docs/metrics.md.
const (
	ExitOK     = 0 // every counted request succeeded (or nothing was measured: --help, --version)
	ExitFailed = 1 // some request failed, or the run could not finish its output
	ExitUsage  = 2 // a bad command line or config: nothing was measured
	ExitSLO    = 3 // headless with --slo-target: an endpoint's SLO attainment fell below it
)

// usageError is a bad command line: printed as one line on stderr, exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// wholeNumbers says what each integer flag accepts, in the words check() uses for values
// that parse but are out of range; an integer flag not listed accepts "a whole number".
var wholeNumbers = map[string]string{
	"max-tokens":  "a whole number ≥ 1",
	"concurrency": "a whole number ≥ 1",
	"requests":    "a whole number ≥ 0 (0 = no limit)",
	"warmup":      "a whole number ≥ 0",
	"seed":        "a whole number ≥ 0",
}

// flagParseError rewrites pflag's own parse errors ("invalid argument "abc" for "-n,
// --concurrency" flag: strconv.ParseInt: parsing "abc": invalid syntax") as one line that
// names the flag and what it accepts, like check() does for values that parse; an unknown
// flag gets the nearest of fs's flags as "did you mean" (config.Closest, the config file's).
func flagParseError(err error, fs *pflag.FlagSet) error {
	var invalid *pflag.InvalidValueError
	var required *pflag.ValueRequiredError
	var unknown *pflag.NotExistError
	switch {
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		return usagef("invalid value %q for --%s: must be %s", invalid.GetValue(), f.Name, accepts(f))
	case errors.As(err, &required):
		f := required.GetFlag()
		return usagef("--%s needs a value: %s", f.Name, accepts(f))
	case errors.As(err, &unknown):
		if name := unknown.GetSpecifiedName(); len(name) > 1 {
			if best := config.Closest(name, flagNames(fs)); best != "" {
				return usagef("unknown flag: --%s; did you mean --%s?", name, best)
			}
		}
		return usagef("%v (see --help for the flags)", err)
	}
	return &usageError{msg: err.Error()}
}

// flagNames are fs's long flag names, the hidden ones left out.
func flagNames(fs *pflag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	return names
}

// accepts is what a flag's value must look like, from its type.
func accepts(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "int", "int64", "uint", "uint64":
		if s, ok := wholeNumbers[f.Name]; ok {
			return s
		}
		return "a whole number"
	case "float64":
		return "a number, e.g. 2 or 0.5"
	case "duration":
		return "a duration with a unit, like 500ms, 2s, 1m"
	case "bool":
		return fmt.Sprintf("true or false (--%s alone means true)", f.Name)
	}
	if _, usage := pflag.UnquoteUsage(f); usage != "" {
		return usage // without the backquotes that name the help's metavar
	}
	return "a value"
}
