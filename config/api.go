package config

import (
	"fmt"
	"strings"
)

// APIs lists the wire protocols an endpoint may speak (Endpoint.API, api:, --api), the
// default first.
var APIs = []string{APIChat, APICompletions, APIResponses, APIAnthropic, APIOllama}

// DefaultAPI is the OpenAI chat completions API.
const DefaultAPI = APIChat

// DefaultAnthropicKeyEnv is where a --url endpoint speaking the Anthropic API reads its key
// unless --api-key-env names another variable.
const DefaultAnthropicKeyEnv = "ANTHROPIC_API_KEY"

// DefaultKeyEnv is the variable a --url endpoint reads its key from when --api-key-env is not
// given: ANTHROPIC_API_KEY for the Anthropic API, OPENAI_API_KEY for the others.
func DefaultKeyEnv(api string) string {
	if api == APIAnthropic {
		return DefaultAnthropicKeyEnv
	}
	return DefaultAPIKeyEnv
}

// ParseAPI checks an API name; the error lists the valid ones, without naming a flag or key.
func ParseAPI(s string) (string, error) {
	if checkAPI(s) != "" {
		return "", fmt.Errorf("must be one of %s", strings.Join(APIs, ", "))
	}
	return s, nil
}

func checkAPI(s string) string {
	for _, a := range APIs {
		if s == a {
			return ""
		}
	}
	return fmt.Sprintf("api must be one of %s, got %q", strings.Join(APIs, ", "), s)
}
