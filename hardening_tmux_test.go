package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"tokscope/cli/clitest"
)

// Every way out of the TUI — SIGINT and SIGTERM from outside, Ctrl-C and q at the keyboard —
// leaves the terminal as it found it (cooked mode with echo, main screen), prints nothing
// stray, exits 0, and leaves a record file of whole lines. The binary runs in a detached
// session of a private tmux server (its own socket: a user's tmux is never touched).
func TestTUIExitsUnderTmux(t *testing.T) {
	t.Parallel()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed (CI installs it)")
	}
	url := clitest.BusySim(t)
	for _, how := range []string{"SIGINT", "SIGTERM", "ctrl+c", "q"} {
		t.Run(how, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "tsh") // short: a socket path is limited to ~100 bytes
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			f := func(name string) string { return filepath.Join(dir, name) }
			sock := f("sock")
			tm := func(args ...string) string {
				t.Helper()
				out, err := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
				if err != nil {
					t.Fatalf("tmux %v: %v: %s", args, err, out)
				}
				return strings.TrimSpace(string(out))
			}
			// The inner shell records its pid and execs tokscope; the outer one then notes the
			// exit status and the terminal's modes, and stays so that the pane can be read.
			script := fmt.Sprintf(`sh -c 'echo $$ > %[1]s; exec %[2]s --record %[3]s -i 0s -n 2 -u %[4]s -m m' 2> %[5]s
echo "EXIT=$?" > %[6]s.tmp
stty -a >> %[6]s.tmp
mv %[6]s.tmp %[6]s
exec sleep 600
`, f("pid"), binary(t), f("rec.jsonl"), url, f("stderr"), f("after"))
			if err := os.WriteFile(f("run.sh"), []byte(script), 0o700); err != nil {
				t.Fatal(err)
			}
			tm("new-session", "-d", "-s", "hard", "-x", "100", "-y", "30", "sh "+f("run.sh"))
			t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })

			waitForLines(t, f("rec.jsonl"), 5)
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(tm("capture-pane", "-p", "-t", "hard"), "Dashboard") {
				if time.Now().After(deadline) {
					t.Fatalf("the dashboard never showed:\n%s", tm("capture-pane", "-p", "-t", "hard"))
				}
				time.Sleep(50 * time.Millisecond)
			}
			if tm("display-message", "-p", "-t", "hard", "#{alternate_on}") != "1" {
				t.Error("the TUI is not on the alternate screen")
			}

			pidText, err := os.ReadFile(f("pid"))
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
			if err != nil {
				t.Fatal(err)
			}
			switch how {
			case "SIGINT":
				err = syscall.Kill(pid, syscall.SIGINT) // the process this test started, by its id
			case "SIGTERM":
				err = syscall.Kill(pid, syscall.SIGTERM)
			case "ctrl+c":
				tm("send-keys", "-t", "hard", "C-c")
			case "q":
				tm("send-keys", "-t", "hard", "q")
			}
			if err != nil {
				t.Fatal(err)
			}

			var after []byte
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if after, err = os.ReadFile(f("after")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					screen := tm("capture-pane", "-p", "-t", "hard")
					_ = syscall.Kill(pid, syscall.SIGQUIT) // Go prints every goroutine's stack, then exits
					time.Sleep(2 * time.Second)
					stacks, _ := os.ReadFile(f("stderr"))
					t.Fatalf("tokscope did not exit within 30 s of %s:\n%s\n%s", how, screen, stacks)
				}
			}
			stderr, _ := os.ReadFile(f("stderr"))
			if !bytes.HasPrefix(after, []byte("EXIT=0\n")) {
				t.Errorf("after %s: %s; stderr %q", how, bytes.SplitN(after, []byte("\n"), 2)[0], stderr)
			}
			if len(stderr) != 0 {
				t.Errorf("after %s, stderr: %q", how, stderr)
			}
			modes := strings.FieldsFunc(string(after), func(r rune) bool { return r == ' ' || r == '\n' || r == ';' })
			for _, want := range []string{"icanon", "echo", "isig", "icrnl", "opost"} {
				if !slices.Contains(modes, want) || slices.Contains(modes, "-"+want) {
					t.Errorf("after %s the terminal is not restored: %s missing (stty -a: %s)", how, want, after)
				}
			}
			if alt := tm("display-message", "-p", "-t", "hard", "#{alternate_on}"); alt != "0" {
				t.Errorf("after %s the alternate screen is still on", how)
			}
			if screen := tm("capture-pane", "-p", "-t", "hard"); strings.Contains(screen, "Dashboard") || strings.Contains(screen, "panic") {
				t.Errorf("after %s the screen shows:\n%s", how, screen)
			}
			clitest.WholeRecords(t, f("rec.jsonl"))
		})
	}
}
