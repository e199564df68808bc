package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"tokscope/config"
	"tokscope/export"
	"tokscope/redact"
)

// Settings describes a run for the report's settings table: the command line, the config
// file, and each endpoint as configured. Nothing secret is shown: no key (tokscope never
// holds one in its configuration, only the name of the variable), no header value, no user
// info or query string of a URL; long values are shortened.
func Settings(args []string, cfg *config.Config) []Setting {
	out := []Setting{{"command line", CommandLine(args)}}
	if cfg == nil {
		return out
	}
	if cfg.File != "" {
		out = append(out, Setting{"config file", cfg.File})
	}
	for _, ep := range cfg.Endpoints {
		out = append(out, Setting{"endpoint " + ep.Name, endpointSetting(ep)})
	}
	return out
}

// CommandLine is args as one line, URLs without user info or query, long values shortened.
func CommandLine(args []string) string {
	parts := []string{"tokscope"}
	for _, a := range args {
		name, value, isFlag := strings.Cut(a, "=")
		if isFlag && strings.HasPrefix(name, "-") {
			parts = append(parts, name+"="+shellQuote(shorten(redact.URL(value))))
			continue
		}
		parts = append(parts, shellQuote(shorten(redact.URL(a))))
	}
	return strings.Join(parts, " ")
}

func endpointSetting(ep config.Endpoint) string {
	parts := []string{redact.URL(ep.BaseURL), "model " + ep.Model}
	if l := export.APILabel(ep.API); l != "" {
		parts = append(parts, l)
	}
	if ep.APIKeyEnv != "" {
		parts = append(parts, "key from $"+ep.APIKeyEnv)
	}
	parts = append(parts,
		fmt.Sprintf("concurrency %d", ep.Concurrency), fmt.Sprintf("max_tokens %d", ep.MaxTokens),
		"interval "+ep.Interval.String(), "timeout "+ep.Timeout.String(), "stall "+ep.Stall.String())
	if ep.InsecureSkipVerify {
		parts = append(parts, "TLS not verified")
	}
	if len(ep.Headers) > 0 {
		var names []string
		for k := range ep.Headers {
			names = append(names, k+": [redacted]")
		}
		slices.Sort(names)
		parts = append(parts, "headers "+strings.Join(names, ", "))
	}
	if len(ep.ExtraBody) > 0 {
		b, err := json.Marshal(ep.ExtraBody)
		if err == nil {
			parts = append(parts, "extra_body "+shorten(string(b)))
		}
	}
	if ep.Prompt != "" {
		parts = append(parts, "prompt "+shellQuote(shorten(ep.Prompt)))
	}
	return strings.Join(parts, " · ")
}

// shorten keeps the first 120 characters of a long value.
func shorten(s string) string {
	if r := []rune(s); len(r) > 120 {
		return string(r[:120]) + "…"
	}
	return s
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`|&;<>()*?![]{}#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
