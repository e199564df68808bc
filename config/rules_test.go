package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A URL but for its scheme is offered with http:// prepended; a mistyped scheme or a
// text that stays invalid with it gets no guess.
func TestBaseURLSchemeHint(t *testing.T) {
	for s, want := range map[string]string{
		"127.0.0.1:8090/v1": "; did you mean http://127.0.0.1:8090/v1?",
		"[::1]:8090/v1":     "; did you mean http://[::1]:8090/v1?",
		"http:/h/v1":        "",
		"HTTPS:h/v1":        "",
		"/v1":               "",
		"h:port/v1":         "",
		"h/v1?api_key=x":    "",
	} {
		msg := checkBaseURL(s)
		if !strings.HasPrefix(msg, needScheme) || msg[len(needScheme):] != want {
			t.Errorf("checkBaseURL(%q) = %q, want %q + %q", s, msg, needScheme, want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := func() Endpoint { return NewEndpoint("http://127.0.0.1:8080/v1", "llama3") }
	tests := []struct {
		name   string
		change func(*Config)
		msg    string // "" = valid
	}{
		{"valid", func(*Config) {}, ""},
		{"no endpoints", func(c *Config) { c.Endpoints = nil }, "no endpoints: give --url and --model"},
		{"bad url", func(c *Config) { c.Endpoints[0].BaseURL = "localhost:8080" }, `endpoint "llama3": base_url (--url) must be an absolute`},
		{"no scheme", func(c *Config) { c.Endpoints[0].BaseURL = "//h/v1" }, "base_url (--url) must be an absolute http:// or https:// URL"},
		{"ip without scheme", func(c *Config) { c.Endpoints[0].BaseURL = "127.0.0.1:8090/v1" },
			"base_url (--url) must be an absolute http:// or https:// URL, e.g. http://127.0.0.1:8080/v1; did you mean http://127.0.0.1:8090/v1?"},
		{"host without scheme", func(c *Config) { c.Endpoints[0].BaseURL = "localhost:8090/v1" }, "; did you mean http://localhost:8090/v1?"},
		{"name without scheme", func(c *Config) { c.Endpoints[0].BaseURL = "api.example.com/v1" }, "; did you mean http://api.example.com/v1?"},
		{"no model", func(c *Config) { c.Endpoints[0].Model = "" }, "model (--model) is empty"},
		{"empty prompt", func(c *Config) { c.Endpoints[0].Prompt = "" }, "prompt (--prompt) is empty"},
		{"max tokens", func(c *Config) { c.Endpoints[0].MaxTokens = 0 }, "max_tokens (--max-tokens) must be at least 1, got 0"},
		{"concurrency", func(c *Config) { c.Endpoints[0].Concurrency = -1 }, "concurrency (--concurrency) must be at least 1, got -1"},
		{"concurrency high", func(c *Config) { c.Endpoints[0].Concurrency = MaxConcurrency + 1 }, "concurrency (--concurrency) must be at most 1024"},
		{"interval zero ok", func(c *Config) { c.Endpoints[0].Interval = 0 }, ""},
		{"interval negative", func(c *Config) { c.Endpoints[0].Interval = -time.Second }, "interval (--interval) must not be negative"},
		{"timeout zero", func(c *Config) { c.Endpoints[0].Timeout = 0 }, "timeout (--timeout) must be greater than 0"},
		{"stall zero", func(c *Config) { c.Endpoints[0].Stall = 0 }, "stall must be greater than 0"},
		{"key env name", func(c *Config) { c.Endpoints[0].APIKeyEnv = "A B" }, "api_key_env (--api-key-env) must be an environment variable name"},
		{"key env unset is fine", func(c *Config) { c.Endpoints[0].APIKeyEnv = "TOKSCOPE_TEST_UNSET" }, ""},
		{"header literal key", func(c *Config) { c.Endpoints[0].Headers = map[string]string{"Authorization": "Bearer x"} }, "literal credential"},
		{"extra body stream", func(c *Config) { c.Endpoints[0].ExtraBody = map[string]any{"stream": false} }, `extra_body must not set "stream"`},
		{"duplicate names", func(c *Config) {
			c.Endpoints = append(c.Endpoints, ok(), ok())
			c.Endpoints[1].Name, c.Endpoints[2].Name = "x", "x"
		}, `endpoint 3: duplicate name "x" (endpoint 2 has it too)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{Endpoints: []Endpoint{ok()}}
			tt.change(c)
			err := c.Validate()
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Validate() = %v (%T), want *Error", err, err)
			}
			if ce.Line != 0 || ce.Snippet != "" || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Validate() = %q, want %q without a position", err, tt.msg)
			}
		})
	}
}

func TestValidateNames(t *testing.T) {
	c := &Config{Endpoints: []Endpoint{
		NewEndpoint("http://h:1/v1", "m"),
		NewEndpoint("http://h:1/v1", "m"),
	}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Endpoints[0].Name != "h:1/m" || c.Endpoints[1].Name != "h:1/m#2" {
		t.Errorf("names %q %q", c.Endpoints[0].Name, c.Endpoints[1].Name)
	}
}

func TestApply(t *testing.T) {
	c, err := Parse("c.yaml", []byte(ep+"    max_tokens: 10\n  - {base_url: http://h/v1, model: m, prompt: p, interval: 3s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	prompt, maxTokens, conc, interval, timeout := "flag", 99, 3, time.Duration(0), 5*time.Second
	c.Apply(Overrides{})
	if c.Endpoints[0].MaxTokens != 10 || c.Endpoints[1].Prompt != "p" {
		t.Fatal("empty Overrides changed the config")
	}
	c.Apply(Overrides{Prompt: &prompt, MaxTokens: &maxTokens, Concurrency: &conc, Interval: &interval, Timeout: &timeout})
	for _, e := range c.Endpoints {
		if e.Prompt != prompt || e.MaxTokens != maxTokens || e.Concurrency != conc || e.Interval != 0 || e.Timeout != timeout {
			t.Errorf("%s: %+v", e.Name, e)
		}
	}
	bad := 0
	c.Apply(Overrides{MaxTokens: &bad})
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--max-tokens") {
		t.Errorf("Validate after a bad override = %v", err)
	}
}

func TestHeaderValues(t *testing.T) {
	t.Setenv("TOKSCOPE_TEST_TOKEN", "tok")
	e := Endpoint{Headers: map[string]string{
		"Authorization": "Bearer ${TOKSCOPE_TEST_TOKEN}",
		"X-Price":       "$5 and ${TOKSCOPE_TEST_TOKEN}${TOKSCOPE_TEST_TOKEN}",
		"X-Plain":       "plain $HOME",
	}}
	got := e.HeaderValues()
	want := map[string]string{"Authorization": "Bearer tok", "X-Price": "$5 and toktok", "X-Plain": "plain $HOME"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if e.Headers["Authorization"] != "Bearer ${TOKSCOPE_TEST_TOKEN}" {
		t.Error("HeaderValues changed the stored value")
	}
	if (Endpoint{}).HeaderValues() != nil {
		t.Error("no headers should give nil")
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	write := func(p string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(ep), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	home := filepath.Join(dir, "home")
	t.Setenv("HOME", home) // os.UserConfigDir: $XDG_CONFIG_HOME, else $HOME/.config on Linux
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("TOKSCOPE_CONFIG", "")

	if p, err := Find(); p != "" || err != nil {
		t.Errorf("nothing present: Find() = %q, %v", p, err)
	}

	userDir, err := os.UserConfigDir()
	if err != nil {
		t.Fatal(err)
	}
	user := write(filepath.Join(userDir, "tokscope", "config.yaml"))
	if p, err := Find(); p != user || err != nil {
		t.Errorf("user config dir: Find() = %q, %v, want %q", p, err, user)
	}

	xdg := filepath.Join(dir, "xdg")
	t.Setenv("XDG_CONFIG_HOME", xdg)
	// With $XDG_CONFIG_HOME set, os.UserConfigDir is that directory on Linux (the same
	// candidate), elsewhere it is still the platform directory.
	fallback := ""
	if d, _ := os.UserConfigDir(); d == userDir {
		fallback = user
	}
	if p, err := Find(); p != fallback || err != nil {
		t.Errorf("empty $XDG_CONFIG_HOME dir: Find() = %q, %v, want %q", p, err, fallback)
	}
	xdgFile := write(filepath.Join(xdg, "tokscope", "config.yaml"))
	if p, err := Find(); p != xdgFile || err != nil {
		t.Errorf("xdg: Find() = %q, %v, want %q", p, err, xdgFile)
	}

	explicit := write(filepath.Join(dir, "mine.yaml"))
	t.Setenv("TOKSCOPE_CONFIG", explicit)
	if p, err := Find(); p != explicit || err != nil {
		t.Errorf("$TOKSCOPE_CONFIG: Find() = %q, %v, want %q", p, err, explicit)
	}

	missing := filepath.Join(dir, "missing.yaml")
	t.Setenv("TOKSCOPE_CONFIG", missing)
	if p, err := Find(); p != "" || err == nil || !strings.HasPrefix(err.Error(), missing+": named by $TOKSCOPE_CONFIG") {
		t.Errorf("missing $TOKSCOPE_CONFIG: Find() = %q, %v", p, err)
	}

	t.Setenv("TOKSCOPE_CONFIG", dir)
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("$TOKSCOPE_CONFIG a directory: Find() error = %v", err)
	}
}

func TestEnvRefs(t *testing.T) {
	for _, tt := range []struct {
		in    string
		names []string
		bad   bool
	}{
		{"plain", nil, false},
		{"$HOME and $", nil, false},
		{"${A}-${B_2}", []string{"A", "B_2"}, false},
		{"${", nil, true},
		{"${1A}", nil, true},
		{"${}", nil, true},
	} {
		names, msg := envRefs(tt.in)
		if (msg != "") != tt.bad || !slices.Equal(names, tt.names) {
			t.Errorf("envRefs(%q) = %q, %q", tt.in, names, msg)
		}
	}
}

// TestApplyWorkload: a command-line prompt source replaces the file's (and clears the other
// two), --max-tokens replaces output_tokens, and the values reach Validate with their flag.
func TestApplyWorkload(t *testing.T) {
	src := "defaults:\n  output_tokens: 64\n  input_tokens: 100\n" + ep
	parse := func() *Config {
		c, err := Parse("c.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	prompt, file, cache, none, maxTokens := "flag", "p.jsonl", CacheReuse, "none", 7
	in, out := TokenLength{N: 300, SD: 5}, TokenLength{N: 20}

	c := parse()
	c.Apply(Overrides{Prompts: &file, Cache: &cache})
	if e := c.Endpoints[0]; e.Prompts != file || e.InputTokens.IsSet() || e.Cache != CacheReuse || e.OutputTokens.N != 64 {
		t.Errorf("--prompts: %+v", e)
	}
	c = parse()
	c.Apply(Overrides{Prompt: &prompt, MaxTokens: &maxTokens})
	if e := c.Endpoints[0]; e.Prompt != prompt || e.InputTokens.IsSet() || e.MaxTokens != 7 || e.OutputTokens.IsSet() {
		t.Errorf("--prompt --max-tokens: %+v", e)
	}
	c = parse()
	c.Apply(Overrides{InputTokens: &in, OutputTokens: &out})
	if e := c.Endpoints[0]; e.InputTokens != in || e.OutputTokens != out || e.Cache != CacheBust {
		t.Errorf("--input-tokens --output-tokens: %+v", e)
	}

	for _, tt := range []struct {
		o    Overrides
		want string
	}{
		{Overrides{Cache: &none}, `cache (--cache) must be bust or reuse, got "none"`},
		{Overrides{InputTokens: &TokenLength{N: -1}}, "input_tokens (--input-tokens) must be N or N:SD"},
		{Overrides{OutputTokens: &TokenLength{N: 1, SD: -1}}, "output_tokens (--output-tokens) must be N or N:SD"},
	} {
		c := parse()
		c.Apply(tt.o)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate = %v, want %q", err, tt.want)
		}
	}
}
