package main

import (
	"os/exec"
	"strings"
	"testing"
)

// importLayers is the layer block of docs/architecture.md: a package may import only packages of a
// lower layer (a later line), so that the arrows point one way.
var importLayers = [][]string{
	{"tokscope"},
	{"cli"},
	{"report", "ui", "promexport", "otlpexport", "calibrate", "discover"},
	{"export", "record", "watch"},
	{"feature"},
	{"sweep"},
	{"stats", "fanout"},
	{"metric"},
	{"probe", "servermetrics"},
	{"apiwire"},
	{"sample"},
	{"workload"},
	{"config", "sim"},
	{"kstamp", "redact"},
}

// testSupport are the packages that only tests import (shared test helpers): they have no
// layer, and no product package may import them.
var testSupport = map[string]bool{"sample/sampletest": true, "cli/clitest": true, "export/exporttest": true}

// TestImportLayers keeps the import arrows one way: every product package has a layer, and
// imports only tokscope packages below it (tests may import anything).
func TestImportLayers(t *testing.T) {
	t.Parallel()
	layer := map[string]int{}
	for i, names := range importLayers {
		for _, n := range names {
			layer[n] = i
		}
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	short := func(p string) string { return strings.TrimPrefix(p, "tokscope/") }
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := short(f[0])
		if pkg == "e2e" || testSupport[pkg] || pkg == "deploy" { // test code only
			continue
		}
		l, ok := layer[pkg]
		if !ok {
			t.Errorf("package %s has no layer: add it to the layer block of docs/architecture.md and to importLayers", pkg)
			continue
		}
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, "tokscope/") {
				continue
			}
			if testSupport[short(imp)] {
				t.Errorf("%s imports %s: a test-support package, for _test.go files only", pkg, short(imp))
			}
			if il, ok := layer[short(imp)]; ok && il <= l {
				t.Errorf("%s imports %s: an arrow pointing up or sideways (layers %d → %d)", pkg, short(imp), l, il)
			}
		}
	}
}
