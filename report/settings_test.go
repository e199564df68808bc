package report

import (
	"strings"
	"testing"
	"time"

	"tokscope/config"
)

// The settings show how the run was made and nothing secret: header values, user info and
// query strings are left out, keys appear only as the name of their variable.
func TestSettingsLeaveSecretsOut(t *testing.T) {
	t.Setenv("TOKSCOPE_TEST_KEY", "sk-live-SECRET1234")
	ep := config.NewEndpoint("https://user:pa55word@llm.example.com/v1?api_key=sk-query-SECRET", "m")
	ep.Name, ep.APIKeyEnv = "cloud", "TOKSCOPE_TEST_KEY"
	ep.Headers = map[string]string{"Authorization": "Bearer sk-header-SECRET", "X-Team": "perf"}
	ep.ExtraBody = map[string]any{"temperature": 0}
	ep.Interval = 2 * time.Second
	cfg := &config.Config{File: "/etc/tokscope.yaml", Endpoints: []config.Endpoint{ep}}
	args := []string{"--url", "https://bob:hunter2@x.example/v1", "-p", "hello world", "--report=run.html"}
	var all strings.Builder
	for _, s := range Settings(args, cfg) {
		all.WriteString(s.Name + " = " + s.Value + "\n")
	}
	got := all.String()
	for _, secret := range []string{"SECRET", "pa55word", "hunter2", "perf", "user:", "bob:"} {
		if strings.Contains(got, secret) {
			t.Errorf("settings show %q:\n%s", secret, got)
		}
	}
	for _, want := range []string{
		"command line = tokscope --url https://x.example/v1 -p 'hello world' --report=run.html",
		"config file = /etc/tokscope.yaml",
		"endpoint cloud = https://llm.example.com/v1?[redacted] · model m · key from $TOKSCOPE_TEST_KEY",
		"interval 2s", "headers Authorization: [redacted], X-Team: [redacted]", `extra_body {"temperature":0}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("settings lack %q:\n%s", want, got)
		}
	}
}
