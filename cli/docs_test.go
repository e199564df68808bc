package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// docs/cli.md is the reference of the command line: every command is in its list, and every
// flag --help shows is under the same heading there as in --help, in the same words.
func TestDocsNameEveryFlagUnderItsHeading(t *testing.T) {
	b, err := os.ReadFile("../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range commands() {
		if !strings.Contains(doc, "\ntokscope "+c.usage+" ") {
			t.Errorf("docs/cli.md's list of commands lacks tokscope %s", c.usage)
		}
	}
	sections := map[string]string{} // heading → its text, up to the next heading
	parts := regexp.MustCompile(`(?m)^#{2,3} `).Split(doc, -1)
	for _, p := range parts {
		heading, body, _ := strings.Cut(p, "\n")
		sections[heading] = body
	}
	runHelp := help(t, "--help")
	out := runHelp + help(t, "sim", "--help")
	var heading string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " ") {
			heading = strings.TrimSuffix(l, ":")
			continue
		}
		name, ok := flagLineName(l)
		if !ok {
			continue
		}
		section, found := sections[heading]
		if heading == "Simulator" { // tokscope sim's one flag, after the groups
			section, found = doc, true
		}
		if !found {
			t.Errorf("docs/cli.md has no heading %q (--%s is under it in --help)", heading, name)
			continue
		}
		if !regexp.MustCompile(`(?m)^\s+(-\w, )?--` + regexp.QuoteMeta(name) + `\s`).MatchString(section) {
			t.Errorf("docs/cli.md does not show --%s under %q, as --help does", name, heading)
		} else if strings.Contains(runHelp, l+"\n") && !strings.Contains(section, l+"\n") { // sim's own help pads its columns otherwise
			t.Errorf("docs/cli.md words --%s otherwise than --help does, which prints:\n%s", name, l)
		}
	}
}
