package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// screensEnv names a directory where every asserted screen is kept as a text file
// (NN-step.txt), so a reviewer can read what the terminal showed without running tmux.
const screensEnv = "TOKSCOPE_SCREENS"

// screens saves captures when screensEnv is set; a nil *screens saves nothing.
type screens struct {
	dir string
	n   int
}

func newScreens(t *testing.T) *screens {
	dir := os.Getenv(screensEnv)
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("%s=%s: %v", screensEnv, dir, err)
	}
	return &screens{dir: dir}
}

// save writes one screen; a failure to write is logged, never fatal (the files are a courtesy).
func (s *screens) save(t *testing.T, step, screen string) {
	if s == nil {
		return
	}
	s.n++
	name := fmt.Sprintf("%02d-%s.txt", s.n, slug(step))
	if err := os.WriteFile(filepath.Join(s.dir, name), []byte(screen+"\n"), 0o644); err != nil {
		t.Logf("%s: %v", screensEnv, err)
	}
}

// slug turns a step description into a file-name fragment.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
