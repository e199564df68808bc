package config

import (
	"strings"
	"testing"
)

// Why literal keys are refused: tokscope never stores a key in plain text — it reads keys
// from the environment at request time, so a config file can be shared, committed or pasted
// into a bug report. Every place a key could be written literally is an error that says so,
// says how to fix it (an environment variable), and never repeats the key, not even in the
// snippet of the offending line.
func TestLiteralKeysRefusedBecauseKeysLiveOnlyInTheEnvironment(t *testing.T) {
	const key = "sk-hardening-9f8e7d6c5b4a3210"
	head := "endpoints:\n  - base_url: http://127.0.0.1:8080/v1\n    model: m\n"
	cases := []struct{ name, src, why string }{
		{"api_key", head + "    api_key: " + key + "\n", "environment"},
		{"api_key quoted", head + "    api_key: \"" + key + "\"\n", "environment"},
		{"Authorization header", head + "    headers:\n      Authorization: Bearer " + key + "\n", "environment"},
		{"X-Api-Key header", head + "    headers: {X-Api-Key: " + key + "}\n", "environment"},
		{"api-key header in defaults", "defaults:\n  headers: {api-key: " + key + "}\n" + head, "environment"},
		{"password in base_url", "endpoints:\n  - base_url: http://user:" + key + "@127.0.0.1:8080/v1\n    model: m\n", "environment"},
		{"key in base_url query", "endpoints:\n  - base_url: http://127.0.0.1:8080/v1?api_key=" + key + "\n    model: m\n", "environment"},
		{"key in base_url query, flow style", "endpoints: [{base_url: \"http://127.0.0.1:8080/v1?key=" + key + "\", model: m}]\n", "environment"},
	}
	for _, c := range cases {
		_, err := Parse("keys.yaml", []byte(c.src))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.why) {
			t.Errorf("%s: the error does not say why: %s", c.name, msg)
		}
		for _, part := range []string{key, key[3:], key[:12], key[len(key)-12:]} {
			if strings.Contains(msg, part) {
				t.Errorf("%s: the error repeats the key (%q):\n%s", c.name, part, msg)
			}
		}
	}

	// The same rule for --url endpoints, checked by Validate.
	ep := NewEndpoint("http://127.0.0.1:8080/v1?api_key="+key, "m")
	err := (&Config{Endpoints: []Endpoint{ep}}).Validate()
	if err == nil || !strings.Contains(err.Error(), "--url") || strings.Contains(err.Error(), key[3:]) {
		t.Errorf("--url with a key in its query: %v", err)
	}
}
