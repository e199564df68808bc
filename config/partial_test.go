package config

import (
	"errors"
	"strings"
	"testing"
)

// TestParseAPI: api: in defaults: reaches every endpoint, an endpoint's own wins, and a name
// not in APIs is refused at its place with the valid names listed.
func TestParseAPI(t *testing.T) {
	src := `defaults:
  api: anthropic
endpoints:
  - {name: a, base_url: http://h/v1, model: m}
  - {name: b, base_url: http://h/v1, model: m, api: responses}
  - {name: c, base_url: http://h:11434, model: m, api: ollama}
`
	c, err := Parse("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": APIAnthropic, "b": APIResponses, "c": APIOllama}
	for _, e := range c.Endpoints {
		if e.API != want[e.Name] {
			t.Errorf("%s: api %q, want %q", e.Name, e.API, want[e.Name])
		}
	}
	if c, err := Parse("c.yaml", []byte(ep)); err != nil || c.Endpoints[0].API != APIChat {
		t.Errorf("no api: key: %v, want chat (%v)", c, err)
	}

	for _, tt := range []struct {
		src       string
		line, col int
		msg       string
	}{
		{ep + "    api: grpc\n", 4, 10, `api must be one of chat, completions, responses, anthropic, ollama, got "grpc"`},
		{"defaults:\n  api: Chat\n" + ep, 2, 8, `api must be one of chat, completions, responses, anthropic, ollama, got "Chat"`},
		{ep + "    api:\n", 4, 5, `api must be one of chat, completions, responses, anthropic, ollama, got ""`},
		{ep + "    api: [chat]\n", 4, 10, "api must be a string, got a list"},
	} {
		_, err := Parse("c.yaml", []byte(tt.src))
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != tt.line || ce.Col != tt.col || ce.Msg != tt.msg {
			t.Errorf("%q: %v, want %d:%d: %s", tt.src, err, tt.line, tt.col, tt.msg)
		}
	}
	_, err = Parse("c.yaml", []byte(ep+"    api: grpc\n"))
	if want := `c.yaml:4:10: api must be one of chat, completions, responses, anthropic, ollama, got "grpc"`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want it to start with %q", err, want)
	}

	// From the flags: Validate names the flag; "" is the default.
	bad := NewEndpoint("http://h/v1", "m")
	bad.API = "soap"
	if err := (&Config{Endpoints: []Endpoint{bad}}).Validate(); err == nil || !strings.Contains(err.Error(), `api (--api) must be one of chat`) {
		t.Errorf("Validate = %v", err)
	}
	unset := Config{Endpoints: []Endpoint{{BaseURL: "http://h/v1", Model: "m", Prompt: "p", MaxTokens: 1, Concurrency: 1, Timeout: 1, Stall: 1}}}
	if err := unset.Validate(); err != nil || unset.Endpoints[0].API != APIChat {
		t.Errorf("an endpoint without API: %v, API %q", err, unset.Endpoints[0].API)
	}
	if _, err := ParseAPI("x"); err == nil || !strings.HasPrefix(err.Error(), "must be one of chat, completions") {
		t.Errorf("ParseAPI(x) = %v", err)
	}
	if DefaultKeyEnv(APIAnthropic) != "ANTHROPIC_API_KEY" || DefaultKeyEnv(APIChat) != "OPENAI_API_KEY" || DefaultKeyEnv(APIOllama) != "OPENAI_API_KEY" {
		t.Error("DefaultKeyEnv")
	}
}

// TestDefaultNamesDiffer: two servers of one model are told apart by host:port, endpoints of
// models of their own by the model.
func TestDefaultNamesDiffer(t *testing.T) {
	c := &Config{Endpoints: []Endpoint{
		NewEndpoint("http://127.0.0.1:8082/v1", "raw-model"),
		NewEndpoint("http://127.0.0.1:8081/v1", "raw-model"),
		NewEndpoint("http://127.0.0.1:8080/v1", "qwen3-8b"),
		NewEndpoint("https://api.openai.com/v1", "gpt-4o-mini"),
	}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []string{"127.0.0.1:8082/raw-model", "127.0.0.1:8081/raw-model", "qwen3-8b", "gpt-4o-mini"}
	for i, e := range c.Endpoints {
		if e.Name != want[i] {
			t.Errorf("endpoint %d: name %q, want %q", i+1, e.Name, want[i])
		}
	}
}

// TestEmptyChoiceKey: a key of the prompt source or output length given empty still chooses
// at its level: the choice of defaults: no longer applies, the built-in default does.
func TestEmptyChoiceKey(t *testing.T) {
	src := "defaults:\n  input_tokens: 100\n  output_tokens: 50\n" +
		"endpoints:\n  - {name: a, base_url: http://h/v1, model: m, input_tokens: , max_tokens: }\n" +
		"  - {name: b, base_url: http://h/v1, model: m, output_tokens: }\n"
	c, err := Parse("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Endpoints[0], c.Endpoints[1]
	if a.InputTokens.IsSet() || a.OutputTokens.IsSet() || a.MaxTokens != DefaultMaxTokens || a.Prompt != DefaultPrompt {
		t.Errorf("a: %+v", a)
	}
	if !b.InputTokens.IsSet() || b.OutputTokens.IsSet() || b.MaxTokens != DefaultMaxTokens {
		t.Errorf("b: %+v", b)
	}
}

// TestConflict: the flags' level keeps the rule of a file's level, one prompt source and one
// output length, named in the group's order.
func TestConflict(t *testing.T) {
	n, p, l := 5, "p", TokenLength{N: 3}
	for _, tt := range []struct {
		p             Partial
		first, second string
	}{
		{Partial{}, "", ""},
		{Partial{Prompt: &p, MaxTokens: &n}, "", ""},
		{Partial{Prompts: &p, Prompt: &p}, "prompt", "prompts"},
		{Partial{InputTokens: &l, Prompts: &p}, "input_tokens", "prompts"},
		{Partial{OutputTokens: &l, MaxTokens: &n}, "max_tokens", "output_tokens"},
	} {
		first, second, group := tt.p.Conflict()
		if first != tt.first || second != tt.second || (first != "" && len(group) < 2) {
			t.Errorf("Conflict(%+v) = %q, %q, %v", tt.p, first, second, group)
		}
	}
}

// TestSettingKeysDecoded: the keys that messages list are the keys the loader decodes.
func TestSettingKeysDecoded(t *testing.T) {
	if len(settingKeys) != len(settingDecoders) {
		t.Errorf("%d setting keys listed, %d decoded", len(settingKeys), len(settingDecoders))
	}
	for _, k := range settingKeys {
		if settingDecoders[k] == nil {
			t.Errorf("%s is listed but not decoded", k)
		}
	}
}
