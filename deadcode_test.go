package main

import (
	"encoding/json"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// deadcodeAllowed are the product functions that nothing reachable from main calls, kept on
// purpose, each for the reason beside it. Everything else that deadcode reports is either
// removed, or moved into a _test.go file when only tests use it. The test-support packages
// (testSupport in layers_test.go) are not product code and are not checked.
var deadcodeAllowed = map[string]string{
	// The simulator's ground truth: what the server itself did, which the tests of other
	// packages (probe, cli, config, the built binary's) compare tokscope's figures with. A
	// _test.go file cannot serve another package, and these read the server's internals.
	"sim.Server.Arrival":            "when the server got a request: the client's TTFT minus the server's (probe benchmarks)",
	"sim.Server.Received":           "the kernel's receive time of a request at the server (probe's ceiling benchmark)",
	"sim.Server.Clock":              "the server's own clock of a request, which server_timing must match (probe)",
	"sim.Server.IncludeMetricsSeen": "how many requests asked for vLLM's metrics: include_metrics goes only to vLLM (probe)",
	"sim.Server.Requests":           "how many requests a profile received: --requests, shards and workloads send exactly that many (cli, config, root)",
	"sim.Server.GPUEnergy":          "the joules the simulated GPUs used, which the energy figures must match (cli)",
	"sim.Server.Seen":               "what each request carried and was served (tool messages, cached blocks, arrival and end): agent sessions' ground truth (probe)",
	// The address of a profile's dcgm-style exposition, for the tests that point --gpu-metrics
	// at it (cli); the product names no GPU exporter of the simulator.
	"sim.Server.GPUMetricsURL": "a profile's dcgm-style exposition, for --gpu-metrics in tests (cli)",
	// A parser other packages' tests need: ui's fleet-table tests build watch Instants from the
	// real servers' captured expositions with it (the product scrapes through a Scraper). A
	// candidate for a watch test-support package.
	"watch.ParseInstant": "a captured exposition as one scrape, for ui's watch tests",
}

// deadcodeFinding is one record of `deadcode -json`: a package and its unreachable functions.
type deadcodeFinding struct {
	Path  string // import path
	Funcs []struct {
		Name     string // Func, or Type.Method
		Position struct {
			File string
			Line int
		}
	}
}

// TestNoDeadCode keeps every product function reachable from main: golang.org/x/tools'
// deadcode (a go.mod tool, fetched through the module proxy like any dependency) runs over
// the product without -test, so a function that only tests call is reported too. A finding
// outside deadcodeAllowed fails, and so does an allowed entry deadcode no longer reports
// (the list holds only what is still there). deadcode's analysis (RTA) keeps alive every
// exported method of a type that reaches an interface, so it misses some: it is a floor.
func TestNoDeadCode(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "tool", "deadcode", "-json", "./...").Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += "\n" + string(ee.Stderr)
		}
		t.Fatalf("go tool deadcode: %s", msg)
	}
	var pkgs []deadcodeFinding
	if len(strings.TrimSpace(string(out))) > 0 { // nothing dead: no output at all
		if err := json.Unmarshal(out, &pkgs); err != nil {
			t.Fatalf("deadcode -json: %v\n%s", err, out)
		}
	}
	seen := map[string]bool{}
	for _, p := range pkgs {
		pkg := strings.TrimPrefix(p.Path, "tokscope/")
		if testSupport[pkg] {
			continue
		}
		for _, f := range p.Funcs {
			name := pkg + "." + f.Name
			seen[name] = true
			if _, ok := deadcodeAllowed[name]; !ok {
				t.Errorf("%s:%d: %s is unreachable from main: remove it, move it to a _test.go file if only "+
					"tests use it, or (with the reason) add it to deadcodeAllowed", f.Position.File, f.Position.Line, name)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(deadcodeAllowed)) {
		if !seen[name] {
			t.Errorf("deadcodeAllowed lists %s, which deadcode no longer reports: take it off the list", name)
		}
	}
}
