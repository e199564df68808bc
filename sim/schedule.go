package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A schedule is a profile written as a model name, so that any client can ask the server
// for any timing without configuring it: "sim:ttft=200ms,tps=50,chunk=2,slots=4,500=0.1".
// Keys not given keep their zero value ("off"), except ttft and tps, whose defaults are
// ScheduleDefaultTTFT and ScheduleDefaultTPS. FormatSchedule writes a profile back in the same
// syntax (ttft and tps always), so ParseSchedule(FormatSchedule(p)) serves p's timing.

// SchedulePrefix starts every schedule model name.
const SchedulePrefix = "sim:"

// The timing of "sim:" with no keys.
const (
	ScheduleDefaultTTFT = 100 * time.Millisecond
	ScheduleDefaultTPS  = 100.0
)

// ScheduleSyntax is the one-line reminder every schedule error ends with.
const ScheduleSyntax = "a scheduled model is sim:KEY=VALUE,... (e.g. sim:ttft=200ms,tps=50,chunk=2,slots=4,500=0.1); see `tokscope sim --help`"

// scheduleKey is one key of the syntax: the Profile field it sets, what it accepts, and what
// it means (for `tokscope sim --help` and the docs).
type scheduleKey struct {
	name  string
	field func(p *Profile) any // *time.Duration, *float64, *int, *int64, *bool or *string
	lo    float64              // the smallest value (durations: in seconds)
	hi    float64              // the largest value
	help  string
	words []string // the values a *string key takes
}

// scheduleKeys are the keys, in the order FormatSchedule writes them.
var scheduleKeys = []scheduleKey{
	{"ttft", func(p *Profile) any { return &p.TTFT }, 0, 600, "time to first token (default 100ms)", nil},
	{"ttft-jitter", func(p *Profile) any { return &p.TTFTJitter }, 0, 600, "uniform ± jitter on the TTFT", nil},
	{"headers", func(p *Profile) any { return &p.HeadersDelay }, 0, 600, "delay before the response headers (part of the TTFT)", nil},
	{"tps", func(p *Profile) any { return &p.TokensPerSecond }, math.SmallestNonzeroFloat64, 1e6, "decode speed, tokens per second (default 100)", nil},
	{"jitter", func(p *Profile) any { return &p.Jitter }, 0, 1, "fractional jitter on each gap between chunks (0.1 = ±10%)", nil},
	{"chunk", func(p *Profile) any { return &p.TokensPerChunk }, 1, 4096, "tokens per streamed chunk (default 1)", nil},
	{"reasoning", func(p *Profile) any { return &p.ReasoningTokens }, 0, maxOutputTokens, "reasoning tokens before the answer", nil},
	{"max", func(p *Profile) any { return &p.MaxTokens }, 1, maxOutputTokens, "output tokens when the request sets no limit (default 256)", nil},
	{"role", func(p *Profile) any { return &p.RoleChunk }, 0, 1, "send a role-only first chunk after the headers", nil},
	{"keepalive", func(p *Profile) any { return &p.KeepAlive }, 0, 600, "keep-alive comment period while streaming", nil},
	{"slots", func(p *Profile) any { return &p.MaxRunning }, 0, 100000, "requests running at once; more wait first in, first out (0 = unlimited)", nil},
	{"batch", func(p *Profile) any { return &p.BatchSlowdown }, 0, 1e6, "slowdown per further running request (continuous batching)", nil},
	{"step", func(p *Profile) any { return &p.Step }, 0, 600, "decode-step clock: chunks leave on its boundaries", nil},
	{"prefill", func(p *Profile) any { return &p.PrefillTokensPerSecond }, 0, 1e9, "prefill speed, prompt tokens per second added to the TTFT (0 = free)", nil},
	{"cache", func(p *Profile) any { return &p.PrefixCache }, 0, 1, "prefix cache (vLLM automatic prefix caching)", nil},
	{"block", func(p *Profile) any { return &p.PrefixBlockTokens }, 1, 4096, "prefix cache block, tokens (default 16)", nil},
	{"kv", func(p *Profile) any { return &p.KVCacheTokens }, 1, 1 << 24, "KV-cache capacity, tokens (default 65536)", nil},
	{"429", func(p *Profile) any { return &p.Rate429 }, 0, 1, "share of requests answered 429", nil},
	{"retry-after", func(p *Profile) any { return &p.RetryAfter }, 0, 600, "Retry-After of a 429", nil},
	{"500", func(p *Profile) any { return &p.Rate500 }, 0, 1, "share of requests answered 500", nil},
	{"midstream", func(p *Profile) any { return &p.RateMidStreamError }, 0, 1, "share of streams that end in an error event", nil},
	{"cut", func(p *Profile) any { return &p.RateCut }, 0, 1, "share of streams cut (the connection drops)", nil},
	{"stall", func(p *Profile) any { return &p.RateStall }, 0, 1, "share of streams that stall forever", nil},
	{"timings", func(p *Profile) any { return &p.Timings }, 0, 1, "llama.cpp's per-request timings at the end of a stream", nil},
	{"vllm-metrics", func(p *Profile) any { return &p.VLLMMetrics }, 0, 1, "vLLM's per-request metrics when asked (include_metrics)", nil},
	{"no-metrics", func(p *Profile) any { return &p.NoMetrics }, 0, 1, "leave the model out of /metrics, as a hosted API", nil},
	{"seed", func(p *Profile) any { return &p.Seed }, math.MinInt64, math.MaxInt64, "seed of the jitter and fault draws (0 = a new one each start)", nil},
	{"tokenizer", func(p *Profile) any { return &p.Tokenizer }, 0, 0,
		"the prompt's tokens: words (one a word, the default) or cl100k_base (tokscope's offline tokenizer)", []string{TokenizerWords, TokenizerCl100k}},
}

// ScheduleKeys lists the keys of the syntax with what each means, in order: "ttft=DURATION:
// time to first token (default 100ms)".
func ScheduleKeys() []string {
	out := make([]string, len(scheduleKeys))
	for i, k := range scheduleKeys {
		out[i] = k.name + "=" + k.kind() + "  " + k.help
	}
	return out
}

func (k scheduleKey) kind() string {
	switch k.field(&Profile{}).(type) {
	case *time.Duration:
		return "DURATION"
	case *bool:
		return "BOOL"
	case *string:
		return "WORD"
	case *float64:
		return "NUMBER"
	}
	return "N"
}

// IsSchedule says whether a model name is written in the schedule syntax.
func IsSchedule(model string) bool { return strings.HasPrefix(model, SchedulePrefix) }

// ParseSchedule reads a schedule model name into a profile named and modelled after it. A
// boolean key alone ("cache") means true. The error names the key and what it accepts, and
// ends with ScheduleSyntax.
func ParseSchedule(model string) (Profile, error) {
	if !IsSchedule(model) {
		return Profile{}, fmt.Errorf("model %q is not a schedule; %s", model, ScheduleSyntax)
	}
	p := Profile{Name: model, Model: model, TTFT: ScheduleDefaultTTFT, TokensPerSecond: ScheduleDefaultTPS}
	seen := map[string]bool{}
	for _, item := range strings.Split(strings.TrimPrefix(model, SchedulePrefix), ",") {
		if item == "" {
			continue
		}
		name, value, hasValue := strings.Cut(item, "=")
		k, ok := findScheduleKey(name)
		if !ok {
			return Profile{}, fmt.Errorf("model %q: unknown key %q (keys: %s); %s", model, name, keyNames(), ScheduleSyntax)
		}
		if seen[name] {
			return Profile{}, fmt.Errorf("model %q: key %q given twice; %s", model, name, ScheduleSyntax)
		}
		seen[name] = true
		if err := k.set(&p, value, hasValue); err != nil {
			return Profile{}, fmt.Errorf("model %q: %s: %w; %s", model, name, err, ScheduleSyntax)
		}
	}
	if _, err := p.normalized(); err != nil {
		return Profile{}, fmt.Errorf("model %q: %w; %s", model, err, ScheduleSyntax)
	}
	return p, nil
}

func findScheduleKey(name string) (scheduleKey, bool) {
	for _, k := range scheduleKeys {
		if k.name == name {
			return k, true
		}
	}
	return scheduleKey{}, false
}

func keyNames() string {
	names := make([]string, len(scheduleKeys))
	for i, k := range scheduleKeys {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

// set parses value into k's field of p, within k's bounds.
func (k scheduleKey) set(p *Profile, value string, hasValue bool) error {
	field := k.field(p)
	if b, ok := field.(*bool); ok {
		if !hasValue {
			*b = true
			return nil
		}
		v, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("%q is not true or false (the key alone means true)", value)
		}
		*b = v
		return nil
	}
	if !hasValue {
		return fmt.Errorf("needs a value (%s=%s)", k.name, k.kind())
	}
	switch f := field.(type) {
	case *time.Duration:
		d, err := time.ParseDuration(value)
		if err != nil || d.Seconds() < k.lo || d.Seconds() > k.hi {
			return fmt.Errorf("%q is not a duration from %v to %v, like 200ms or 1.5s", value, secs(k.lo), secs(k.hi))
		}
		*f = d
	case *float64:
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || !(v >= k.lo && v <= k.hi) {
			return fmt.Errorf("%q is not a number %s", value, k.bounds())
		}
		*f = v
	case *int:
		v, err := strconv.Atoi(value)
		if err != nil || float64(v) < k.lo || float64(v) > k.hi {
			return fmt.Errorf("%q is not a whole number %s", value, k.bounds())
		}
		*f = v
	case *int64:
		v, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", value)
		}
		*f = v
	case *string:
		if !slices.Contains(k.words, value) {
			return fmt.Errorf("%q is not one of %s", value, strings.Join(k.words, ", "))
		}
		*f = value
	default:
		return errors.New("unsupported key") // a new Profile field type needs a case here
	}
	return nil
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func (k scheduleKey) bounds() string {
	if k.lo == math.SmallestNonzeroFloat64 {
		return fmt.Sprintf("> 0 and ≤ %g", k.hi)
	}
	return fmt.Sprintf("from %g to %g", k.lo, k.hi)
}

// FormatSchedule writes p's timing, chunking and faults in the schedule syntax: ttft and tps
// always, every other key when it is not zero (chunk when it is more than 1). Name, Model, API and the fields the syntax
// has no key for (GPU, connection closing, model load) are left out.
func FormatSchedule(p Profile) string {
	var b strings.Builder
	b.WriteString(SchedulePrefix)
	for _, k := range scheduleKeys {
		text := ""
		switch f := k.field(&p).(type) {
		case *time.Duration:
			if *f != 0 || k.name == "ttft" {
				text = f.String()
			}
		case *float64:
			if *f != 0 || k.name == "tps" {
				text = strconv.FormatFloat(*f, 'g', -1, 64)
			}
		case *int:
			if *f != 0 && (*f != 1 || k.name != "chunk") { // 1 token a chunk is chunk's default
				text = strconv.Itoa(*f)
			}
		case *int64:
			if *f != 0 {
				text = strconv.FormatInt(*f, 10)
			}
		case *bool:
			if *f {
				text = "-" // the key alone
			}
		case *string:
			if *f != "" && *f != k.words[0] { // the first is the default
				text = *f
			}
		}
		switch {
		case text == "":
			continue
		case b.Len() > len(SchedulePrefix):
			b.WriteByte(',')
		}
		b.WriteString(k.name)
		if text != "-" {
			b.WriteString("=" + text)
		}
	}
	return b.String()
}
