package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Environment used by the tests: set and unset variables with names no real system uses.
const (
	setVar   = "TOKSCOPE_TEST_KEY"
	unsetVar = "TOKSCOPE_TEST_UNSET"
)

func testEnv(t *testing.T) {
	t.Helper()
	t.Setenv(setVar, "sk-from-env")
	t.Setenv(unsetVar, "")
	os.Unsetenv(unsetVar) // t.Setenv restores the original afterwards
}

// ep is a minimal valid endpoint list; tests append keys to its single endpoint.
const ep = "endpoints:\n  - base_url: http://127.0.0.1:8080/v1\n    model: llama3\n"

func TestParseErrors(t *testing.T) {
	testEnv(t)
	tests := []struct {
		name      string
		src       string
		line, col int
		msg       string // substring of Msg
	}{
		// Structure and strictness.
		{"empty file", "", 1, 1, "config is empty"},
		{"only a comment", "# nothing\n", 1, 1, "config is empty"},
		{"not a mapping", "- a\n- b\n", 1, 1, "the config must be a mapping"},
		{"unknown top key", "endpoint:\n  - base_url: http://h/v1\n", 1, 1, `unknown key "endpoint"; did you mean "endpoints"?`},
		{"unknown endpoint key", ep + "    modle: x\n", 4, 5, `endpoint 1: unknown key "modle"; did you mean "model"?`},
		{"unknown defaults key", "defaults:\n  max_token: 5\n" + ep, 2, 3, `defaults: unknown key "max_token"; did you mean "max_tokens"?`},
		{"unknown key far from all", ep + "    zzzzzzzz: 1\n", 4, 5, "known keys: name, base_url"},
		// The flag is --url; the key is base_url.
		{"the flag's name as a key", "endpoints:\n  - url: http://h/v1\n    model: m\n", 2, 5, `endpoint 1: unknown key "url"; did you mean "base_url"?`},
		{"defaults in endpoint-only key", "defaults:\n  model: x\n" + ep, 2, 3, `defaults: unknown key "model"`},
		{"no endpoints", "defaults:\n  max_tokens: 5\n", 1, 1, "no endpoints"},
		{"endpoints empty list", "endpoints: []\n", 1, 12, "endpoints is empty"},
		{"endpoints null", "defaults: {}\nendpoints:\n", 2, 1, "endpoints is empty"},
		{"endpoints a mapping", "endpoints: {a: 1}\n", 1, 12, "endpoints must be a list"},
		{"grace without a unit", "grace: 30\n" + ep, 1, 8, "grace needs a unit, e.g. 30s"},
		{"grace negative", "grace: -1s\n" + ep, 1, 8, "grace must not be negative"},
		{"grace a list", "grace: [1s]\n" + ep, 1, 8, "grace must be a duration"},
		{"grace in defaults", "defaults:\n  grace: 1s\n" + ep, 2, 3, `defaults: unknown key "grace"`},
		{"endpoint null", "endpoints:\n  - \n", 2, 5, "endpoint 1 is empty"},
		{"endpoint a string", "endpoints:\n  - http://h/v1\n", 2, 5, "endpoint 1 must be a mapping"},
		{"second document", ep + "---\nendpoints: []\n", 5, 1, "second one"},
		{"syntax error", ep + "    prompt: \"unclosed\n", 4, 13, "double-quoted"},
		{"duplicate key", ep + "    model: other\n", 4, 5, `mapping key "model" already defined`},
		{"tag", ep + "    max_tokens: !!int 5\n", 4, 17, "tags (!!int) are not supported"},
		{"unknown alias", ep + "    prompt: *nope\n", 4, 13, "alias *nope names no anchor"},
		{"anchor twice", ep + "    prompt: &p a\n    name: &p b\n", 5, 11, "anchor &p is defined twice"},
		{"merge of a scalar", ep + "    <<: 5\n", 4, 9, "a merge (<<) value must be a mapping"},
		{"invalid utf-8", ep + "    prompt: a\xffb\n", 4, 14, "not valid UTF-8"},

		// Required fields and URLs.
		{"missing base_url", "endpoints:\n  - model: m\n", 2, 5, "endpoint 1 has no base_url"},
		{"missing model", "endpoints:\n  - {base_url: http://h/v1}\n", 2, 5, "endpoint 1 has no model"},
		{"missing model second", ep + "  - base_url: http://h/v1\n", 4, 5, "endpoint 2 has no model"},
		{"empty base_url", "endpoints:\n  - base_url:\n    model: m\n", 2, 5, "base_url is empty"},
		{"empty model", "endpoints:\n  - base_url: http://h/v1\n    model: \"\"\n", 3, 12, "model is empty"},
		{"ftp url", "endpoints:\n  - base_url: ftp://h/v1\n    model: m\n", 2, 15, "absolute http:// or https:// URL"},
		{"relative url", "endpoints:\n  - base_url: /v1\n    model: m\n", 2, 15, "absolute http:// or https:// URL"},
		{"scheme-less url", "endpoints:\n  - base_url: 127.0.0.1:8080/v1\n    model: m\n", 2, 15, "absolute http:// or https:// URL, e.g. http://127.0.0.1:8080/v1; did you mean http://127.0.0.1:8080/v1?"},
		{"no host", "endpoints:\n  - base_url: http:///v1\n    model: m\n", 2, 15, "base_url has no host"},
		{"bad port", "endpoints:\n  - base_url: http://h:port/v1\n    model: m\n", 2, 15, "not a valid URL"},
		{"url with credentials", "endpoints:\n  - base_url: https://u:pw@h/v1\n    model: m\n", 2, 15, "must not hold credentials"},
		{"base_url a list", "endpoints:\n  - base_url: [http://h]\n    model: m\n", 2, 15, "base_url must be a string, got a list"},

		// Names.
		{"duplicate name", "endpoints:\n  - {name: a, base_url: http://h/v1, model: m}\n  - name: a\n    base_url: http://h/v1\n    model: n\n", 3, 11, `duplicate endpoint name "a" (first used on line 2)`},
		{"empty name", ep + "    name: \"\"\n", 4, 11, "name is empty"},
		{"name with newline", ep + "    name: \"a\\nb\"\n", 4, 11, "control character"},

		// Counts.
		{"max_tokens quoted", ep + "    max_tokens: \"5\"\n", 4, 17, `max_tokens must be a whole number, got a string ("5")`},
		{"max_tokens float", ep + "    max_tokens: 1.5\n", 4, 17, `max_tokens must be a whole number, got a number ("1.5")`},
		{"max_tokens zero", ep + "    max_tokens: 0\n", 4, 17, "max_tokens must be at least 1, got 0"},
		{"max_tokens negative", ep + "    max_tokens: -3\n", 4, 17, "max_tokens must be at least 1, got -3"},
		{"max_tokens huge", ep + "    max_tokens: 99999999999999999999999\n", 4, 17, "max_tokens is too large"},
		{"concurrency zero in defaults", "defaults:\n  concurrency: 0\n" + ep, 2, 16, "concurrency must be at least 1, got 0"},
		{"concurrency too high", ep + "    concurrency: 5000\n", 4, 18, "concurrency must be at most 1024"},
		{"concurrency bool", ep + "    concurrency: true\n", 4, 18, "concurrency must be a whole number, got a boolean"},

		// Durations.
		{"interval without unit", ep + "    interval: 5\n", 4, 15, "interval needs a unit, e.g. 5s"},
		{"interval negative", ep + "    interval: -1s\n", 4, 15, "interval must not be negative"},
		{"timeout zero", ep + "    timeout: 0s\n", 4, 14, "timeout must be greater than 0"},
		{"timeout bare zero", "defaults:\n  timeout: 0\n" + ep, 2, 12, "timeout must be greater than 0"},
		{"stall garbage", ep + "    stall: soon\n", 4, 12, `stall must be a duration such as 500ms, 2s or 1m30s, got "soon"`},
		{"stall a float", ep + "    stall: 1.5\n", 4, 12, "stall must be a duration such as 500ms, 2s or 1m30s, got a number"},
		{"stall negative", "defaults:\n  stall: -2m\n" + ep, 2, 10, "stall must not be negative"},
		{"prompt empty", ep + "    prompt: \"  \"\n", 4, 13, "prompt is empty"},
		{"prompt a mapping", ep + "    prompt: {a: b}\n", 4, 13, "prompt must be a string, got a mapping"},
		{"insecure not bool", ep + "    insecure_skip_verify: \"yes\"\n", 4, 27, "insecure_skip_verify must be true or false, got a string"},

		// Keys.
		{"api_key_env unset", ep + "    api_key_env: " + unsetVar + "\n", 4, 18, "environment variable " + unsetVar + " (api_key_env) is not set"},
		{"api_key ref unset", ep + "    api_key: ${" + unsetVar + "}\n", 4, 14, "environment variable " + unsetVar + " (api_key) is not set"},
		{"api_key literal", ep + "    api_key: sk-live-1234567890\n", 4, 14, "api_key holds a literal key"},
		{"api_key number", ep + "    api_key: 1234567890\n", 4, 14, "api_key holds a literal key"},
		{"api_key partial ref", ep + "    api_key: sk-${" + setVar + "}\n", 4, 14, "api_key holds a literal key"},
		{"both key sources", ep + "    api_key_env: " + setVar + "\n    api_key: ${" + setVar + "}\n", 5, 5, "either api_key or api_key_env"},
		{"api_key_env bad name", ep + "    api_key_env: my key\n", 4, 18, "must be an environment variable name"},
		{"api_key_env a ref", ep + "    api_key_env: ${" + setVar + "}\n", 4, 18, "must be an environment variable name"},

		// Headers and extra_body.
		{"headers a list", ep + "    headers: [a]\n", 4, 14, "headers must be a mapping"},
		{"header unset var", ep + "    headers:\n      X-Org: ${" + unsetVar + "}\n", 5, 14, `header "X-Org": environment variable ` + unsetVar + " is not set"},
		{"header bad ref", ep + "    headers: {X-Org: \"${not a var}\"}\n", 4, 22, "is not an environment variable reference"},
		{"header unclosed ref", ep + "    headers: {X-Org: \"${ORG\"}\n", 4, 22, "unclosed ${"},
		{"header literal credential", ep + "    headers:\n      Authorization: Bearer sk-abcdef123456\n", 5, 22, `header "Authorization" holds a literal credential`},
		{"header x-api-key literal", ep + "    headers: {x-api-key: abcdef123456}\n", 4, 26, `header "X-Api-Key" holds a literal credential`},
		{"header bad name", ep + "    headers: {\"X Foo\": bar}\n", 4, 15, `header name "X Foo" is not a valid HTTP header name`},
		{"header twice", ep + "    headers:\n      X-Foo: a\n      x-foo: b\n", 6, 7, `header "X-Foo" is given twice`},
		{"header value a list", ep + "    headers: {X-Foo: [a]}\n", 4, 22, `header "X-Foo" must be a string, got a list`},
		{"extra_body a list", ep + "    extra_body: [a]\n", 4, 17, "extra_body must be a mapping"},
		{"extra_body stream", ep + "    extra_body:\n      stream: false\n", 5, 7, `extra_body must not set "stream"`},
		{"extra_body model in defaults", "defaults:\n  extra_body: {model: x}\n" + ep, 2, 16, `extra_body must not set "model"`},
		{"extra_body nan", ep + "    extra_body: {top_p: .nan}\n", 4, 25, "JSON has no infinity or NaN"},
		{"extra_body nested inf", ep + "    extra_body: {a: {b: [1, -.inf]}}\n", 4, 29, "JSON has no infinity or NaN"},

		// Workload.
		{"input_tokens zero", ep + "    input_tokens: 0\n", 4, 19, "input_tokens must be N or N:SD tokens"},
		{"input_tokens negative sd", ep + "    input_tokens: 512:-3\n", 4, 19, `got "512:-3"`},
		{"input_tokens garbage", ep + "    input_tokens: many\n", 4, 19, `input_tokens must be N or N:SD tokens (N a whole number from 1 to 1048576, SD ≥ 0), e.g. 512 or 512:64, got "many"`},
		{"input_tokens float", ep + "    input_tokens: 51.2\n", 4, 19, "input_tokens must be N or \"N:SD\" tokens, e.g. 512 or \"512:64\", got a number"},
		{"input_tokens a list", ep + "    input_tokens: [1, 2]\n", 4, 19, "got a list"},
		{"input_tokens too many", "defaults:\n  input_tokens: 2000000\n" + ep, 2, 17, "from 1 to 1048576"},
		{"output_tokens zero sd only", ep + "    output_tokens: \":5\"\n", 4, 20, "output_tokens must be N or N:SD tokens"},
		{"cache unknown", ep + "    cache: off\n", 4, 12, "cache must be bust (the default: every prompt starts with a unique tag) or reuse"},
		{"cache empty", ep + "    cache:\n", 4, 5, "cache must be bust"},
		{"cache a bool", ep + "    cache: true\n", 4, 12, "cache must be bust"},
		{"prompts missing file", ep + "    prompts: /nonexistent/tokscope/p.jsonl\n", 4, 14, "prompts: cannot read /nonexistent/tokscope/p.jsonl: no such file or directory"},
		{"prompts a directory", ep + "    prompts: /\n", 4, 14, "prompts: / is a directory"},
		{"prompts empty", ep + "    prompts: \"\"\n", 4, 14, "prompts is empty (a JSONL or ShareGPT JSON file)"},
		{"prompt and input_tokens", ep + "    prompt: hi\n    input_tokens: 5\n", 5, 5, "give one of prompt, input_tokens, prompts, not both prompt (line 4) and input_tokens"},
		{"prompts and input_tokens in defaults", "defaults:\n  input_tokens: 5\n  prompts: x.jsonl\n" + ep, 3, 3, "not both input_tokens (line 2) and prompts"},
		{"max_tokens and output_tokens", ep + "    output_tokens: 5\n    max_tokens: 9\n", 5, 5, "give one of max_tokens, output_tokens, not both output_tokens (line 4) and max_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("test.yaml", []byte(tt.src))
			if err == nil {
				t.Fatalf("Parse accepted %q: %+v", tt.src, c)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v is not a *config.Error", err, err)
			}
			t.Log(err)
			if ce.Line != tt.line || ce.Col != tt.col {
				t.Errorf("position %d:%d, want %d:%d\n%v", ce.Line, ce.Col, tt.line, tt.col, err)
			}
			if !strings.Contains(ce.Msg, tt.msg) {
				t.Errorf("message %q does not contain %q", ce.Msg, tt.msg)
			}
			if want := "test.yaml:" + strconv.Itoa(ce.Line) + ":" + strconv.Itoa(ce.Col) + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Error() = %q, want prefix %q", err.Error(), want)
			}
			if ce.Snippet == "" {
				t.Errorf("no snippet: %v", err)
			}
		})
	}
}

func TestParseValid(t *testing.T) {
	testEnv(t)
	src := `# the example of docs/config.md
defaults:
  prompt: "Count to ten."
  max_tokens: 64
  interval: 500ms
  timeout: 1m
  stall: 10s
  concurrency: 2
  headers: {X-Foo: bar, X-Org: "${` + setVar + `}"}
  extra_body: {ignore_eos: true, temperature: 0}
endpoints:
  - name: local-llama
    base_url: http://127.0.0.1:8080/v1
    model: llama3
    api_key_env: ` + setVar + `
    insecure_skip_verify: true
  - base_url: https://api.openai.com/v1
    model: gpt-4o-mini
    api_key: ${` + setVar + `}
    max_tokens: 32
    interval: 0
    headers: {x-foo: baz}
    extra_body: {temperature: 0.5, stream_options: {include_usage: true}}
`
	c, err := Parse("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Endpoint{
		{
			Name: "local-llama", BaseURL: "http://127.0.0.1:8080/v1", Model: "llama3", APIKeyEnv: setVar,
			Headers:   map[string]string{"X-Foo": "bar", "X-Org": "${" + setVar + "}"},
			ExtraBody: map[string]any{"ignore_eos": true, "temperature": uint64(0)},
			Prompt:    "Count to ten.", MaxTokens: 64, Concurrency: 2, Cache: CacheBust, API: APIChat,
			Interval: 500 * time.Millisecond, Timeout: time.Minute, Stall: 10 * time.Second,
			InsecureSkipVerify: true,
		},
		{
			Name: "gpt-4o-mini", BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", APIKeyEnv: setVar,
			Headers:   map[string]string{"X-Foo": "baz", "X-Org": "${" + setVar + "}"},
			ExtraBody: map[string]any{"ignore_eos": true, "temperature": 0.5, "stream_options": map[string]any{"include_usage": true}},
			Prompt:    "Count to ten.", MaxTokens: 32, Concurrency: 2, Cache: CacheBust, API: APIChat,
			Interval: 0, Timeout: time.Minute, Stall: 10 * time.Second,
		},
	}
	if c.File != "c.yaml" {
		t.Errorf("File = %q", c.File)
	}
	if c.Grace != nil {
		t.Errorf("Grace = %v without a grace: key", *c.Grace)
	}
	for src, want := range map[string]time.Duration{"grace: 10s\n": 10 * time.Second, "grace: 0\n": 0} {
		g, err := Parse("g.yaml", []byte(src+"endpoints:\n  - base_url: http://h/v1\n    model: m\n"))
		if err != nil || g.Grace == nil || *g.Grace != want {
			t.Errorf("%q: grace %v, %v; want %v", src, g.Grace, err, want)
		}
	}
	if !reflect.DeepEqual(c.Endpoints, want) {
		t.Errorf("got\n%#v\nwant\n%#v", c.Endpoints, want)
	}
	// extra_body must marshal to the JSON the user wrote.
	b, err := json.Marshal(c.Endpoints[1].ExtraBody)
	if err != nil || string(b) != `{"ignore_eos":true,"stream_options":{"include_usage":true},"temperature":0.5}` {
		t.Errorf("extra_body JSON = %s, %v", b, err)
	}
}

func TestParseBuiltinDefaults(t *testing.T) {
	c, err := Parse("c.yaml", []byte(ep))
	if err != nil {
		t.Fatal(err)
	}
	want := NewEndpoint("http://127.0.0.1:8080/v1", "llama3")
	want.Name = "llama3" // the model, when no other endpoint has it
	if !reflect.DeepEqual(c.Endpoints, []Endpoint{want}) {
		t.Errorf("got %#v, want %#v", c.Endpoints[0], want)
	}
	if c.Endpoints[0].APIKeyEnv != "" {
		t.Error("an endpoint without api_key_env must send no key (not OPENAI_API_KEY to an arbitrary host)")
	}
}

func TestDefaultNames(t *testing.T) {
	src := `endpoints:
  - {base_url: http://h:1/v1, model: m}
  - {base_url: http://h:1/v1, model: m}
  - {base_url: http://h:1/v1, model: m, name: "h:1/m#3"}
  - {base_url: http://h:1/v1, model: n}
  - {base_url: http://h:1/other, model: m, name: "n"}
`
	c, err := Parse("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range c.Endpoints {
		got = append(got, e.Name)
	}
	// A model that several endpoints share names them host:port/model, a model of its own
	// names its endpoint; explicit names are reserved first, default names step around them.
	want := []string{"h:1/m", "h:1/m#2", "h:1/m#3", "n#2", "n"}
	if !slices.Equal(got, want) {
		t.Errorf("names = %q, want %q", got, want)
	}
}

func TestAnchorsAndMergeKeys(t *testing.T) {
	src := `endpoints:
  - &base
    base_url: http://h/v1
    model: a
    max_tokens: 7
    extra_body: {x: [1, 2]}
  - <<: *base
    model: b
  - {<<: [*base], model: c, max_tokens: 9}
`
	c, err := Parse("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		model     string
		maxTokens int
	}{{"a", 7}, {"b", 7}, {"c", 9}} {
		e := c.Endpoints[i]
		if e.Model != want.model || e.MaxTokens != want.maxTokens || e.BaseURL != "http://h/v1" {
			t.Errorf("endpoint %d = %s %d %s", i, e.Model, e.MaxTokens, e.BaseURL)
		}
	}
	// A shared anchor must not make endpoints share mutable maps.
	c.Endpoints[0].ExtraBody["x"].([]any)[0] = "changed"
	if c.Endpoints[1].ExtraBody["x"].([]any)[0] == "changed" {
		t.Error("endpoints share extra_body values")
	}
}

func TestExtraBodyNotShared(t *testing.T) {
	src := "defaults:\n  extra_body: {opts: {a: 1}}\n" + ep + "  - {base_url: http://h/v1, model: m}\n"
	c, err := Parse("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c.Endpoints[0].ExtraBody["opts"].(map[string]any)["a"] = 2
	if c.Endpoints[1].ExtraBody["opts"].(map[string]any)["a"] == 2 {
		t.Error("endpoints share defaults' extra_body")
	}
}

func TestAliasBomb(t *testing.T) {
	src := ep + `    extra_body:
      a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
      b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
      c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
      d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
      e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
`
	_, err := Parse("c.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "extra_body is too large") {
		t.Errorf("err = %v", err)
	}
	_, err = Parse("c.yaml", []byte(ep+"    extra_body: &x {a: *x}\n"))
	if err == nil {
		t.Error("a self-referencing extra_body was accepted")
	}
}

// TestLiteralKeyNeverShown puts a literal key in every place a message or snippet could pick
// it up: the refused value itself, a neighbour's error on the same line, a syntax error after
// it, multi-line forms, headers and URLs.
func TestLiteralKeyNeverShown(t *testing.T) {
	testEnv(t)
	const key = "sk-proj-SECRETabcdef123456"
	srcs := []string{
		ep + "    api_key: " + key + "\n",
		ep + "    api_key: \"" + key + "\"\n",
		ep + "    api_key: '" + key + "'\n",
		ep + "    api_key: [" + key + "]\n",
		ep + "    api_key: {k: " + key + "}\n",
		ep + "    api_key:\n      - " + key + "\n",
		ep + "    api_key: |\n      " + key + "\n",
		ep + "    api_key: >-\n      sk-proj\n      " + key + "\n",
		ep + "    api_key: \"sk-proj\n      " + key + "\"\n",
		ep + "    api_key: &k " + key + "\n",
		ep + "    api_key: " + key + " # my key\n",
		"endpoints:\n  - {base_url: ftp://h/v1, model: m, api_key: " + key + "}\n",
		"endpoints:\n  - {model: m, api_key: " + key + ", base_url: ftp://h}\n",
		"endpoints:\n  - {api_key: " + key + ", model: [}\n",
		"endpoints:\n  - {api_key: \"" + key + "\", model: \"unclosed}\n",
		"endpoints:\n  - api_key: " + key + "\n    api_key: " + key + "\n",
		"endpoints:\n  - api_key: " + key + "\n    model: m\n    bogus: 1\n",
		"endpoints:\n  - api_key: " + key + ": x\n",
		"endpoints:\n  - api_key: " + key + "\n  bad indentation\n",
		"endpoints:\n  - api_key: \"" + key + "\\q\"\n",
		"endpoints:\n  - api_key: " + key + "\n  - api_key: " + key + "\n",
		"endpoints:\n  - model: m\n    api_key: " + key + "\n    base_url: http://h/v1\n",
		ep + "    headers:\n      Authorization: Bearer " + key + "\n",
		ep + "    headers: {X-Api-Key: " + key + ", X-Bad: [1]}\n",
		ep + "    headers: {X-Bad: [1], api-key: " + key + "}\n",
		"endpoints:\n  - base_url: https://user:" + key + "@h/v1\n    model: m\n",
		"endpoints:\n  - base_url: https://" + key + "@h/v1\n    model: m\n",
		"\xff" + ep + "    api_key: " + key + "\n",
		ep + "    api_key: " + key + "\xff\n",
	}
	for _, src := range srcs {
		_, err := Parse("c.yaml", []byte(src))
		if err == nil {
			t.Errorf("accepted:\n%s", src)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("the key leaks into the error:\n%v\nsource:\n%s", err, src)
		}
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(ep), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(good)
	if err != nil || c.File != good || len(c.Endpoints) != 1 {
		t.Fatalf("Load = %+v, %v", c, err)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(ep+"    max_tokens: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	if err == nil || !strings.HasPrefix(err.Error(), bad+":4:17: max_tokens must be at least 1") {
		t.Errorf("Load(bad) = %v", err)
	}

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "no such file") || ce.File == "" {
		t.Errorf("Load(missing) = %v", err)
	}

	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(ep+"# "+strings.Repeat("x", MaxFileSize)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Load(big) = %v", err)
	}
}

func TestSnippet(t *testing.T) {
	lines := []string{"a: 1", "\tb: x", "c: sk-secret-value"}
	for _, tt := range []struct {
		line, col int
		secrets   []secretSpan
		want      string
	}{
		{1, 4, nil, "  1 | a: 1\n    |    ^"},
		{2, 5, nil, "  2 | \tb: x\n    | \t   ^"}, // the tab is kept so the caret lines up
		{3, 4, []secretSpan{{line: 3, col: 4, endLine: 3}}, "  3 | c: <redacted>\n    |    ^"},
		{3, 1, []secretSpan{{line: 2, col: 5, endLine: 3}}, "  3 | <redacted>\n    | ^"},
		{9, 1, nil, ""},
	} {
		if got := snippet(lines, tt.line, tt.col, tt.secrets); got != tt.want {
			t.Errorf("snippet(%d:%d) =\n%s\nwant\n%s", tt.line, tt.col, got, tt.want)
		}
	}
}

// TestEnvRefShown: a ${VAR} reference is not a secret, and hiding it would hide the mistake.
func TestEnvRefShown(t *testing.T) {
	testEnv(t)
	for _, src := range []string{
		ep + "    api_key: ${" + unsetVar + "}\n",
		"endpoints:\n  - {base_url: http://h/v1, model: m, api_key: \"${" + unsetVar + "}\"}\n",
		ep + "    headers: {Authorization: \"Bearer ${" + unsetVar + "}\"}\n",
	} {
		_, err := Parse("c.yaml", []byte(src))
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(ce.Snippet, "${"+unsetVar+"}") {
			t.Errorf("snippet hides the reference: %v", err)
		}
	}
}

// TestParseWorkload: the workload keys under defaults: and per endpoint, the relative prompts
// path, and the rule that a more specific level's choice of prompt source (prompt,
// input_tokens, prompts) or output length (max_tokens, output_tokens) replaces the other's.
func TestParseWorkload(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.jsonl"), []byte(`{"prompt":"hi"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := `defaults:
  input_tokens: "512:64"
  output_tokens: 128
  cache: reuse
endpoints:
  - {name: synthetic, base_url: http://h/v1, model: m}
  - {name: fixed, base_url: http://h/v1, model: m, prompt: "Count.", max_tokens: 9, cache: bust}
  - {name: file, base_url: http://h/v1, model: m, prompts: p.jsonl}
  - {name: plain-n, base_url: http://h/v1, model: m, input_tokens: 1000}
`
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Prompt         string
		In, Out        TokenLength
		MaxTok         int
		Prompts, Cache string
	}
	want := map[string]got{
		"synthetic": {DefaultPrompt, TokenLength{512, 64}, TokenLength{128, 0}, DefaultMaxTokens, "", CacheReuse},
		"fixed":     {"Count.", TokenLength{}, TokenLength{}, 9, "", CacheBust},
		"file":      {DefaultPrompt, TokenLength{}, TokenLength{128, 0}, DefaultMaxTokens, filepath.Join(dir, "p.jsonl"), CacheReuse},
		"plain-n":   {DefaultPrompt, TokenLength{1000, 0}, TokenLength{128, 0}, DefaultMaxTokens, "", CacheReuse},
	}
	for _, e := range c.Endpoints {
		g := got{e.Prompt, e.InputTokens, e.OutputTokens, e.MaxTokens, e.Prompts, e.Cache}
		if g != want[e.Name] {
			t.Errorf("%s = %+v, want %+v", e.Name, g, want[e.Name])
		}
	}
}

func TestParseTokenLength(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want TokenLength
		ok   bool
	}{
		{"512", TokenLength{512, 0}, true},
		{" 512 : 64 ", TokenLength{512, 64}, true},
		{"1:0.5", TokenLength{1, 0.5}, true},
		{"1048576", TokenLength{MaxLengthTokens, 0}, true},
		{"1048577", TokenLength{}, false},
		{"0", TokenLength{}, false},
		{"-5", TokenLength{}, false},
		{"5:", TokenLength{}, false},
		{":5", TokenLength{}, false},
		{"5:-1", TokenLength{}, false},
		{"5:NaN", TokenLength{}, false},
		{"5:Inf", TokenLength{}, false},
		{"5.5", TokenLength{}, false},
		{"5:1:2", TokenLength{}, false},
		{"", TokenLength{}, false},
	} {
		got, err := ParseTokenLength(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseTokenLength(%q) = %+v, %v; want %+v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err == nil && got.String() != strings.ReplaceAll(strings.TrimSpace(tt.in), " ", "") {
			t.Errorf("String() = %q, want the input back", got.String())
		}
	}
}

// LineError (prompts and trace files report through it): file:line:col and the line under a
// caret; a long line (a prompt) is shown only around the column, the caret still under it.
func TestLineError(t *testing.T) {
	e := LineError("p.jsonl", 3, 6, `{"a": 1, "promt": 2}`, UnknownKey("promt", []string{"prompt"}))
	want := "p.jsonl:3:6: unknown key \"promt\"; did you mean \"prompt\"?\n  3 | {\"a\": 1, \"promt\": 2}\n    |      ^"
	if e.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", e, want)
	}
	long := `{"prompt": "` + strings.Repeat("x", 5000) + `", "max_token": 5}`
	col := strings.Index(long, `"max_token"`) + 1
	e = LineError("p.jsonl", 1, col, long, "m")
	lines := strings.Split(e.Snippet, "\n")
	if len(lines) != 2 || len([]rune(lines[0])) > 110 {
		t.Fatalf("snippet of a long line: %q", e.Snippet)
	}
	caret := len([]rune(lines[1])) - 1
	if r := []rune(lines[0]); caret >= len(r) || !strings.HasPrefix(string(r[caret:]), `"max_token"`) {
		t.Errorf("caret at %d not under the key: %q", caret, e.Snippet)
	}
}
