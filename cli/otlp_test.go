package cli

import (
	"strings"
	"testing"
)

// --otlp refuses, in one line before anything starts, a URL it could not push to, one with
// credentials in it (they belong in OTEL_EXPORTER_OTLP_HEADERS), and a replay.
func TestOTLPFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args    []string
		accepts string
	}{
		{[]string{"--demo", "--otlp", "127.0.0.1:4318"}, "e.g. http://127.0.0.1:4318"},
		{[]string{"--demo", "--otlp", "http://user:secret@collector:4318"}, "OTEL_EXPORTER_OTLP_HEADERS"},
		{[]string{"--demo", "--otlp", "http://collector:4318/v1/metrics?x=1"}, "query"},
		{[]string{"--demo", "--otlp", "user:secret@collector:4318"}, "e.g. http://127.0.0.1:4318"},
		{[]string{"--replay", "rec.jsonl", "--no-tui", "--otlp", "http://collector:4318"}, "exclude each other"},
	} {
		oneLineNaming(t, c.args, "--otlp", c.accepts)
		if _, stderr := runFlags(t, c.args...); strings.Contains(stderr, "secret") {
			t.Errorf("%q: the error shows the URL's password: %q", c.args, stderr)
		}
	}
}
