package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tokscope/sim"
)

var (
	// A sub-agent's row under lane 1 or 2 ("    1├1 ", "▸   2├1 ").
	reSubRow = regexp.MustCompile(`(?m)^[▸ ] +[12]├1 `)
	// The selected turn's first line, and the row it is on, marked.
	reSelected   = regexp.MustCompile(`(?m)^selected  lane \d+( sub-agent \d+ \(depth \d\))? turn \d+ · at \d\d:\d\d:\d\d`)
	reMarkedRow  = regexp.MustCompile(`(?m)^▸ +\d+(├\d)? `)
	reTurnPhases = regexp.MustCompile(`headers \d+ ms · to first token \d+ ms \(ttft \d+ ms\) · decode \d+(\.\d+)? m?s`)
)

// TestLanesViewInTmux replays the AgentX trace with two Explore sub-agents (one of them in the
// background) on two lanes against the simulator's fast-gpu (vLLM-like: it reports its queue),
// in a real terminal: key 6 shows the lanes with the sub-agents on rows of their own; ← selects
// the last finished turn and shows its breakdown (connection, headers, to first token, decode,
// the server's queue, the cache), ↑ moves to the row above (a lane's own), ← there an earlier
// turn; Esc follows the last turn again, and a second Esc goes back to the dashboard.
func TestLanesViewInTmux(t *testing.T) {
	tmuxPath := needTmux(t)
	p := sim.DemoProfiles()[0]
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	trace, err := filepath.Abs("../workload/testdata/sessions/agentx_trace_0291_cut.json")
	if err != nil {
		t.Fatal(err)
	}
	bin := buildTokscope(t)
	tm := startTmuxScript(t, tmuxPath, 110, 32,
		`TERM=xterm-256color "$1" -u "$4" -m "$5" --warmup 0 -n 2 --sessions "$6" --sessions-scale 0.02 --tool-time scaled:0.02 2>"$3"; `+
			`s=$?; echo "$s" >"$2"; echo "tokscope exited with status $s"; exec sleep 300`, bin, srv.BaseURL(p.Name), p.Model, trace)

	tm.waitFor("the lanes in the tabs", shows("6 Lanes"))
	tm.key("6")
	tm.waitFor("lanes with sub-agents", shows("Lanes: ", "last turn lane", "following the last turn"), showsMatches(reSubRow, 1), shows("╭"))
	tm.key("Left")
	first := tm.waitFor("← selects the last turn", shows("turn selected"), showsMatches(reSelected, 1), showsMatches(reMarkedRow, 1),
		shows("server: queue"), shows("cache ideal"), breakdownMatches(reTurnPhases))
	// The last turn may be a sub-agent's only one: ↑ to its lane's own row, which has several.
	for i := 0; i < 4 && strings.Contains(reMarkedRow.FindString(first), "├"); i++ {
		tm.key("Up")
		first = tm.waitFor("↑ a row up", showsMatches(reSelected, 1), func(s string) error {
			if reMarkedRow.FindString(s) == reMarkedRow.FindString(first) {
				return fmt.Errorf("still on %q", reMarkedRow.FindString(s))
			}
			return nil
		})
	}
	tm.key("Left")
	second := tm.waitFor("← an earlier turn", showsMatches(reSelected, 1), func(s string) error {
		if reSelected.FindString(s) == reSelected.FindString(first) {
			return fmt.Errorf("still %q", reSelected.FindString(s))
		}
		return nil
	})
	t.Logf("selected %q, then %q", reSelected.FindString(first), reSelected.FindString(second))
	tm.key("Escape")
	tm.waitFor("esc follows the last turn", shows("last turn lane", "following the last turn"), hides("selected  lane"))
	tm.key("Escape")
	tm.waitFor("a second esc: the dashboard", shows("decode tok/s", p.Model), hides("Lanes: ", "last turn lane"))
}

// breakdownMatches checks the breakdown under the strip, its wrapped lines joined.
func breakdownMatches(re *regexp.Regexp) screenCheck {
	return func(s string) error {
		var parts []string
		on := false
		for _, l := range strings.Split(s, "\n") {
			on = on || strings.HasPrefix(l, "selected  ") || strings.HasPrefix(l, "last turn ")
			if l = strings.TrimSpace(l); on && l != "" && !strings.Contains(l, "•") {
				parts = append(parts, l)
			}
		}
		if !re.MatchString(strings.Join(parts, " ")) {
			return fmt.Errorf("no /%s/ in the breakdown %q", re, strings.Join(parts, " "))
		}
		return nil
	}
}
