package e2e

import (
	"bufio"
	"context"
	"image"
	"image/color"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestReportRendersInChromium writes the --report of a headless demo run (and of its
// --replay), checks that the replay's page equals the live one but for the settings, and
// renders the live page in a real headless Chromium: it loads, every chart is there, nothing
// is logged to the console, the page asks for nothing over the network (Chromium runs behind
// a recording proxy on loopback, so not even its own background requests leave the machine),
// and the screenshot shows the endpoints' colours. Set TOKSCOPE_SCREENS=dir to keep the
// screenshot.
func TestReportRendersInChromium(t *testing.T) {
	chrome, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: apt-get install -y chromium (.ci/run does)")
	}
	bin := buildTokscope(t)
	dir := t.TempDir()
	live, replay, record := filepath.Join(dir, "live.html"), filepath.Join(dir, "replay.html"), filepath.Join(dir, "run.jsonl")

	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); err != nil && code != 1 { // 1: flaky-cloud fails by design
			t.Fatalf("tokscope %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("--demo", "--no-tui", "--duration", "6s", "--max-tokens", "48", "-i", "100ms", "--timeout", "4s", "-n", "2",
		"-o", "json", "--record", record, "--report", live)
	run("--replay", record, "--no-tui", "-o", "json", "--report", replay)
	a, b := readFile(t, live), readFile(t, replay)
	// What a record does not keep: the settings, and the time spent backing off after 429s
	// (flaky-cloud's), which the summary of a replay lacks too. The servers' own metrics (the
	// simulator's /metrics, scraped beside the live run) are in the record: their section and
	// the summary cards' server lines are the live run's.
	unkept := regexp.MustCompile(`(?s)<section id="settings">.*?</section>|<li>backed off [^<]*</li>|\s*backed off [^<]*\(not latency\)`)
	if x, y := unkept.ReplaceAllString(a, ""), unkept.ReplaceAllString(b, ""); x != y {
		i := 0
		for i < len(x) && i < len(y) && x[i] == y[i] {
			i++
		}
		t.Errorf("the report of the replay differs from the live one at byte %d:\nlive:   %q\nreplay: %q", i, x[max(0, i-200):min(len(x), i+200)], y[max(0, i-200):min(len(y), i+200)])
	}
	if !strings.Contains(a, "--demo") || !strings.Contains(b, "--replay") {
		t.Error("the settings do not say how each report was made")
	}

	c := newChromium(t, chrome)
	dom := c.run("--dump-dom", "file://"+live)
	for _, want := range []string{"<h1>tokscope report</h1>", `id="ts-throughput"`, `id="dist-itl"`, `id="server-kv"`, `<section id="settings">`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM Chromium loaded lacks %s", want)
		}
	}
	// Every chart of the file is in the DOM Chromium built; a demo run draws at least the six
	// that do not depend on errors occurring.
	if n, want := strings.Count(dom, `<svg class="chart"`), strings.Count(a, `<svg class="chart"`); n != want || n < 6 {
		t.Errorf("Chromium's DOM holds %d charts, the file %d (want at least 6)", n, want)
	}
	shot := filepath.Join(dir, "report.png")
	c.run("--hide-scrollbars", "--window-size=1280,3000", "--screenshot="+shot, "file://"+live)
	img := decodePNG(t, shot)
	if w := img.Bounds().Dx(); w != 1280 {
		t.Errorf("screenshot %d px wide, want 1280", w)
	}
	// The four demo endpoints' colours (the report's palette: blue, orange, green, vermillion).
	for _, col := range []color.RGBA{{0x00, 0x72, 0xb2, 0xff}, {0xe6, 0x9f, 0x00, 0xff}, {0x00, 0x9e, 0x73, 0xff}, {0xd5, 0x5e, 0x00, 0xff}} {
		if n := countColor(img, col); n < 200 {
			t.Errorf("the screenshot has %d pixels of %v: charts not drawn?", n, col)
		}
	}
	keepScreen(t, "report.png", shot)
	c.check()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func countColor(img image.Image, want color.RGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near8(r, want.R) && near8(g, want.G) && near8(bl, want.B) {
				n++
			}
		}
	}
	return n
}

func near8(v uint32, want uint8) bool {
	d := int(v>>8) - int(want)
	return d >= -6 && d <= 6
}

// keepScreen copies a file into $TOKSCOPE_SCREENS, when set, for reviewers.
func keepScreen(t *testing.T, name, path string) {
	dir := os.Getenv(screensEnv)
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(readFile(t, path)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// chromium runs headless Chromium against a private profile, behind a proxy on loopback that
// records every request it is asked for and answers none.
type chromium struct {
	t       *testing.T
	path    string
	profile string
	proxy   net.Listener

	mu       sync.Mutex
	requests []string // "CONNECT host:443", "GET http://host/…"
	console  []string
}

// chromiumOwnHosts are the hosts Chromium itself calls at start-up whatever the flags
// (component updater, network time, account check). They reach the recording proxy, never
// the network; a request for any other host comes from the page.
var chromiumOwnHosts = []string{"update.googleapis.com", "clients1.google.com", "clients2.google.com", "accounts.google.com",
	"redirector.gvt1.com", "optimizationguide-pa.googleapis.com", "safebrowsing.googleapis.com", "content-autofill.googleapis.com"}

func newChromium(t *testing.T, path string) *chromium {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &chromium{t: t, path: path, profile: t.TempDir(), proxy: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			line, _ := bufio.NewReader(conn).ReadString('\n')
			conn.Close()
			c.mu.Lock()
			c.requests = append(c.requests, strings.TrimSpace(line))
			c.mu.Unlock()
		}
	}()
	return c
}

// run runs Chromium once with args after the common flags and returns its stdout; console
// messages in its log are kept for check.
func (c *chromium) run(args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir=" + c.profile, "--proxy-server=" + c.proxy.Addr().String(), "--proxy-bypass-list=<-loopback>",
		"--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, c.path, append(flags, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helper processes go with it
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		c.t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, tail(stderr.String(), 3000))
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			c.console = append(c.console, l)
		}
	}
	return string(out)
}

// check fails the test on any console message (the page has no script: there should be
// none) and on any request for a host Chromium does not call by itself.
func (c *chromium) check() {
	c.t.Helper()
	for _, l := range c.console {
		c.t.Errorf("console: %s", l)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.requests {
		own := false
		for _, h := range chromiumOwnHosts {
			own = own || strings.Contains(r, " "+h+":") || strings.Contains(r, "://"+h+"/")
		}
		if !own {
			c.t.Errorf("the page asked for %q", r)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
