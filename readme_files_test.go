package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmesNameTheirFiles keeps each package README's account of its files whole: every
// non-test .go file of a package (the root's aside: its README is the project's) is named, in
// backquotes, in the README.md beside it (its files table, or the section about that part),
// so that a newcomer finds where a thing lives and a new file is not left out.
func TestReadmesNameTheirFiles(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.Dir}}{{range .GoFiles}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		dir, files := f[0], f[1:]
		rel, _ := filepath.Rel(root, dir)
		if rel == "." || len(files) == 0 {
			continue
		}
		readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
		if err != nil {
			t.Errorf("%s has no README.md: add one with a files table", rel)
			continue
		}
		named := namedFiles(string(readme))
		for _, name := range files {
			if !named[name] {
				t.Errorf("%s/README.md does not name %s: add it to its files table", rel, name)
			}
		}
	}
}

var backquotedGo = regexp.MustCompile("`([^`]*\\.go)`")

// namedFiles are the .go files a README names in backquotes, by their base name (it may
// write `ui/run.go` or `run.go`; a cell may name several: `snapshot.go`, `series.go`).
func namedFiles(readme string) map[string]bool {
	named := map[string]bool{}
	for _, m := range backquotedGo.FindAllStringSubmatch(readme, -1) {
		named[filepath.Base(m[1])] = true
	}
	return named
}
