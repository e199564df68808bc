package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWatchSection(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "fleet.json"), []byte(`[{"targets": ["a:1"]}]`), 0o600)
	src := "watch:\n  targets: [10.0.0.1:8000, \"http://gpu-2:8000/v1\"]\n  targets_file: fleet.json\n  interval: 2s\n  window: 30s\n"
	cfg, err := Parse(filepath.Join(dir, "c.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Watch
	if len(cfg.Endpoints) != 0 || w == nil || len(w.Targets) != 2 || w.Targets[1] != "http://gpu-2:8000/v1" ||
		w.TargetsFile != filepath.Join(dir, "fleet.json") || w.Interval != 2*time.Second || w.Window != 30*time.Second {
		t.Errorf("watch: %+v (endpoints %d)", w, len(cfg.Endpoints))
	}
	for src, want := range map[string]string{
		"watch:\n  targest: [a:1]\n":          `c.yaml:2:3: unknown key "targest"; did you mean "targets"?`,
		"watch:\n  targets: a:1\n":            "c.yaml:2:12: targets must be a list",
		"watch:\n  targets_file: none.json\n": "cannot read",
		"grace: 1s\n":                         "no endpoints",
	} {
		_, err := Parse(filepath.Join(dir, "c.yaml"), []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", src, err, want)
		}
	}
}
