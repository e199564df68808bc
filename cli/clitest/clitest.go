// Package clitest holds what the tests of the command share, those of package cli (which run
// it in process) and those of the root package (which run the built binary): a fast simulated
// endpoint and a check of a record file. It is test support: only _test.go files import it
// (TestImportLayers checks that no product package does).
package clitest

import (
	"bytes"
	"os"
	"testing"
	"time"

	"tokscope/record"
	"tokscope/sim"
)

// BusySim starts a fast simulated endpoint (model "m": TTFT 5 ms, 20 tokens at 2000 tok/s),
// so that records pile up quickly, and returns its base URL; it closes when the test ends.
func BusySim(t testing.TB) string {
	t.Helper()
	srv, err := sim.Start(sim.Options{}, sim.Profile{Name: "busy", Model: "m", TTFT: 5 * time.Millisecond,
		TokensPerSecond: 2000, TokensPerChunk: 1, MaxTokens: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv.BaseURL("busy")
}

// WholeRecords reads a record file and fails the test unless every line is a complete
// record or server scrape and the file ends with a newline; it returns the records of requests.
func WholeRecords(t testing.TB, path string) []record.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("%s does not end with a newline: a torn last line", path)
	}
	f, err := record.ReadFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if n := len(f.Records) + len(f.Server); n != bytes.Count(b, []byte("\n")) {
		t.Errorf("%s: %d records and scrapes for %d lines", path, n, bytes.Count(b, []byte("\n")))
	}
	return f.Records
}
