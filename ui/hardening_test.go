package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"tokscope/config"
	"tokscope/probe"
	"tokscope/sample"
	"tokscope/stats"
)

// A panic inside the UI (here: the clock, called from Update) does not crash the process:
// Run leaves the alternate screen, then returns an error wrapping tea.ErrProgramPanic for
// main to print after the terminal is restored. Run in a child process, so that its screen
// output is captured rather than written into the test log.
func TestRunReturnsPanicAsError(t *testing.T) {
	if os.Getenv("TOKSCOPE_UI_PANIC_CHILD") == "1" {
		var calls atomic.Int64
		now := func() time.Time {
			if calls.Add(1) > 3 { // New's own calls pass; the first event's handling panics
				panic("clock exploded")
			}
			return t0
		}
		events := make(chan sample.Event, 1)
		events <- &sample.Status{Endpoint: 0, State: sample.StateIdle}
		err := Run(context.Background(), nil, testEndpoints(1), events, Options{Now: now})
		fmt.Fprintf(os.Stderr, "RUN RETURNED: %v\n", err)
		if errors.Is(err, tea.ErrProgramPanic) {
			os.Exit(0)
		}
		os.Exit(3)
	}
	// bubbletea needs a terminal: script(1) gives the child a pseudo-terminal and copies
	// everything the child writes to it (stdout and stderr alike) to our stdout.
	scriptPath, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) not installed (util-linux)")
	}
	cmd := exec.Command(scriptPath, "-qec", fmt.Sprintf("'%s' -test.run='^TestRunReturnsPanicAsError$'", os.Args[0]), "/dev/null")
	// GORACE: on a panic bubbletea shuts down with kill=true, which closes the terminal
	// reader without waiting for its goroutine — a data race inside cancelreader that a -race
	// child reports (exit 66) about one run in five. It is bubbletea's, on a path that ends
	// the process anyway; the report stays in the output, it just does not fail the child.
	cmd.Env = append(os.Environ(), "TOKSCOPE_UI_PANIC_CHILD=1", "TERM=dumb", "GORACE=exitcode=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("child: %v\nterminal: %q\nstderr: %s", err, stdout.String(), stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("Run did not return after a panic; stderr: %s", stderr.String())
	}
	if !bytes.Contains(stdout.Bytes(), []byte("RUN RETURNED: program was killed: program experienced a panic")) {
		t.Errorf("terminal: %q", stdout.String())
	}
	out := stdout.Bytes()
	enter, leave := bytes.Index(out, []byte("\x1b[?1049h")), bytes.LastIndex(out, []byte("\x1b[?1049l"))
	if enter < 0 || leave < enter {
		t.Errorf("the alternate screen was not left (enter at %d, leave at %d)", enter, leave)
	}
	if panicAt := bytes.Index(out, []byte("clock exploded")); panicAt >= 0 && panicAt < leave {
		t.Errorf("the panic was printed on the alternate screen, before the terminal was restored")
	}
}

// An endpoint whose certificate is not verified (insecure_skip_verify) says so on its card,
// on a row of its own when the card has one to spare, else next to its status; no other card
// does. Goldens at 80×24 and 120×40 (`go test ./ui -run TestTLSUnverifiedMarker -update`).
func TestTLSUnverifiedMarker(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 14}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			eps := testEndpoints(4)
			eps[1].InsecureSkipVerify = true
			m := New(newFakeControls(), eps, make(chan sample.Event), Options{Now: pinned, Prompt: "Why is the sky blue?"})
			m = update(t, m, resize(size[0], size[1]))
			m = update(t, m, eventsMsg{events: history(eps, 30)})
			m = update(t, m, redrawMsg{})
			view := m.View()
			if n := strings.Count(view, "⚠ TLS"); n != 1 {
				t.Errorf("%d TLS markers, want 1:\n%s", n, view)
			}
			// The marker is in the second card (top right), not in the first.
			for _, line := range strings.Split(view, "\n") {
				if i := strings.Index(line, "⚠ TLS"); i >= 0 && ansi.StringWidth(line[:i]) < size[0]/2 {
					t.Errorf("marker in the left column: %q", line)
				}
			}
			golden.RequireEqual(t, []byte(view))
		})
	}
}

// A card of the minimum size has no spare row: the marker joins the status on the title.
func TestTLSUnverifiedMarkerMinimumCard(t *testing.T) {
	st := DefaultStyles()
	p := newPanel(&st)
	p.SetSize(cardMinWidth, cardMinHeight)
	es := stats.EndpointStats{Name: "self-signed"}
	p.Update(&es, &endpointState{concurrency: 1, tlsUnverified: true}, 1, t0)
	lines := strings.Split(p.content, "\n")
	if len(lines) != cardMinHeight-2 || !strings.Contains(lines[0], "⚠ TLS") || !strings.Contains(lines[0], "self-signed") {
		t.Errorf("minimum card:\n%s", p.content)
	}
}

// TestScreenNeverShowsKeys runs a real Runner, with a key and a credential header from the
// environment, against servers that echo both back (a 401 body, a 500 text body, an error
// event inside a stream) next to a healthy one; races a prompt on all of them from the
// stream view; then renders every view — dashboard, compare, stream, each endpoint's
// detail — and greps the screen for the key, the header and their fragments.
func TestScreenNeverShowsKeys(t *testing.T) {
	const (
		keyEnv = "TOKSCOPE_UI_HARDENING_KEY"
		key    = "sk-ui-leak-7e6d5c4b3a29180f"
		hdrEnv = "TOKSCOPE_UI_HARDENING_HDR"
		hdr    = "hdr-ui-leak-1f2e3d4c5b"
	)
	t.Setenv(keyEnv, key)
	t.Setenv(hdrEnv, hdr)
	echo := func(r *http.Request) string {
		return fmt.Sprintf("%s %s", r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"))
	}
	handlers := []http.HandlerFunc{
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","code":"invalid_api_key"}}`, echo(r)+" is incorrect")
		},
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, echo(r)+": proxy failure")
		},
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, `data: {"choices":[{"delta":{"content":" hi"}}]}`+"\n\n")
			fmt.Fprintf(w, "data: {\"error\":{\"message\":%q}}\n\n", echo(r)+" rejected")
		},
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, `data: {"choices":[{"delta":{"content":" fine"}}]}`+"\n\n"+
				`data: {"choices":[{"delta":{},"finish_reason":"stop"}]}`+"\n\n"+"data: [DONE]\n\n")
		},
	}
	var eps []config.Endpoint
	for i, h := range handlers {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		eps = append(eps, config.Endpoint{Name: fmt.Sprintf("echo-%d", i), BaseURL: srv.URL + "/v1", Model: "m",
			Prompt: "hi", MaxTokens: 8, Concurrency: 1, Interval: 10 * time.Millisecond, Timeout: 10 * time.Second,
			Stall: 10 * time.Second, APIKeyEnv: keyEnv, Headers: map[string]string{"X-Api-Key": "${" + hdrEnv + "}"}})
	}

	r := probe.NewRunner(eps, probe.Options{})
	m := New(r, eps, r.Events(), Options{Prompt: "say hi"})
	m = update(t, m, resize(120, 40))
	m = press(t, m, "4", "ctrl+r") // race the prompt on every endpoint
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	runDone := make(chan error, 1)
	go func() { runDone <- r.Run(ctx) }()
	background, raced := map[int]int{}, map[int]bool{}
	var messages []string
	for ev := range r.Events() {
		m = update(t, m, eventsMsg{events: []sample.Event{ev}})
		if d, ok := ev.(*sample.Done); ok {
			messages = append(messages, d.Sample.ErrorMessage)
			if d.Stream != 0 {
				raced[int(d.Endpoint)] = true
			} else {
				background[int(d.Endpoint)]++
			}
		}
		done := len(raced) == len(eps)
		for i := range eps {
			done = done && background[i] >= 2
		}
		if done {
			cancel()
		}
	}
	if err := <-runDone; err != nil {
		t.Fatal(err)
	}
	if len(raced) != len(eps) {
		t.Fatalf("race finished on %d of %d endpoints, background %v", len(raced), len(eps), background)
	}
	redacted := 0
	for _, msg := range messages {
		redacted += strings.Count(msg, "[redacted]")
	}
	if redacted == 0 {
		t.Fatal("no message held an echoed (redacted) credential: the test proves nothing")
	}

	screens := map[string]string{}
	m = update(t, m, redrawMsg{})
	screens["stream"] = m.View()
	m = press(t, m, "1")
	m = update(t, m, redrawMsg{})
	screens["dashboard"] = m.View()
	m = press(t, m, "2")
	m = update(t, m, redrawMsg{})
	screens["compare"] = m.View()
	for i := range eps {
		m = press(t, m, "1")
		for range i {
			m = press(t, m, "right")
		}
		m = press(t, m, "enter")
		m = update(t, m, redrawMsg{})
		screens[fmt.Sprintf("detail %d", i)] = m.View()
	}
	shown := 0
	for name, screen := range screens {
		shown += strings.Count(screen, "[redacted]")
		for _, needle := range []string{key, key[3:15], key[len(key)-12:], hdr, hdr[3:]} {
			if strings.Contains(screen, needle) {
				t.Errorf("the %s view shows %q:\n%s", name, needle, screen)
			}
		}
	}
	if shown == 0 {
		t.Errorf("no view shows an echoed, redacted message: the grep proves little")
	}
}
