package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"
)

// TestWatchFleetInTmux: `tokscope watch` in a real terminal over two loopback servers — a
// vLLM whose counters move (the watch fixtures) and a llama.cpp (the b10470 capture with its
// slots) — and a dead port: the fleet table with figures, estimates marked and a STALE
// badge; the sort key; a filter; the drill-down with the slots; q restores the terminal.
// Neither server ever gets anything but a GET.
func TestWatchFleetInTmux(t *testing.T) {
	tmuxPath := needTmux(t)
	bin := buildTokscope(t)
	var mu sync.Mutex
	var requests []string
	logged := func(h http.HandlerFunc) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			requests = append(requests, r.Method+" "+r.URL.Path)
			mu.Unlock()
			h(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	fixtures := filepath.Join("..", "watch", "testdata")
	var n atomic.Int32
	vllm := logged(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		file := "vllm-hist-1.txt" // the first scrape, then the counters and buckets moved
		if n.Add(1) > 1 {
			file = "vllm-hist-2.txt"
		}
		serveFile(t, w, filepath.Join(fixtures, file))
	})
	llama := logged(func(w http.ResponseWriter, r *http.Request) {
		dir := filepath.Join(fixtures, "llamacpp-b10470-watch")
		switch r.URL.Path {
		case "/metrics":
			serveFile(t, w, filepath.Join(dir, "metrics-busy.txt"))
		case "/slots":
			serveFile(t, w, filepath.Join(dir, "slots-busy.json"))
		case "/props":
			serveFile(t, w, filepath.Join(dir, "props-excerpt.json"))
		default:
			http.NotFound(w, r)
		}
	})
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()

	tm := startTmuxScript(t, tmuxPath, 120, 30, `TERM=xterm-256color "$1" watch --window 60s --url "$4" --url "$5" --url "$6" 2>"$3"; s=$?; `+
		`echo "$s" >"$2"; echo "tokscope exited with status $s"; exec sleep 300`, bin, vllm.URL, llama.URL, deadURL)
	vllmHost, llamaHost, deadHost := strings.TrimPrefix(vllm.URL, "http://"), strings.TrimPrefix(llama.URL, "http://"), strings.TrimPrefix(deadURL, "http://")

	tm.waitFor("fleet table", fitsWatch(120, 30), shows("SERVER", "GEN t/s", vllmHost, llamaHost, deadHost,
		// The window (60 s) holds the move between the two fixtures: TTFT p50 and p99 as the
		// watch package's test works them out.
		"~100ms", "~247ms", "llamacpp b10470-34af94cd9", "STALE: connection refused", "~ estimated within"))
	for _, header := range []string{"SERVER↓", "KIND↓", "RUN↓", "WAIT↓"} { // one key, one screen: keys sent at once arrive as one
		tm.key("s")
		tm.waitFor("sorted by "+header, fitsWatch(120, 30), shows(header))
	}
	tm.key("s")
	tm.waitFor("sorted by gen", fitsWatch(120, 30), shows("GEN t/s↓"), rowOrder(vllmHost, llamaHost, deadHost))
	tm.key("/")
	tm.waitFor("filter typing", fitsWatch(120, 30), shows("filter: ▏"))
	port := strings.Split(llamaHost, ":")[1]
	tm.typeText(port)
	tm.waitFor("filter typed", fitsWatch(120, 30), shows("filter: "+port+"▏"))
	tm.key("Enter")
	tm.waitFor("filtered to llama.cpp", fitsWatch(120, 30), shows(llamaHost, "filter: "), hides(vllmHost, deadHost))
	tm.key("Enter")
	tm.waitFor("drill-down", fitsWatch(120, 30), shows("SLOT  TASK  STATE", "processing", "generation tok/s", "requests waiting"))
	tm.key("Escape")
	tm.waitFor("back to the table", fitsWatch(120, 30), shows("SERVER", llamaHost))
	tm.key("q")
	if status := tm.waitExit(); status != "0" {
		tm.fail("exit status %s after q", status)
	}
	if alt := tm.tmux("display-message", "-p", "-t", tm.pane, "#{alternate_on}"); alt != "0" {
		tm.fail("alternate screen still on after exit")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range requests {
		if !strings.HasPrefix(r, "GET ") {
			t.Errorf("watch sent %q", r)
		}
	}
}

func serveFile(t *testing.T, w http.ResponseWriter, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
	}
	w.Write(b)
}

// fitsWatch: the frame has the terminal's height, no row is wider, the title on the first row
// and the keys on the last.
func fitsWatch(w, h int) screenCheck {
	return func(s string) error {
		lines := strings.Split(s, "\n")
		if len(lines) != h {
			return fmt.Errorf("%d rows, want %d", len(lines), h)
		}
		for i, l := range lines {
			if n := utf8.RuneCountInString(l); n > w {
				return fmt.Errorf("row %d is %d cells wide", i+1, n)
			}
		}
		if !strings.HasPrefix(lines[0], "tokscope watch") {
			return errors.New("title not on the first row")
		}
		if !strings.Contains(lines[h-1], "q quit") {
			return errors.New("keys not on the last row")
		}
		return nil
	}
}

// rowOrder: the servers' rows come in this order.
func rowOrder(servers ...string) screenCheck {
	return func(s string) error {
		last := -1
		for _, srv := range servers {
			i := strings.Index(s, srv)
			if i < 0 || i < last {
				return fmt.Errorf("%s not after the previous row", srv)
			}
			last = i
		}
		return nil
	}
}
