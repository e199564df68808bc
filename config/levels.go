package config

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// The levels of a config file: defaults: and each endpoint, decoded into a Partial each, then
// laid over the built-in defaults by Endpoint.apply.

// level is one level being decoded: its settings, and the keys of exclusive groups it gave
// (with their place, for "not both" messages).
type level struct {
	Partial
	chose map[string]entry
}

// settingDecoder decodes one key shared by defaults: and the endpoints into p.
type settingDecoder func(l *loader, p *Partial, e entry) *Error

var settingDecoders = map[string]settingDecoder{
	"prompt":        func(l *loader, p *Partial, e entry) *Error { return some(&p.Prompt)(l.text(e, checkPrompt)) },
	"max_tokens":    (*loader).maxTokens,
	"concurrency":   func(l *loader, p *Partial, e entry) *Error { return put(&p.Concurrency)(l.integer(e, MaxConcurrency)) },
	"interval":      func(l *loader, p *Partial, e entry) *Error { return put(&p.Interval)(l.duration(e, true)) },
	"timeout":       func(l *loader, p *Partial, e entry) *Error { return put(&p.Timeout)(l.duration(e, false)) },
	"stall":         func(l *loader, p *Partial, e entry) *Error { return put(&p.Stall)(l.duration(e, false)) },
	"input_tokens":  func(l *loader, p *Partial, e entry) *Error { return choice(&p.InputTokens)(l.tokenLength(e)) },
	"output_tokens": func(l *loader, p *Partial, e entry) *Error { return choice(&p.OutputTokens)(l.tokenLength(e)) },
	"prompts":       func(l *loader, p *Partial, e entry) *Error { return put(&p.Prompts)(l.promptsFile(e)) },
	"cache":         (*loader).cache,
	"api":           func(l *loader, p *Partial, e entry) *Error { return some(&p.API)(l.text(e, checkAPI)) },
	"gpu_metrics":   func(l *loader, p *Partial, e entry) *Error { return some(&p.GPUMetrics)(l.text(e, CheckGPUMetrics)) },
	"headers":       func(l *loader, p *Partial, e entry) *Error { return always(&p.Headers)(l.headers(e)) },
	"slo":           func(l *loader, p *Partial, e entry) *Error { return always(&p.SLO)(l.slo(e)) },
	"price":         func(l *loader, p *Partial, e entry) *Error { return always(&p.Price)(l.price(e)) },
	"extra_body":    func(l *loader, p *Partial, e entry) *Error { return always(&p.ExtraBody)(l.extraBody(e)) },
}

// put stores a decoded value that was given (ok); an empty value is not given.
func put[T any](dst **T) func(T, bool, *Error) *Error {
	return func(v T, ok bool, err *Error) *Error {
		if err == nil && ok {
			*dst = &v
		}
		return err
	}
}

// some stores a decoded value that is never empty (the decoder refuses an empty one).
func some[T any](dst **T) func(T, *Error) *Error {
	return func(v T, err *Error) *Error {
		if err == nil {
			*dst = &v
		}
		return err
	}
}

// choice stores a length even when the value is empty: the key still chooses (no length), so
// it drops the choice of the levels below.
func choice(dst **TokenLength) func(TokenLength, bool, *Error) *Error {
	return func(v TokenLength, _ bool, err *Error) *Error {
		if err == nil {
			*dst = &v
		}
		return err
	}
}

// always stores what a decoder that reports only errors returned.
func always[T any](dst *T) func(T, *Error) *Error {
	return func(v T, err *Error) *Error {
		if err == nil {
			*dst = v
		}
		return err
	}
}

// setting decodes one of the keys shared with defaults:; known is false for any other key.
// A second key of an exclusive group (prompt source, output length) is refused first.
func (l *loader) setting(lv *level, e entry) (known bool, err *Error) {
	decode, known := settingDecoders[e.key]
	if !known {
		return false, nil
	}
	given := func(k string) bool { _, ok := lv.chose[k]; return ok }
	if first, group := rival(e.key, given); first != "" {
		line, _ := posOf(lv.chose[first].keyNode)
		return true, l.errNode(e.keyNode, "give one of %s, not both %s (line %d) and %s", strings.Join(group, ", "), first, line, e.key)
	}
	if isExclusive(e.key) {
		if lv.chose == nil {
			lv.chose = make(map[string]entry)
		}
		lv.chose[e.key] = e
	}
	return true, decode(l, &lv.Partial, e)
}

func (l *loader) maxTokens(p *Partial, e entry) *Error {
	v, ok, err := l.integer(e, 0)
	if err == nil && !ok {
		// An empty max_tokens: keeps the max_tokens of the levels below but still chooses the
		// output length: output_tokens of the levels below no longer applies.
		p.OutputTokens = &TokenLength{}
	}
	return put(&p.MaxTokens)(v, ok, err)
}

func (l *loader) cache(p *Partial, e entry) *Error {
	v, ok, err := l.str(e)
	if err != nil {
		return err
	}
	if msg := checkCache(v); msg != "" || !ok {
		return l.errValue(e, "cache must be %s (the default: every prompt starts with a unique tag) or %s (prompts as they are)",
			CacheBust, CacheReuse)
	}
	p.Cache = &v
	return nil
}

func (l *loader) extraBody(e entry) (map[string]any, *Error) {
	es, err := l.entries(e.value, "extra_body", 0)
	if err != nil {
		return nil, err
	}
	budget := maxExtraBodyNodes
	body := make(map[string]any, len(es))
	for _, be := range es {
		if msg := checkExtraBodyKey(be.key); msg != "" {
			return nil, l.errNode(be.keyNode, "%s", msg)
		}
		v, err := l.jsonValue(be.value, 0, &budget)
		if err != nil {
			return nil, err
		}
		body[be.key] = v
	}
	return body, nil
}

// --- document structure --------------------------------------------------------------------

func (l *loader) config(f *ast.File) (*Config, *Error) {
	var docs []*ast.DocumentNode
	for _, d := range f.Docs {
		if d != nil && !isNull(d.Body) {
			docs = append(docs, d)
		}
	}
	if len(docs) == 0 {
		return nil, l.errAt(1, 1, "config is empty: it needs an endpoints: list, each with base_url and model")
	}
	if len(docs) > 1 {
		return nil, l.errNode(docs[1], "a config holds one YAML document; found a second one")
	}
	if err := l.registerAnchors(docs[0]); err != nil {
		return nil, err
	}
	top, err := l.entries(docs[0].Body, "the config", 0)
	if err != nil {
		return nil, err
	}
	var defaults level
	var endpointsEntry *entry
	var grace *time.Duration
	var trace, sessions, sessionStart *string
	var watch *Watch
	var tiers []Tier
	for i, e := range top {
		switch e.key {
		case "watch":
			watch, err = l.watch(e)
		case "grace":
			err = put(&grace)(l.duration(e, true))
		case "trace":
			err = put(&trace)(l.traceFile(e))
		case "tiers":
			tiers, err = l.tiers(e)
		case "sessions":
			err = put(&sessions)(l.sessionsSpec(e))
		case "session_start":
			err = put(&sessionStart)(l.sessionStart(e))
		case "defaults":
			err = l.defaults(&defaults, e)
		case "endpoints":
			endpointsEntry = &top[i]
		default:
			err = l.errNode(e.keyNode, "%s", unknownKey(e.key, topKeys))
		}
		if err != nil {
			return nil, err
		}
	}
	if endpointsEntry == nil && watch == nil {
		return nil, l.errNode(docs[0], "no endpoints: add an endpoints: list, each with base_url and model")
	}
	var eps []Endpoint
	if endpointsEntry != nil {
		if eps, err = l.endpoints(*endpointsEntry, &defaults.Partial); err != nil {
			return nil, err
		}
	}
	c := &Config{File: l.file, Endpoints: eps, Grace: grace, Watch: watch, Tiers: tiers}
	if trace != nil {
		c.Trace = *trace
	}
	if sessions != nil {
		c.Sessions = *sessions
	}
	if sessionStart != nil {
		c.SessionStart = *sessionStart
	}
	return c, nil
}

func (l *loader) defaults(lv *level, e entry) *Error {
	es, err := l.entries(e.value, "defaults", 0)
	if err != nil {
		return err
	}
	for _, se := range es {
		known, err := l.setting(lv, se)
		if err != nil {
			return err
		}
		if !known {
			return l.errNode(se.keyNode, "defaults: %s", unknownKey(se.key, settingKeys))
		}
	}
	return nil
}

func (l *loader) endpoints(e entry, defaults *Partial) ([]Endpoint, *Error) {
	r, err := l.resolve(e.value)
	if err != nil {
		return nil, err
	}
	if isNull(r) {
		return nil, l.errValue(e, "endpoints is empty: list at least one, with base_url and model")
	}
	seq, ok := r.(*ast.SequenceNode)
	if !ok {
		return nil, l.errValue(e, "endpoints must be a list (- base_url: ...), got %s", kindOf(r))
	}
	if len(seq.Values) == 0 {
		return nil, l.errValue(e, "endpoints is empty: list at least one, with base_url and model")
	}
	eps := make([]Endpoint, 0, len(seq.Values))
	nameNodes := make(map[string]ast.Node)
	for i, item := range seq.Values {
		ep, nameNode, err := l.endpoint(i+1, item, defaults)
		if err != nil {
			return nil, err
		}
		if ep.Name != "" {
			if first, dup := nameNodes[ep.Name]; dup {
				line, _ := posOf(first)
				return nil, l.errNode(nameNode, "duplicate endpoint name %q (first used on line %d)", ep.Name, line)
			}
			nameNodes[ep.Name] = nameNode
		}
		eps = append(eps, ep)
	}
	assignNames(eps)
	return eps, nil
}

// endpointDecoding is one endpoint item being decoded.
type endpointDecoding struct {
	what             string // "endpoint 2"
	ep               Endpoint
	own              level
	nameNode         ast.Node
	hasURL, hasModel bool
	keyEntry         *entry // api_key or api_key_env, whichever came first
}

func (l *loader) endpoint(idx int, item ast.Node, defaults *Partial) (Endpoint, ast.Node, *Error) {
	r, err := l.resolve(item)
	if err != nil {
		return Endpoint{}, nil, err
	}
	if isNull(r) {
		return Endpoint{}, nil, l.errNode(item, "endpoint %d is empty: it needs base_url and model", idx)
	}
	d := endpointDecoding{what: fmt.Sprintf("endpoint %d", idx), ep: NewEndpoint("", "")}
	es, err := l.entries(item, d.what, 0)
	if err != nil {
		return Endpoint{}, nil, err
	}
	for i := range es {
		if err := l.endpointEntry(&d, &es[i]); err != nil {
			return Endpoint{}, nil, err
		}
	}
	if !d.hasURL {
		return Endpoint{}, nil, l.errNode(item, "%s has no base_url (e.g. base_url: http://127.0.0.1:8080/v1)", d.what)
	}
	if !d.hasModel {
		return Endpoint{}, nil, l.errNode(item, "%s has no model", d.what)
	}
	d.ep.apply(defaults)
	d.ep.apply(&d.own.Partial)
	return d.ep, d.nameNode, nil
}

// endpointEntry decodes one key of an endpoint: its own keys, else a shared setting.
func (l *loader) endpointEntry(d *endpointDecoding, e *entry) *Error {
	var err *Error
	switch e.key {
	case "name":
		d.ep.Name, err = l.text(*e, func(s string) string { return checkText("name", s) })
		d.nameNode = e.value
	case "base_url":
		d.ep.BaseURL, err = l.text(*e, checkBaseURL)
		d.hasURL = true
	case "model":
		d.ep.Model, err = l.text(*e, func(s string) string { return checkText("model", s) })
		d.hasModel = true
	case "api_key_env", "api_key":
		if d.keyEntry != nil {
			return l.errNode(e.keyNode, "give either api_key or api_key_env, not both")
		}
		d.keyEntry = e
		d.ep.APIKeyEnv, err = l.keySource(*e)
	case "insecure_skip_verify":
		d.ep.InsecureSkipVerify, _, err = l.boolean(*e)
	default:
		known, serr := l.setting(&d.own, *e)
		if serr == nil && !known {
			serr = l.errNode(e.keyNode, "%s: %s", d.what, unknownKey(e.key, endpointKeys))
		}
		err = serr
	}
	return err
}

// text reads a string key that must pass check (an empty value is checked as "").
func (l *loader) text(e entry, check func(string) string) (string, *Error) {
	s, _, err := l.str(e)
	if err != nil {
		return "", err
	}
	if msg := check(s); msg != "" {
		return "", l.errValue(e, "%s", msg)
	}
	return s, nil
}

// keySource checks api_key_env: NAME or api_key: ${NAME} and returns NAME. A literal key is
// refused and never echoed.
func (l *loader) keySource(e entry) (string, *Error) {
	r, err := l.resolve(e.value)
	if err != nil {
		return "", err
	}
	if isNull(r) {
		return "", nil
	}
	s, isText := scalarText(r)
	var name string
	if e.key == "api_key" {
		m := envRefRE.FindStringSubmatch(strings.TrimSpace(s))
		if !isText || m == nil {
			return "", l.errValue(e, "api_key holds a literal key (value redacted); tokscope reads keys only from the "+
				"environment: export it and write api_key: ${MY_KEY} or api_key_env: MY_KEY")
		}
		name = m[1]
	} else {
		if !isText {
			return "", l.errValue(e, "api_key_env must be an environment variable name, got %s", kindOf(r))
		}
		if msg := checkEnvName("api_key_env", s); msg != "" {
			return "", l.errValue(e, "%s", msg)
		}
		name = s
	}
	if _, set := os.LookupEnv(name); !set {
		return "", l.errValue(e, "environment variable %s (%s) is not set", name, e.key)
	}
	return name, nil
}

// tokenLength reads N (a YAML integer) or "N:SD".
func (l *loader) tokenLength(e entry) (TokenLength, bool, *Error) {
	r, err := l.resolve(e.value)
	if err != nil || isNull(r) {
		return TokenLength{}, false, err
	}
	var text string
	switch r.(type) {
	case *ast.IntegerNode, *ast.StringNode:
		text, _ = scalarText(r)
	default:
		return TokenLength{}, false, l.errValue(e, "%s must be N or \"N:SD\" tokens, e.g. 512 or \"512:64\", got %s", e.key, kindOf(r))
	}
	v, perr := ParseTokenLength(text)
	if perr != nil {
		return TokenLength{}, false, l.errValue(e, "%s %s", e.key, perr)
	}
	return v, true, nil
}

// promptsFile reads a prompts: path; a relative one is relative to the config file's
// directory. The file must exist now: its lines are read before anything is sent.
func (l *loader) promptsFile(e entry) (string, bool, *Error) {
	v, err := l.text(e, func(s string) string {
		if msg := checkText("prompts", s); msg != "" {
			return msg + " (a JSONL or ShareGPT JSON file)"
		}
		return ""
	})
	if err != nil {
		return "", false, err
	}
	if !filepath.IsAbs(v) && l.file != "" {
		v = filepath.Join(filepath.Dir(l.file), v)
	}
	if msg := checkPromptsFile(v); msg != "" {
		return "", false, l.errValue(e, "%s", msg)
	}
	return v, true, nil
}

func (l *loader) headers(e entry) (map[string]string, *Error) {
	es, err := l.entries(e.value, "headers", 0)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(es))
	for _, he := range es {
		if msg := checkHeaderName(he.key); msg != "" {
			return nil, l.errNode(he.keyNode, "%s", msg)
		}
		name := canonicalHeader(he.key)
		if _, dup := out[name]; dup {
			return nil, l.errNode(he.keyNode, "header %q is given twice (header names ignore case)", name)
		}
		r, err := l.resolve(he.value)
		if err != nil {
			return nil, err
		}
		v := ""
		if !isNull(r) {
			s, ok := scalarText(r)
			if !ok {
				return nil, l.errValue(he, "header %q must be a string, got %s", name, kindOf(r))
			}
			v = s
		}
		if msg := checkHeaderValue(name, v); msg != "" {
			return nil, l.errValue(he, "%s", msg)
		}
		refs, _ := envRefs(v)
		for _, ref := range refs {
			if _, set := os.LookupEnv(ref); !set {
				return nil, l.errValue(he, "header %q: environment variable %s is not set", name, ref)
			}
		}
		out[name] = v
	}
	return out, nil
}

// jsonValue converts an extra_body value to what encoding/json marshals as the same JSON.
func (l *loader) jsonValue(n ast.Node, depth int, budget *int) (any, *Error) {
	*budget--
	if *budget < 0 {
		return nil, l.errNode(n, "extra_body is too large (more than %d values)", maxExtraBodyNodes)
	}
	if depth > maxNesting {
		return nil, l.errNode(n, "extra_body nests too deeply")
	}
	r, err := l.resolve(n)
	if err != nil {
		return nil, err
	}
	switch t := r.(type) {
	case nil, *ast.NullNode:
		return nil, nil
	case *ast.BoolNode:
		return t.Value, nil
	case *ast.IntegerNode:
		return t.Value, nil
	case *ast.FloatNode:
		if math.IsInf(t.Value, 0) || math.IsNaN(t.Value) {
			return nil, l.errNode(n, "extra_body: %s does not fit in a JSON number", t.GetToken().Value)
		}
		return t.Value, nil
	case *ast.InfinityNode, *ast.NanNode:
		return nil, l.errNode(n, "extra_body: JSON has no infinity or NaN")
	case *ast.StringNode, *ast.LiteralNode:
		s, _ := scalarText(r)
		return s, nil
	case *ast.SequenceNode:
		list := make([]any, 0, len(t.Values))
		for _, v := range t.Values {
			x, err := l.jsonValue(v, depth+1, budget)
			if err != nil {
				return nil, err
			}
			list = append(list, x)
		}
		return list, nil
	case *ast.MappingNode, *ast.MappingValueNode:
		es, err := l.entries(r, "extra_body", depth+1)
		if err != nil {
			return nil, err
		}
		m := make(map[string]any, len(es))
		for _, e := range es {
			x, err := l.jsonValue(e.value, depth+1, budget)
			if err != nil {
				return nil, err
			}
			m[e.key] = x
		}
		return m, nil
	}
	return nil, l.errNode(n, "extra_body: %s cannot be sent as JSON", kindOf(r))
}
