package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the loader. It must never panic; a rejection must be an
// *Error with a message and a position inside the file (a Validate fallback without one
// means the loader missed a rule); an accepted config must pass
// Validate and its extra_body must marshal to JSON. Seeds: testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	f.Setenv(setVar, "sk-from-env")
	f.Add([]byte(ep))
	f.Fuzz(func(t *testing.T, src []byte) {
		c, err := Parse("fuzz.yaml", src)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *config.Error: %v", err, err)
			}
			if strings.TrimSpace(ce.Msg) == "" {
				t.Fatalf("error without a message: %#v", ce)
			}
			if ce.Line < 1 || ce.Col < 1 || ce.Line > len(splitLines(string(src))) {
				t.Fatalf("position %d:%d outside the file", ce.Line, ce.Col)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("fuzz.yaml:%d:%d: ", ce.Line, ce.Col)) {
				t.Fatalf("Error() does not start with its position: %q", err)
			}
			return
		}
		if len(c.Endpoints) == 0 {
			t.Fatal("accepted a config without endpoints")
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted a config that Validate rejects: %v", err)
		}
		names := make(map[string]bool)
		for _, e := range c.Endpoints {
			if names[e.Name] {
				t.Fatalf("duplicate name %q", e.Name)
			}
			names[e.Name] = true
			if _, err := json.Marshal(e.ExtraBody); err != nil {
				t.Fatalf("extra_body does not marshal: %v", err)
			}
		}
	})
}

// TestFuzzSeeds keeps the seed corpus honest: seeds named valid_* must load.
func TestFuzzSeeds(t *testing.T) {
	t.Setenv(setVar, "sk-from-env")
	paths, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzLoad", "valid_*"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no valid seeds: %v", err)
	}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, lit, _ := strings.Cut(strings.TrimSpace(string(raw)), "[]byte(")
		src, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if _, err := Parse(p, []byte(src)); err != nil {
			t.Errorf("seed %s: %v", p, err)
		}
	}
}
