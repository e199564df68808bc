package config

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
)

// MaxConcurrency bounds streams in flight per endpoint: a typo of 10000 must not start ten
// thousand goroutines and connections against someone's server.
const MaxConcurrency = 1024

// The rules below are shared by the file loader (which adds the YAML position) and Validate
// (which names the field and its flag). Each returns "" when the value is acceptable.

const needScheme = "base_url must be an absolute http:// or https:// URL, e.g. http://127.0.0.1:8080/v1"

func checkBaseURL(s string) string {
	if s == "" {
		return "base_url is empty"
	}
	if !strings.Contains(s, "://") {
		// "127.0.0.1:8090/v1" fails url.Parse ("first path segment … colon") and
		// "localhost:8090/v1" parses with scheme "localhost": both lack a scheme. Not
		// assumed (a remote API needs https), but offered when it makes a valid URL.
		return needScheme + schemeHint(s)
	}
	u, err := url.Parse(s)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err // the *url.Error text repeats the URL
		}
		return "base_url is not a valid URL: " + err.Error()
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return needScheme
	}
	if u.User != nil {
		return "base_url must not hold credentials (user:password@); tokscope reads keys only from the environment (api_key_env)"
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		// Keys travel in query strings (?api_key=, ?key=) and the value would be shown in
		// summaries and errors; nor can it work: /chat/completions is appended to base_url.
		return "base_url must not have a query string or fragment (?…, #…); tokscope reads keys only from the environment (api_key_env)"
	}
	if u.Hostname() == "" {
		return "base_url has no host, e.g. http://127.0.0.1:8080/v1"
	}
	return ""
}

// schemeHint is "; did you mean http://s?" when s is a URL but for its scheme, else "".
func schemeHint(s string) string {
	lower := strings.ToLower(s)
	if strings.HasPrefix(lower, "http:") || strings.HasPrefix(lower, "https:") || strings.HasPrefix(s, "/") {
		return "" // a mistyped scheme ("http:/h") or no host: prepending would not fix it
	}
	guess := "http://" + s
	if checkBaseURL(guess) != "" {
		return ""
	}
	return "; did you mean " + guess + "?"
}

func checkText(field, s string) string {
	if strings.TrimSpace(s) == "" {
		return field + " is empty"
	}
	if strings.ContainsFunc(s, unicode.IsControl) {
		return field + " contains a control character"
	}
	return ""
}

// checkPrompt allows line breaks and tabs: prompts are often multi-line.
func checkPrompt(s string) string {
	if strings.TrimSpace(s) == "" {
		return "prompt is empty"
	}
	return ""
}

// checkPromptsFile checks that a prompts file can be opened; its lines are checked when the
// workload reads it.
func checkPromptsFile(path string) string {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Sprintf("prompts: cannot read %s: %v", path, err)
	case fi.IsDir():
		return fmt.Sprintf("prompts: %s is a directory, not a JSONL or ShareGPT JSON file", path)
	}
	return ""
}

func checkCount(field string, n, most int) string {
	if n < 1 {
		return fmt.Sprintf("%s must be at least 1, got %d", field, n)
	}
	if most > 0 && n > most {
		return fmt.Sprintf("%s must be at most %d, got %d", field, most, n)
	}
	return ""
}

func checkDuration(field string, d time.Duration, zeroOK bool) string {
	switch {
	case d < 0:
		return fmt.Sprintf("%s must not be negative, got %s", field, d)
	case d == 0 && !zeroOK:
		return field + " must be greater than 0"
	}
	return ""
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func checkEnvName(field, name string) string {
	if !envNameRE.MatchString(name) {
		return fmt.Sprintf("%s must be an environment variable name (letters, digits, _), got %q", field, name)
	}
	return ""
}

// checkHeaderName accepts an RFC 9110 token.
func checkHeaderName(name string) string {
	if name == "" {
		return "header name is empty"
	}
	for _, r := range name {
		if r > unicode.MaxASCII || !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return fmt.Sprintf("header name %q is not a valid HTTP header name", name)
		}
	}
	return ""
}

// sensitiveHeader reports whether a header carries credentials, so that its value must come
// from the environment. Lower-case or not, "X-Api-Key", "Authorization", "X-Auth-Token".
func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "api-key":
		return true
	}
	for _, part := range []string{"api-key", "api_key", "apikey", "secret", "password", "access-token", "auth-token"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return strings.HasSuffix(n, "-token") || strings.HasSuffix(n, "-key")
}

// checkHeaderValue checks a header value as written (before ${VAR} expansion). The value is
// never echoed: it may be a credential.
func checkHeaderValue(name, value string) string {
	if strings.ContainsAny(value, "\r\n\x00") {
		return fmt.Sprintf("header %q contains a line break or NUL", name)
	}
	refs, msg := envRefs(value)
	if msg != "" {
		return fmt.Sprintf("header %q: %s", name, msg)
	}
	if len(refs) == 0 && sensitiveHeader(name) && value != "" {
		return fmt.Sprintf("header %q holds a literal credential (value redacted); tokscope reads secrets only from "+
			"the environment: export it and write ${MY_TOKEN}, e.g. %q", name, "Bearer ${MY_TOKEN}")
	}
	return ""
}

// reservedBodyKeys are request fields tokscope sets itself: overriding them would make the
// measurement wrong (a non-streamed reply has no TTFT) or measure another model.
var reservedBodyKeys = map[string]bool{"model": true, "messages": true, "stream": true}

func checkExtraBodyKey(k string) string {
	if reservedBodyKeys[k] {
		return fmt.Sprintf("extra_body must not set %q: tokscope sets it", k)
	}
	return ""
}

// envRefs returns the variable names referenced as ${NAME} in s. A "$" not followed by "{"
// is literal text.
func envRefs(s string) (names []string, msg string) {
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) || s[i+1] != '{' {
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return nil, "unclosed ${ (write ${NAME})"
		}
		name := s[i+2 : i+2+end]
		if !envNameRE.MatchString(name) {
			return nil, fmt.Sprintf("${%s} is not an environment variable reference (write ${NAME})", name)
		}
		names = append(names, name)
		i += 2 + end
	}
	return names, ""
}

// expandEnv replaces every ${NAME} in s with lookup(NAME). s must have passed envRefs.
func expandEnv(s string, lookup func(string) string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) && s[i+1] == '{' {
			if end := strings.IndexByte(s[i+2:], '}'); end >= 0 {
				b.WriteString(lookup(s[i+2 : i+2+end]))
				i += 2 + end
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// HeaderValues returns the endpoint's extra headers with ${VAR} references expanded from the
// environment. Call it when building a request: the expanded values may be credentials and
// must not be stored, printed or recorded.
func (e Endpoint) HeaderValues() map[string]string {
	if len(e.Headers) == 0 {
		return nil
	}
	out := make(map[string]string, len(e.Headers))
	for k, v := range e.Headers {
		out[k] = expandEnv(v, os.Getenv)
	}
	return out
}

// NewEndpoint returns an endpoint for baseURL and model with every default filled in, for
// endpoints given on the command line. Name stays empty until Validate assigns host/model.
func NewEndpoint(baseURL, model string) Endpoint {
	return Endpoint{
		BaseURL:     baseURL,
		Model:       model,
		Prompt:      DefaultPrompt,
		MaxTokens:   DefaultMaxTokens,
		Concurrency: DefaultConcurrency,
		Interval:    DefaultInterval,
		Timeout:     DefaultTimeout,
		Stall:       DefaultStall,
		Cache:       DefaultCache,
		API:         DefaultAPI,
	}
}

// Validate gives every unnamed endpoint its default name (its model, or host:port/model, made unique) and the
// default cache mode when it has none, then checks every endpoint against the same rules as
// the file loader. Messages name the field and its flag, e.g. `endpoint "a": max_tokens
// (--max-tokens) must be at least 1, got 0`; there is no line:col. It does not require api_key_env to be set in the environment: a --url endpoint
// with the default OPENAI_API_KEY may well need no key.
func (c *Config) Validate() error {
	fail := func(format string, args ...any) error {
		return &Error{File: c.File, Msg: fmt.Sprintf(format, args...)}
	}
	if len(c.Endpoints) == 0 && c.Watch == nil { // a watch-only config has none (watch.go)
		return fail("no endpoints: give --url and --model, or a config file with an endpoints: list")
	}
	seen := make(map[string]int)
	for i, e := range c.Endpoints {
		if e.Name == "" {
			continue
		}
		if j, dup := seen[e.Name]; dup {
			return fail("endpoint %d: duplicate name %q (endpoint %d has it too)", i+1, e.Name, j+1)
		}
		seen[e.Name] = i
	}
	assignNames(c.Endpoints)
	for i := range c.Endpoints {
		if c.Endpoints[i].Cache == "" {
			c.Endpoints[i].Cache = DefaultCache // an Endpoint built without NewEndpoint
		}
		if c.Endpoints[i].API == "" {
			c.Endpoints[i].API = DefaultAPI
		}
	}
	for _, e := range c.Endpoints {
		if msg := checkEndpoint(e); msg != "" {
			return fail("endpoint %q: %s", e.Name, msg)
		}
	}
	return nil
}

func checkEndpoint(e Endpoint) string {
	withFlag := func(msg, flag string) string {
		if msg == "" || flag == "" {
			return msg
		}
		field, rest, _ := strings.Cut(msg, " ")
		return field + " (" + flag + ") " + rest
	}
	checks := []string{
		checkText("name", e.Name),
		withFlag(checkBaseURL(e.BaseURL), "--url"),
		withFlag(checkText("model", e.Model), "--model"),
		withFlag(checkPrompt(e.Prompt), "--prompt"),
		withFlag(checkCount("max_tokens", e.MaxTokens, 0), "--max-tokens"),
		withFlag(checkCount("concurrency", e.Concurrency, MaxConcurrency), "--concurrency"),
		withFlag(checkDuration("interval", e.Interval, true), "--interval"),
		withFlag(checkDuration("timeout", e.Timeout, false), "--timeout"),
		checkDuration("stall", e.Stall, false),
		checkSLO(e.SLO),
		withFlag(checkLength("input_tokens", e.InputTokens), "--input-tokens"),
		withFlag(checkLength("output_tokens", e.OutputTokens), "--output-tokens"),
		withFlag(checkCache(e.Cache), "--cache"),
		withFlag(checkAPI(e.API), "--api"),
	}
	if e.Price != nil {
		checks = append(checks, checkPrice(*e.Price))
	}
	if e.Prompts != "" {
		checks = append(checks, withFlag(checkText("prompts", e.Prompts), "--prompts"))
	}
	if e.APIKeyEnv != "" {
		checks = append(checks, withFlag(checkEnvName("api_key_env", e.APIKeyEnv), "--api-key-env"))
	}
	for _, k := range sortedKeys(e.Headers) {
		checks = append(checks, checkHeaderName(k), checkHeaderValue(k, e.Headers[k]))
	}
	for _, k := range sortedKeys(e.ExtraBody) {
		checks = append(checks, checkExtraBodyKey(k))
	}
	for _, msg := range checks {
		if msg != "" {
			return msg
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// canonicalHeader is the form headers are stored in, so that X-Foo in defaults and x-foo in
// an endpoint are one header.
func canonicalHeader(name string) string { return http.CanonicalHeaderKey(name) }
