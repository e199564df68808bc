package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every reference to a document, in code and in docs, points to a file in the repository:
// a name ending in .md in a .go or .md file (`docs/metrics.md`, `sim/README.md`), and every
// local markdown link (`[outputs](outputs.md#the-record)`), anchor included. A document
// outside the repository is cited by its URL (http…), which this check leaves alone.

var (
	// A path-like word ending in .md; the leading part may hold "../" and directories.
	docRef = regexp.MustCompile(`(?:https?://\S*|[A-Za-z0-9_.\-/]*[A-Za-z0-9_\-]\.md)(?:#[A-Za-z0-9_\-]+)?`)
	// A markdown link's target: [text](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

func TestDocumentReferencesResolve(t *testing.T) {
	t.Parallel()
	files := repoFiles(t)
	if len(files) < 50 {
		t.Fatalf("walked only %d files: the walk is broken", len(files))
	}
	checked := 0
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(text), "\n") {
			for _, ref := range refsIn(f, line) {
				checked++
				if msg := resolveRef(f, ref); msg != "" {
					t.Errorf("%s:%d: %q %s", f, n+1, ref, msg)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d references: the patterns no longer find them", checked)
	}
}

// TestDocumentReferencesCatchDangling proves the check fails on what it must catch.
func TestDocumentReferencesCatchDangling(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ line, ref string }{
		{"// see DESIGN.md, \"Live figures\"", "DESIGN.md"},
		{"see [the docs](docs/nothing-here.md)", "link:docs/nothing-here.md"},
		{"[metrics](docs/metrics.md#no-such-heading)", "link:docs/metrics.md#no-such-heading"},
		{"[a page](metrics.md) beside README.md", "link:metrics.md"}, // README.md's directory is the root
	} {
		refs := refsIn("README.md", c.line)
		if len(refs) == 0 || refs[0] != c.ref {
			t.Errorf("refsIn(%q) = %q, want %q first", c.line, refs, c.ref)
			continue
		}
		if resolveRef("README.md", c.ref) == "" {
			t.Errorf("%q resolved, but it names nothing in the repository", c.ref)
		}
	}
	for _, ok := range []string{"docs/metrics.md", "docs/metrics.md#definitions-normative", "README.md"} {
		if msg := resolveRef("main.go", ok); msg != "" {
			t.Errorf("%q: %s", ok, msg)
		}
	}
}

func repoFiles(t *testing.T) []string {
	var files []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		// This file's own examples of dangling references are its test cases.
		if (strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) && path != "docrefs_test.go" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// refsIn lists the document references of one line of file: markdown links in .md files, and
// words ending in .md everywhere (URLs are left out).
func refsIn(file, line string) []string {
	var refs []string
	seen := map[string]bool{}
	if strings.HasSuffix(file, ".md") {
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			refs = append(refs, "link:"+target)
			seen[target] = true
		}
	}
	for _, loc := range docRef.FindAllStringIndex(line, -1) {
		m := line[loc[0]:loc[1]]
		if strings.Contains(m, "://") || seen[m] || loc[0] > 0 && line[loc[0]-1] == '%' { // a format verb's tail
			continue
		}
		refs = append(refs, m)
	}
	return refs
}

// resolveRef says what is wrong with ref as written in file ("" when it names a file, or a
// heading in it, of the repository). A reference resolves against the file's directory or
// the repository's root.
// A markdown link ("link:" before it) resolves only against its file's directory, as a reader
// of the rendered page follows it.
func resolveRef(file, ref string) string {
	bases := []string{filepath.Dir(file), "."}
	if r, ok := strings.CutPrefix(ref, "link:"); ok {
		ref, bases = r, bases[:1]
	}
	path, anchor, _ := strings.Cut(ref, "#")
	if path == "" { // an anchor in the same file
		path = filepath.Base(file)
	}
	for _, base := range bases {
		p := filepath.Clean(filepath.Join(base, path))
		if strings.HasPrefix(p, "..") {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if anchor == "" || !strings.HasSuffix(p, ".md") {
			return ""
		}
		if headingAnchors(p)[anchor] {
			return ""
		}
		return "names no heading of " + p
	}
	return "names no file of the repository"
}

// headingAnchors are the anchors GitHub gives the headings of a markdown file.
func headingAnchors(path string) map[string]bool {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	anchors := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ' || r == '-':
				b.WriteRune('-')
			case r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && isLetter(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		for n := 1; anchors[a]; n++ { // GitHub numbers repeated headings
			a = b.String() + "-" + string(rune('0'+n))
		}
		anchors[a] = true
	}
	return anchors
}

func isLetter(r rune) bool { return strings.ToUpper(string(r)) != strings.ToLower(string(r)) }
