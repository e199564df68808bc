package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"tokscope/config"
)

// --api by position like --model: one value serves every --url, a list gives one each; a bad
// name, a count that fits neither, or --api without --url is one line naming the flag.
func TestAPIFlag(t *testing.T) {
	u1, u2 := "http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"-u", u1, "-m", "a", "-u", u2, "-m", "b"}, []string{"chat", "chat"}},
		{[]string{"-u", u1, "-m", "a", "-u", u2, "-m", "b", "--api", "anthropic"}, []string{"anthropic", "anthropic"}},
		{[]string{"-u", u1, "-m", "a", "-u", u2, "-m", "b", "--api", "ollama, responses"}, []string{"ollama", "responses"}},
		{[]string{"-u", u1, "-m", "a", "--api", "completions", "-u", u2, "-m", "b", "--api", "chat"}, []string{"completions", "chat"}},
	} {
		o, err := parseFlags(append(tt.args, "--no-tui", "--requests", "1"), io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		for i, want := range tt.want {
			if got := o.urlEndpoint(i, "m").API; got != want {
				t.Errorf("%q: endpoint %d speaks %q, want %q", tt.args, i+1, got, want)
			}
		}
	}
	two := []string{"--no-tui", "--requests", "1", "-u", u1, "-m", "a", "-u", u2, "-m", "b"}
	oneLineNaming(t, append(two, "--api", "grpc"), "--api", "must be one of chat, completions, responses, anthropic, ollama")
	oneLineNaming(t, append(two, "--api", "chat,chat,chat"), "--api", "one --api for all, or one per --url")
	oneLineNaming(t, []string{"--demo", "--no-tui", "--requests", "1", "--api", "chat"}, "--api", "needs --url")
}

// An Anthropic --url endpoint reads ANTHROPIC_API_KEY, the others OPENAI_API_KEY, unless
// --api-key-env names a variable; a default variable that is unset sends no key, a named one
// that is unset is exit 2. The key itself is never in the config.
func TestAPIKeyEnvByAPI(t *testing.T) {
	const secret = "sk-ant-test-never-shown"
	t.Setenv("ANTHROPIC_API_KEY", secret)
	t.Setenv("OPENAI_API_KEY", "sk-openai-test")
	t.Setenv("TOKSCOPE_TEST_MINE", "sk-mine")
	t.Setenv("TOKSCOPE_TEST_EMPTY", "")
	urls := []string{"-u", "http://127.0.0.1:1/v1", "-m", "a", "-u", "http://127.0.0.1:2/v1", "-m", "b"}
	load := func(args ...string) (*config.Config, error) {
		t.Helper()
		o, err := parseFlags(append(append(urls, "--no-tui", "--requests", "1"), args...), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		cfg, cleanup, err := loadConfig(context.Background(), o, process{}, io.Discard)
		cleanup()
		return cfg, err
	}
	for _, tt := range []struct {
		args []string
		want [2]string
	}{
		{nil, [2]string{"OPENAI_API_KEY", "OPENAI_API_KEY"}},
		{[]string{"--api", "anthropic,chat"}, [2]string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}},
		{[]string{"--api", "anthropic", "--api-key-env", "TOKSCOPE_TEST_MINE"}, [2]string{"TOKSCOPE_TEST_MINE", "TOKSCOPE_TEST_MINE"}},
	} {
		cfg, err := load(tt.args...)
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		for i, e := range cfg.Endpoints {
			if e.APIKeyEnv != tt.want[i] {
				t.Errorf("%q: endpoint %d reads %q, want %q", tt.args, i+1, e.APIKeyEnv, tt.want[i])
			}
			if s := fmt.Sprintf("%#v", e); strings.Contains(s, secret) {
				t.Errorf("the key is in the endpoint: %s", s)
			}
		}
	}
	// Unset, the default variable sends no key: never another API's.
	t.Setenv("ANTHROPIC_API_KEY", "")
	if cfg, err := load("--api", "anthropic"); err != nil || cfg.Endpoints[0].APIKeyEnv != "" {
		t.Errorf("ANTHROPIC_API_KEY unset: %v, key from %q, want none", err, cfg.Endpoints[0].APIKeyEnv)
	}
	var stderr bytes.Buffer
	code := run("", append(urls, "--no-tui", "--requests", "1", "--api", "anthropic", "--api-key-env", "TOKSCOPE_TEST_EMPTY"), io.Discard, &stderr, process{})
	if code != ExitUsage || !strings.Contains(stderr.String(), "--api-key-env TOKSCOPE_TEST_EMPTY: that environment variable is not set") {
		t.Errorf("a named, unset key variable: exit %d, %q", code, stderr.String())
	}
}

// One --model serves every --url, as one --api does: one server watched through two APIs is
// two endpoints of that model, named by what tells them apart (the API). Two --model for
// three --url is still one line naming the --url without one.
func TestOneModelForEveryURL(t *testing.T) {
	u := "http://127.0.0.1:1/v1"
	o, err := parseFlags([]string{"-u", u, "-u", u, "-m", "random-medium", "--api", "chat,anthropic", "--no-tui", "--requests", "1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, cleanup, err := loadConfig(context.Background(), o, process{}, io.Discard)
	cleanup()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ep := range cfg.Endpoints {
		got = append(got, ep.Name+"="+ep.Model+"/"+ep.API)
	}
	if want := "chat=random-medium/chat anthropic=random-medium/anthropic"; strings.Join(got, " ") != want {
		t.Errorf("endpoints %q, want %q", strings.Join(got, " "), want)
	}
	oneLineNaming(t, []string{"--no-tui", "--requests", "1", "-u", u, "-m", "a", "-u", u, "-m", "b", "-u", "http://127.0.0.1:3/v1"},
		"--url http://127.0.0.1:3/v1", "has no --model")
}
