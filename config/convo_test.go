package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConvoKeys: turns, think_time and shared_prefix are decoded at every level, the
// endpoint's winning, the flags' level over both; bad values name file:line:col.
func TestConvoKeys(t *testing.T) {
	src := `defaults:
  turns: 3
  think_time: 1s-2s
  shared_prefix: 64
endpoints:
  - base_url: http://127.0.0.1:1/v1
    model: a
  - base_url: http://127.0.0.1:2/v1
    model: b
    turns: 5
    think_time: 250ms
`
	c, err := Parse("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Endpoints[0], c.Endpoints[1]
	if a.Turns != 3 || a.ThinkTime != (ThinkTime{time.Second, 2 * time.Second}) || a.SharedPrefix != 64 {
		t.Errorf("a: turns %d think %v prefix %d", a.Turns, a.ThinkTime, a.SharedPrefix)
	}
	if b.Turns != 5 || b.ThinkTime != (ThinkTime{250 * time.Millisecond, 250 * time.Millisecond}) || b.SharedPrefix != 64 {
		t.Errorf("b: turns %d think %v prefix %d", b.Turns, b.ThinkTime, b.SharedPrefix)
	}
	two := 2
	c.Apply(Overrides{Turns: &two})
	if c.Endpoints[0].Turns != 2 || c.Endpoints[1].Turns != 2 {
		t.Errorf("--turns 2 did not win: %d %d", c.Endpoints[0].Turns, c.Endpoints[1].Turns)
	}
	for _, tt := range []struct{ key, value, want string }{
		{"turns", "0", "c.yaml:3:12: "},
		{"turns", "x", "c.yaml:3:12: "},
		{"think_time", "2s-1s", "c.yaml:3:17: "},
		{"think_time", "soon", "c.yaml:3:17: "},
		{"shared_prefix", "-1", "c.yaml:3:20: "},
	} {
		bad := "endpoints:\n  - base_url: http://127.0.0.1:1/v1\n    " + tt.key + ": " + tt.value + "\n"
		_, err := Parse("c.yaml", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("%s: %s: %v, want %q", tt.key, tt.value, err, tt.want)
		}
	}
}

func TestParseThinkTime(t *testing.T) {
	for in, want := range map[string]ThinkTime{"2s": {2 * time.Second, 2 * time.Second}, "500ms-3s": {500 * time.Millisecond, 3 * time.Second}, "0": {}} {
		got, err := ParseThinkTime(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "-1s", "3s-1s", "1s-", "x"} {
		if _, err := ParseThinkTime(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// TestTopLevelTrace: trace: is a top-level key, its path relative to the config file.
func TestTopLevelTrace(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Parse(filepath.Join(dir, "c.yaml"), []byte("trace: t.jsonl\nendpoints:\n  - base_url: http://127.0.0.1:1/v1\n    model: a\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Trace != filepath.Join(dir, "t.jsonl") {
		t.Errorf("trace %q", c.Trace)
	}
	if _, err := Parse("c.yaml", []byte("defaults:\n  trace: t.jsonl\nendpoints:\n  - base_url: http://127.0.0.1:1/v1\n")); err == nil ||
		!strings.Contains(err.Error(), "c.yaml:2:3: ") {
		t.Errorf("trace in defaults: %v", err)
	}
	if _, err := Parse("c.yaml", []byte("trace: missing.jsonl\nendpoints:\n  - base_url: http://127.0.0.1:1/v1\n")); err == nil ||
		!strings.Contains(err.Error(), "c.yaml:1:8: trace: cannot read") {
		t.Errorf("a missing trace: %v", err)
	}
}

// session_start: is first or random; another value is an error at its place, a misspelt key
// a "did you mean".
func TestTopLevelSessionStart(t *testing.T) {
	ep := "endpoints:\n  - base_url: http://127.0.0.1:1/v1\n    model: a\n"
	c, err := Parse("c.yaml", []byte("session_start: random\n"+ep))
	if err != nil || c.SessionStart != SessionStartRandom {
		t.Fatalf("session_start: random read as %q (%v)", c.SessionStart, err)
	}
	if c, _ := Parse("c.yaml", []byte(ep)); c.SessionStart != "" {
		t.Errorf("no session_start read as %q", c.SessionStart)
	}
	if _, err := Parse("c.yaml", []byte("session_start: middle\n"+ep)); err == nil ||
		!strings.Contains(err.Error(), "c.yaml:1:16: session_start must be first") {
		t.Errorf("session_start: middle: %v", err)
	}
	if _, err := Parse("c.yaml", []byte("sesion_start: random\n"+ep)); err == nil || !strings.Contains(err.Error(), `did you mean "session_start"`) {
		t.Errorf("a misspelt session_start: %v", err)
	}
}
