package config

import (
	"slices"
	"time"
)

// Partial is one level of an endpoint's settings: the file's defaults:, one endpoint's own
// keys, or the command line (Overrides). A nil field is not given at that level. Every level
// is laid over the ones below it by the same merge (apply): built-in defaults, defaults:, the
// endpoint, the flags.
type Partial struct {
	// The prompt source: one level gives at most one of Prompt, InputTokens and Prompts, and a
	// level that gives one replaces the choice of the levels below (an endpoint's prompt: wins
	// over input_tokens: in defaults:). A zero TokenLength given is a choice of "none".
	Prompt      *string
	InputTokens *TokenLength
	Prompts     *string
	// The output length: likewise at most one of MaxTokens and OutputTokens.
	MaxTokens    *int
	OutputTokens *TokenLength

	Cache       *string
	API         *string
	Concurrency *int
	Interval    *time.Duration
	Timeout     *time.Duration
	Stall       *time.Duration
	GPUMetrics  *string // a dcgm-exporter /metrics URL (gpu_metrics:, --gpu-metrics)

	// Conversations (convo.go).
	Turns        *int
	ThinkTime    *ThinkTime
	SharedPrefix *int

	SLO       *SLO              // laid over the levels below key by key
	Price     *Price            // replaces the levels below whole
	Headers   map[string]string // merged key by key (canonical names), this level's keys winning
	ExtraBody map[string]any    // merged key by key, this level's keys winning
}

// Overrides is the command line's level: the flags that replace the file's values on every
// endpoint (Config.Apply).
type Overrides = Partial

// exclusive are the groups of keys of which one level gives at most one (flags are these
// names with - for _): the prompt source and the output length.
var exclusive = [][]string{promptSourceKeys, outputLengthKeys}

var (
	promptSourceKeys = []string{"prompt", "input_tokens", "prompts"}
	outputLengthKeys = []string{"max_tokens", "output_tokens"}
)

// rival returns the key of key's exclusive group that given already holds, and the group
// ("", nil when there is none): the rule that one level gives at most one of each group.
func rival(key string, given func(string) bool) (string, []string) {
	for _, group := range exclusive {
		if !slices.Contains(group, key) {
			continue
		}
		for _, k := range group {
			if given(k) {
				return k, group
			}
		}
	}
	return "", nil
}

// Conflict returns the first two keys of one exclusive group that p gives, in the group's
// order, and the group; "" when p keeps the rule.
func (p *Partial) Conflict() (first, second string, group []string) {
	for _, g := range exclusive {
		var given []string
		for _, k := range g {
			if p.gives(k) {
				given = append(given, k)
			}
		}
		if len(given) > 1 {
			return given[0], given[1], g
		}
	}
	return "", "", nil
}

// gives reports whether p gives one of the exclusive keys.
func (p *Partial) gives(key string) bool {
	switch key {
	case "prompt":
		return p.Prompt != nil
	case "input_tokens":
		return p.InputTokens != nil
	case "prompts":
		return p.Prompts != nil
	case "max_tokens":
		return p.MaxTokens != nil
	case "output_tokens":
		return p.OutputTokens != nil
	}
	return false
}

func (p *Partial) givesAny(group []string) bool {
	return slices.ContainsFunc(group, p.gives)
}

// apply lays p over e: the one merge of every level.
func (e *Endpoint) apply(p *Partial) {
	if p.givesAny(promptSourceKeys) {
		e.InputTokens, e.Prompts = TokenLength{}, ""
	}
	set(&e.Prompt, p.Prompt)
	set(&e.InputTokens, p.InputTokens)
	set(&e.Prompts, p.Prompts)
	if p.givesAny(outputLengthKeys) {
		e.OutputTokens = TokenLength{}
	}
	set(&e.MaxTokens, p.MaxTokens)
	set(&e.OutputTokens, p.OutputTokens)
	set(&e.Cache, p.Cache)
	set(&e.API, p.API)
	set(&e.Concurrency, p.Concurrency)
	set(&e.Interval, p.Interval)
	set(&e.Timeout, p.Timeout)
	set(&e.Stall, p.Stall)
	set(&e.GPUMetrics, p.GPUMetrics)
	e.applyConvo(p)
	e.SLO = mergeSLO(e.SLO, p.SLO)
	if p.Price != nil {
		price := *p.Price
		e.Price = &price
	}
	for k, v := range p.Headers {
		if e.Headers == nil {
			e.Headers = make(map[string]string)
		}
		e.Headers[k] = v
	}
	for k, v := range p.ExtraBody {
		if e.ExtraBody == nil {
			e.ExtraBody = make(map[string]any)
		}
		e.ExtraBody[k] = deepCopy(v) // endpoints never share a map
	}
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		list := make([]any, len(t))
		for i, x := range t {
			list[i] = deepCopy(x)
		}
		return list
	}
	return v
}

// Apply lays the command line's level over every endpoint, after the file's. --slo replaces
// the objectives whole, where the file's levels merge them key by key. It does not check the
// values: call Validate afterwards so that --max-tokens 0 is reported like a bad file value.
func (c *Config) Apply(o Overrides) {
	for i := range c.Endpoints {
		e := &c.Endpoints[i]
		if o.SLO != nil {
			e.SLO = SLO{}
		}
		e.apply(&o)
	}
}

func isExclusive(key string) bool {
	for _, g := range exclusive {
		if slices.Contains(g, key) {
			return true
		}
	}
	return false
}
