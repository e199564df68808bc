package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

const (
	// stepTimeout bounds each expectation. The UI answers a key in milliseconds; the margin is
	// for a race-enabled binary on a loaded 2-core CI machine.
	stepTimeout = 20 * time.Second
	pollEvery   = 100 * time.Millisecond
	// tmuxTimeout bounds one tmux command.
	tmuxTimeout = 10 * time.Second
)

// The simulated endpoints of `tokscope --demo`, in config order.
var demoNames = []string{"fast-gpu", "slow-cpu", "reasoner", "flaky-cloud"}

var (
	// A card figure with data: "ttft 72 ms last", "ttft ms 312 last", "60s p50 120" (before
	// data they read "—").
	reCardFigure = regexp.MustCompile(`ttft (ms )?\d+(\.\d+)?( ms)? last|60s p50 \d+`)
	reCardTTFT   = regexp.MustCompile(`ttft (ms )?\d+(\.\d+)?( ms)? last`)
	// A compare row: the name, then three columns of figures or "—" (no data yet); and one
	// with figures.
	reCompareRow  = regexp.MustCompile(`(?m)^[▶ ] (fast-gpu|slow-cpu|reasoner|flaky-cloud) +(\d+(\.\d+)?\*?|—) +(\d+(\.\d+)?\*?|—) +(\d+(\.\d+)?\*?|—)`)
	reCompareData = regexp.MustCompile(`(?m)^[▶ ] (fast-gpu|slow-cpu|reasoner|flaky-cloud) +\d+(\.\d+)?\*? +\d+(\.\d+)?\*? +\d+(\.\d+)?\*?`)
	// The live line under a stream pane while tokens arrive.
	reLiveFigures = regexp.MustCompile(`ttft \d+(\.\d+)?ms · ≈?\d+(\.\d+)? tok/s · ≈?\d+ tok so far`)
	// A pane's figures, in any of its widths: "ttft 746ms · 39.9 tok/s", "100ms 121t/s".
	rePaneFigures = regexp.MustCompile(`\d+(\.\d+)?ms( ·)? ≈?\d+(\.\d+)? ?t(ok)?/s`)
	// Words of the simulator's vocabulary (sim/frames.go): streamed text reached the screen.
	reSimWords = regexp.MustCompile(`\b(quick|brown|fox|jumps|lazy|river|birds)\b`)
)

// sparkGlyphs are the block elements ntcharts' sparkline draws with (ui/charts.go).
const sparkGlyphs = "▁▂▃▄▅▆▇█"

// TestTUIInTmux drives the real binary in a real terminal: a private tmux server.
func TestTUIInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the end-to-end test builds the binary and runs it in tmux for ~20 s")
	}
	tmuxPath, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("tmux not found (%v): this test runs tokscope in a real terminal and needs it; "+
			"install it with `apt-get install -y tmux` (CI does)", err)
	}
	began := time.Now()
	bin := buildTokscope(t)
	t.Logf("built %s in %v (race: %v)", bin, time.Since(began).Round(time.Millisecond), raceBuild)

	tm := startTmux(t, tmuxPath, bin, 100, 30)
	began = time.Now()
	defer func() { t.Logf("terminal session took %v", time.Since(began).Round(time.Millisecond)) }()

	// 1. The dashboard at 100×30: four cards, then figures and sparklines once data arrives.
	tm.waitFor("dashboard 100x30", fillsTerminal(100, 30), shows(demoNames...))
	tm.waitFor("dashboard with data", fillsTerminal(100, 30), shows(demoNames...),
		showsMatches(reCardFigure, 2), showsAnyOf(sparkGlyphs))

	// 2. Every view by its key, and back.
	tm.key("2")
	tm.waitFor("compare", compareView(100, 30))
	tm.key("3")
	tm.waitFor("detail of fast-gpu", detailView(100, 30, "fast-gpu"))
	tm.key("Escape") // detail returns where it came from
	tm.waitFor("esc from detail back to compare", compareView(100, 30))
	tm.key("Escape")
	tm.waitFor("esc from compare back to dashboard", dashboardView(100, 30))
	tm.key("Enter")
	tm.waitFor("enter: detail", detailView(100, 30, "fast-gpu"))
	tm.key("Escape")
	tm.waitFor("esc from detail back to dashboard", dashboardView(100, 30))

	// Stream view: choose slow-cpu (the slowest, so the live figures stay up for seconds),
	// replace the prompt and stream it.
	tm.key("4")
	tm.waitFor("stream", streamView(100, 30), shows("enter: stream to fast-gpu"))
	tm.key("l")
	tm.waitFor("stream: slow-cpu selected", streamView(100, 30), shows("enter: stream to slow-cpu"))
	tm.key("/")
	tm.waitFor("prompt focused", streamView(100, 30), shows("esc: leave prompt"))
	tm.key("C-u") // textinput: delete before the cursor (it sits at the end)
	tm.typeText("e2e hello")
	tm.waitFor("prompt typed", streamView(100, 30), shows("prompt> e2e hello"),
		hides("lighthouse"))
	tm.key("Enter")
	tm.waitFor("stream to slow-cpu live", streamView(100, 30), shows("stream #", "slow-cpu"),
		showsMatches(reLiveFigures, 1), showsMatches(reSimWords, 3))

	// A race on every endpoint (Ctrl-R), shown as four panes.
	tm.key("C-r")
	// flaky-cloud fails ~16% of its requests (sim.DemoProfiles): three panes must show figures.
	tm.waitFor("race", streamView(100, 30), shows("race #", "4 endpoint(s)"),
		shows(demoNames...), showsMatches(rePaneFigures, 3), showsMatches(reSimWords, 4),
		// reasoner speaks Anthropic Messages (sim.DemoProfiles): its own pane has text and figures.
		paneMatches("reasoner", rePaneFigures), paneMatches("reasoner", reSimWords))

	// Help, and Esc out of it back to the view it covered.
	tm.key("?")
	tm.waitFor("help", helpView(100, 30))
	tm.key("Escape")
	tm.waitFor("esc from help", streamView(100, 30))

	// Tab cycles forward, Shift-Tab back.
	tm.key("1")
	tm.waitFor("1: dashboard", dashboardView(100, 30))
	tm.key("Tab")
	tm.waitFor("tab: compare", compareView(100, 30))
	tm.key("Tab")
	tm.waitFor("tab: detail", detailView(100, 30, "slow-cpu")) // selected in the stream view
	tm.key("Tab")
	tm.waitFor("tab: stream", streamView(100, 30))
	tm.key("Tab")
	tm.waitFor("tab wraps to dashboard", dashboardView(100, 30))
	tm.key("BTab")
	tm.waitFor("shift-tab wraps to stream", streamView(100, 30))
	tm.key("1")
	tm.waitFor("1: dashboard again", dashboardView(100, 30))

	// 3. Resize to 80×24: every view again, within the new size.
	tm.tmux("resize-window", "-t", tm.pane, "-x", "80", "-y", "24")
	tm.settling = true
	// By now the three fault-free endpoints have measured TTFTs (flaky-cloud may be backing off).
	tm.waitFor("dashboard 80x24", dashboardView(80, 24), showsMatches(reCardTTFT, 3))
	tm.key("2")
	tm.waitFor("compare 80x24", compareView(80, 24))
	tm.key("3")
	tm.waitFor("detail 80x24", detailView(80, 24, "slow-cpu"))
	tm.key("4")
	tm.waitFor("stream 80x24", streamView(80, 24), shows("race #"), shows(demoNames...))
	tm.key("?")
	tm.waitFor("help 80x24", helpView(80, 24))
	tm.key("Escape")
	tm.waitFor("esc from help 80x24", streamView(80, 24))
	tm.key("Tab")
	tm.waitFor("tab from stream to dashboard 80x24", dashboardView(80, 24))

	// 4. q quits with status 0 and gives the terminal back.
	tm.key("q")
	status := tm.waitExit()
	if status != "0" {
		tm.fail("exit status %q, want 0", status)
	}
	tm.waitFor("terminal restored", shows("tokscope exited with status 0"),
		hides(append([]string{"1 Dashboard", "? help"}, demoNames...)...))
	if alt := tm.tmux("display-message", "-p", "-t", tm.pane, "#{alternate_on}"); alt != "0" {
		tm.fail("alternate screen still on after exit: #{alternate_on} = %q", alt)
	}
	if errOut, _ := os.ReadFile(tm.stderr); len(errOut) > 0 {
		t.Logf("tokscope stderr:\n%s", errOut)
	}
}

// buildTokscope is the tokscope binary under test, race-enabled when the test is: the one
// scripts/test.sh built for every package that runs it (TOKSCOPE_TEST_BIN), else one built
// on first use for all the tests of this process (a race-enabled link takes 10-30 s on a
// loaded 2-core machine; each test used to pay it).
func buildTokscope(t *testing.T) string {
	t.Helper()
	bin, err := builtTokscope()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

var builtTokscope = sync.OnceValues(func() (string, error) {
	if bin := os.Getenv("TOKSCOPE_TEST_BIN"); bin != "" {
		return bin, checkTestBin(bin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %v", err)
	}
	root := strings.TrimSpace(string(out))
	if binDir == "" {
		return "", errors.New("no directory for the binary: TestMain did not run")
	}
	bin := filepath.Join(binDir, "tokscope")
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "tokscope")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(cmd.Args[1:], " "), err, out)
	}
	return bin, nil
})

// checkTestBin refuses a TOKSCOPE_TEST_BIN that is not a tokscope built the way the tests
// need: race-enabled when they are (go version -m reads the build settings).
func checkTestBin(bin string) error {
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		return fmt.Errorf("TOKSCOPE_TEST_BIN=%s: go version -m: %v", bin, err)
	}
	if !strings.Contains(string(out), "\tpath\ttokscope\n") {
		return fmt.Errorf("TOKSCOPE_TEST_BIN=%s is not a tokscope binary", bin)
	}
	if race := strings.Contains(string(out), "\tbuild\t-race=true\n"); race != raceBuild {
		return fmt.Errorf("TOKSCOPE_TEST_BIN=%s: race-enabled %v, the tests %v", bin, race, raceBuild)
	}
	return nil
}

// binDir holds the binary built on first use; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tokscope-e2e")
	if err != nil {
		panic(err)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// tmuxTerm is one tokscope running in a private tmux server.
type tmuxTerm struct {
	t        *testing.T
	tmuxPath string
	sock     string // the server's socket: -S, never the user's default server
	env      []string
	pane     string // pane id, e.g. %0
	status   string // the shell writes tokscope's exit status here
	stderr   string // tokscope's stderr (race reports, panics)
	last     string // the latest capture, dumped on failure
	quitting bool   // q was sent: an exit is expected
	settling bool   // starting, or just resized: until tokscope paints, tmux shows another frame
	shots    *screens
}

// startTmux starts a server with its own socket and a detached w×h session running
// `tokscope --demo` under a shell that records the exit status and then stays.
func startTmux(t *testing.T, tmuxPath, bin string, w, h int) *tmuxTerm {
	t.Helper()
	return startTmuxScript(t, tmuxPath, w, h, `TERM=xterm-256color "$1" --demo 2>"$3"; s=$?; echo "$s" >"$2"; `+
		`echo "tokscope exited with status $s"; exec sleep 300`, bin)
}

// startTmuxScript starts a server with its own socket and a detached w×h session running
// script under sh, with $1 = bin, $2 = the status file (the script writes tokscope's exit
// status there), $3 = the stderr file, then args.
func startTmuxScript(t *testing.T, tmuxPath string, w, h int, script, bin string, args ...string) *tmuxTerm {
	t.Helper()
	// The socket path must stay short (sun_path is ~100 bytes): not under t.TempDir().
	sockDir, err := os.MkdirTemp("", "tokscope-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	dir := t.TempDir()
	tm := &tmuxTerm{
		t:        t,
		tmuxPath: tmuxPath,
		sock:     filepath.Join(sockDir, "sock"),
		status:   filepath.Join(dir, "status"),
		stderr:   filepath.Join(dir, "stderr"),
		shots:    newScreens(t),
		settling: true,
	}
	for _, kv := range os.Environ() {
		// CI makes termenv assume no terminal (Ascii profile): the pane is a real terminal, so
		// tokscope runs as it would in a user's.
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") && !strings.HasPrefix(kv, "CI=") {
			tm.env = append(tm.env, kv)
		}
	}
	t.Cleanup(func() {
		// kill-server hangs up the pane: tokscope (if still up) and the shell end with it.
		if _, err := tm.run("kill-server"); err != nil && !errors.Is(err, errNoServer) {
			t.Logf("tmux kill-server: %v", err)
		}
	})

	// Run directly by tmux (several arguments: no shell parsing of paths).
	pane, err := tm.run(append([]string{"-f", "/dev/null", "new-session", "-d", "-P", "-F", "#{pane_id}",
		"-s", "tokscope-e2e", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h),
		"sh", "-c", script, "sh", bin, tm.status, tm.stderr}, args...)...)
	if err != nil {
		t.Fatalf("tmux new-session: %v", err)
	}
	tm.pane = pane
	// Sizes are the test's to choose, never a client's.
	tm.tmux("set-option", "-g", "window-size", "manual")
	return tm
}

var errNoServer = errors.New("no tmux server")

// run runs one tmux command on the private server and returns its trimmed stdout.
func (tm *tmuxTerm) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), tmuxTimeout)
	defer cancel()
	// -u: UTF-8 output whatever the locale, so the glyphs come back as they are.
	cmd := exec.CommandContext(ctx, tm.tmuxPath, append([]string{"-u", "-S", tm.sock}, args...)...)
	cmd.Env = tm.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "no server running") || strings.Contains(msg, "error connecting") {
			return "", fmt.Errorf("%w: %s", errNoServer, msg)
		}
		return "", fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, msg)
	}
	return strings.TrimRight(stdout.String(), "\n"), nil
}

// tmux runs a command that must succeed.
func (tm *tmuxTerm) tmux(args ...string) string {
	tm.t.Helper()
	out, err := tm.run(args...)
	if err != nil {
		tm.fail("%v", err)
	}
	return out
}

// key sends one key. One key per send-keys: bubbletea reads a burst as a single key.
func (tm *tmuxTerm) key(k string) {
	tm.t.Helper()
	tm.tmux("send-keys", "-t", tm.pane, k)
}

// typeText types s one character at a time, literally.
func (tm *tmuxTerm) typeText(s string) {
	tm.t.Helper()
	for _, r := range s {
		tm.tmux("send-keys", "-t", tm.pane, "-l", string(r))
	}
}

func (tm *tmuxTerm) capture() string {
	tm.t.Helper()
	return tm.tmux("capture-pane", "-p", "-t", tm.pane)
}

// screenCheck returns nil when a screen shows what it should, else what is wrong.
type screenCheck func(screen string) error

// waitFor polls the screen until every check passes, for at most stepTimeout. A tokscope
// that exits early fails at once, with its stderr.
func (tm *tmuxTerm) waitFor(step string, checks ...screenCheck) string {
	tm.t.Helper()
	began := time.Now()
	deadline := began.Add(stepTimeout)
	logged := false
	for {
		screen := tm.capture()
		tm.last = screen
		var failed error
		for _, c := range checks {
			if err := c(screen); err != nil {
				failed = err
				break
			}
		}
		if failed == nil {
			tm.t.Logf("%-40s %5dms", step, time.Since(began).Milliseconds())
			tm.shots.save(tm.t, step, screen)
			tm.settling = false
			return screen
		}
		if !tm.quitting && !tm.settling && !logged && !strings.HasPrefix(screen, "tokscope") {
			// Not a failure while it is transient, but worth seeing in a log: it means the
			// terminal scrolled (a row wider or a frame taller than the terminal).
			logged = true
			tm.t.Logf("%s: transient screen without the header row:\n%s", step, numberedRows(screen))
		}
		if !tm.quitting {
			if status, err := os.ReadFile(tm.status); err == nil {
				tm.fail("%s: tokscope exited early with status %s", step, strings.TrimSpace(string(status)))
			}
		}
		if time.Now().After(deadline) {
			tm.shots.save(tm.t, step+" FAILED", screen)
			tm.fail("%s: not shown within %v: %v", step, stepTimeout, failed)
		}
		time.Sleep(pollEvery)
	}
}

// waitExit marks the quit as expected and waits for the exit status file.
func (tm *tmuxTerm) waitExit() string {
	tm.t.Helper()
	tm.quitting = true
	deadline := time.Now().Add(stepTimeout)
	for {
		b, err := os.ReadFile(tm.status)
		if s := strings.TrimSpace(string(b)); err == nil && s != "" {
			return s
		}
		if time.Now().After(deadline) {
			tm.last = tm.capture()
			tm.fail("tokscope did not exit within %v of q", stepTimeout)
		}
		time.Sleep(pollEvery)
	}
}

// fail dumps the last screen and tokscope's stderr, then stops the test.
func (tm *tmuxTerm) fail(format string, args ...any) {
	tm.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, format, args...)
	if tm.last != "" {
		b.WriteString("\n--- last screen ---\n" + numberedRows(tm.last))
	}
	if errOut, err := os.ReadFile(tm.stderr); err == nil && len(errOut) > 0 {
		b.WriteString("\n--- tokscope stderr ---\n" + string(errOut))
	}
	tm.t.Fatal(b.String())
}

// numbered prefixes each line with its row and ends it with '|', so widths and trailing
// blanks are visible in a CI log.
func numberedRows(screen string) string {
	var b strings.Builder
	for i, l := range strings.Split(screen, "\n") {
		fmt.Fprintf(&b, "%2d %s|\n", i+1, l)
	}
	return b.String()
}

// --- checks ---

func shows(subs ...string) screenCheck {
	return func(s string) error {
		for _, sub := range subs {
			if !strings.Contains(s, sub) {
				return fmt.Errorf("%q missing", sub)
			}
		}
		return nil
	}
}

func hides(subs ...string) screenCheck {
	return func(s string) error {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return fmt.Errorf("%q still shown", sub)
			}
		}
		return nil
	}
}

func showsAnyOf(chars string) screenCheck {
	return func(s string) error {
		if !strings.ContainsAny(s, chars) {
			return fmt.Errorf("none of %q shown", chars)
		}
		return nil
	}
}

// paneMatches wants a match of re in the pane of a race titled name: the columns from its title
// to the next pane's (panes sit side by side), on the rows below the title.
func paneMatches(name string, re *regexp.Regexp) screenCheck {
	return func(s string) error {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			at := strings.Index(l, name)
			if at < 0 {
				continue
			}
			rs := []rune(l)
			from := utf8.RuneCountInString(l[:at])
			to := len(rs)
			for j := from + len(name); j < len(rs); j++ {
				if strings.ContainsRune(boxSide+boxTopLeft, rs[j]) {
					to = j
					break
				}
			}
			var pane strings.Builder
			for _, below := range lines[i+1:] {
				br := []rune(below)
				pane.WriteString(string(br[min(from, len(br)):min(to, len(br))]) + "\n")
			}
			if re.MatchString(pane.String()) {
				return nil
			}
			return fmt.Errorf("the %s pane (columns %d–%d) has no match of /%s/", name, from, to, re)
		}
		return fmt.Errorf("no pane titled %s", name)
	}
}

// matches wants at least n matches of re.
func showsMatches(re *regexp.Regexp, n int) screenCheck {
	return func(s string) error {
		if got := len(re.FindAllString(s, -1)); got < n {
			return fmt.Errorf("%d match(es) of /%s/, want at least %d", got, re, n)
		}
		return nil
	}
}

// Box corners and sides of the borders lipgloss may draw (rounded, thick, double, normal).
const (
	boxTopLeft, boxTopRight       = "╭┏╔┌", "╮┓╗┐"
	boxSide                       = "│┃║"
	boxBottomLeft, boxBottomRight = "╰┗╚└", "╯┛╝┘"
)

// framed checks that the UI fills a w×h terminal exactly: no line wider than w, the header
// on the first row (a view taller than the terminal pushes it off), the footer on the last,
// and every box closed on the right (a wider one is cut).
func fillsTerminal(w, h int) screenCheck {
	return func(s string) error {
		lines := strings.Split(s, "\n")
		if len(lines) != h {
			return fmt.Errorf("%d rows, want %d", len(lines), h)
		}
		for i, l := range lines {
			// Every glyph tokscope draws is one cell wide.
			if n := utf8.RuneCountInString(l); n > w {
				return fmt.Errorf("row %d is %d cells wide, terminal has %d", i+1, n, w)
			}
		}
		if !strings.HasPrefix(lines[0], "tokscope") || !strings.Contains(lines[0], "1 Dashboard") {
			return errors.New("header not on the first row")
		}
		if strings.TrimSpace(lines[h-1]) == "" {
			return errors.New("footer not on the last row")
		}
		for i, l := range lines {
			l = strings.TrimRight(l, " ")
			if l == "" {
				continue
			}
			first, _ := utf8.DecodeRuneInString(l)
			last, _ := utf8.DecodeLastRuneInString(l)
			var want string
			switch {
			case strings.ContainsRune(boxTopLeft, first):
				want = boxTopRight
			case strings.ContainsRune(boxSide, first):
				want = boxSide
			case strings.ContainsRune(boxBottomLeft, first):
				want = boxBottomRight
			default:
				continue
			}
			if !strings.ContainsRune(want, last) {
				return fmt.Errorf("row %d: box not closed on the right (cut?): %q", i+1, l)
			}
		}
		return nil
	}
}

func allOf(checks ...screenCheck) screenCheck {
	return func(s string) error {
		for _, c := range checks {
			if err := c(s); err != nil {
				return err
			}
		}
		return nil
	}
}

func dashboardView(w, h int) screenCheck {
	return allOf(fillsTerminal(w, h), shows(demoNames...), shows("decode", "ttft", "agg", "errors"),
		hides("prompt> ", "TTFT breakdown", "endpoint "))
}

func compareView(w, h int) screenCheck {
	return allOf(fillsTerminal(w, h), shows("endpoint", "ttft p50", "dec p50", "decode tok/s p50", "TTFT p50 (ms)"),
		showsMatches(reCompareRow, len(demoNames)), showsMatches(reCompareData, 1), hides("prompt> ", "TTFT breakdown"))
}

func detailView(w, h int, name string) screenCheck {
	return allOf(fillsTerminal(w, h), shows(name+" · ", "TTFT ms", "decode tok/s", "TTFT breakdown, recent requests (ms)", "ITL ms"),
		hides("prompt> "))
}

func streamView(w, h int) screenCheck {
	return allOf(fillsTerminal(w, h), shows("prompt> "), hides("TTFT breakdown", "ttft p50"))
}

func helpView(w, h int) screenCheck {
	return allOf(fillsTerminal(w, h), shows("keys", "next view", "race all", "quit", "In the stream view"),
		hides("prompt> "))
}
