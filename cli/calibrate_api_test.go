package cli

import (
	"io"
	"testing"
)

// --calibrate --api measures the simulator through that API (the simulator serves all five;
// calibrate.RunAPI is tested in its package); it takes one API, and --api without --url or
// --calibrate stays a usage error.
func TestCalibrateAPIFlag(t *testing.T) {
	for _, api := range []string{"anthropic", "ollama"} {
		o, err := parseFlags([]string{"--calibrate", "--api", api}, io.Discard)
		if err != nil {
			t.Fatalf("--calibrate --api %s: %v", api, err)
		}
		if got := o.api(0); got != api {
			t.Errorf("--calibrate --api %s calibrates through %q", api, got)
		}
	}
	if o, err := parseFlags([]string{"--calibrate"}, io.Discard); err != nil || o.api(0) != "chat" {
		t.Errorf("--calibrate alone: %v, API %q, want chat", err, o.api(0))
	}
	oneLineNaming(t, []string{"--calibrate", "--api", "chat,ollama"}, "--api", "the one API")
	oneLineNaming(t, []string{"--no-tui", "--requests", "1", "--api", "chat"}, "--api", "needs --url")
}
