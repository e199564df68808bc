package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// MaxFileSize bounds a config file; a larger one is certainly not a tokscope config.
const MaxFileSize = 1 << 20

// Limits on extra_body, which is copied into every request: they also stop alias "bombs"
// (an anchor referenced many times in nested lists) from exploding on conversion.
const (
	maxExtraBodyNodes = 10000
	maxNesting        = 64
)

var (
	settingKeys = []string{"prompt", "max_tokens", "interval", "timeout", "stall", "concurrency", "headers", "extra_body", "slo", "price",
		"input_tokens", "output_tokens", "prompts", "cache"}
	endpointKeys = append([]string{"name", "base_url", "model", "api_key_env", "api_key", "insecure_skip_verify"}, settingKeys...)
	topKeys      = []string{"defaults", "endpoints", "grace"}
)

// Load reads and strictly decodes the config file at path (see Parse).
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read config: " + pathErrText(err)}
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read config: " + pathErrText(err)}
	}
	if len(src) > MaxFileSize {
		return nil, &Error{File: path, Msg: fmt.Sprintf("config is larger than %d bytes", MaxFileSize)}
	}
	return Parse(path, src)
}

func pathErrText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse decodes a config from src; file names it in errors. Decoding is strict: an unknown
// key, a value of the wrong type (max_tokens: "5", max_tokens: 1.5, interval: 5), a missing
// base_url or model, a bad URL, a duplicate name, a count below 1, a non-positive duration, an
// api_key_env naming an unset variable or a literal api_key is an error. Every error is an
// *Error naming file:line:col with a snippet in which credentials are redacted.
//
// Anchors, aliases and merge keys (<<: *base) are supported; YAML tags are not.
func Parse(file string, src []byte) (*Config, error) {
	src = bytes.TrimPrefix(src, []byte("\ufeff"))
	// YAML reads \r\n and a lone \r as line breaks, but the lexer miscounts lines after some
	// of them; one form keeps every position in step with the snippet's lines.
	lines := splitLines(string(src))
	text := strings.Join(lines, "\n")
	src = []byte(text)
	l := &loader{file: file, lines: lines, anchors: make(map[string]ast.Node), secrets: lineSecrets(lines)}
	if !utf8.ValidString(text) {
		line, col := invalidUTF8At(text)
		return nil, l.errAt(line, col, "config is not valid UTF-8")
	}
	l.secrets = append(l.secrets, findSecrets(text)...)

	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil {
			tk := ye.GetToken()
			return nil, l.errAt(tk.Position.Line, tk.Position.Column, "%s", scrub(ye.GetMessage(), l.secrets))
		}
		return nil, l.errAt(1, 1, "%s", scrub(err.Error(), l.secrets))
	}
	c, lerr := l.config(f)
	if lerr != nil {
		return nil, lerr
	}
	// The loader enforces every rule with a position; this catches a rule it forgot (FuzzLoad
	// fails on an error without one).
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// splitLines splits at YAML line breaks: \r\n, \n and a lone \r.
func splitLines(s string) []string {
	return strings.Split(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n"), "\n")
}

func invalidUTF8At(s string) (line, col int) {
	for i, text := range splitLines(s) {
		for j := 0; j < len(text); {
			r, size := utf8.DecodeRuneInString(text[j:])
			if r == utf8.RuneError && size <= 1 {
				return i + 1, utf8.RuneCountInString(text[:j]) + 1
			}
			j += size
		}
	}
	return 1, 1
}

// findSecrets finds the values of api_key, of credential headers and of URLs with user info
// in the token stream, before parsing, so that even a syntax error elsewhere on their line
// cannot show them. A value is every token after "key:" up to the next key at the same or a
// lower indentation, or the end of the enclosing flow collection.
func findSecrets(src string) []secretSpan {
	tokens := lexer.Tokenize(src)
	var spans []secretSpan
	for i := 0; i+2 < len(tokens); i++ {
		key := tokens[i]
		if !isScalarToken(key) || tokens[i+1].Type != token.MappingValueType || key.Position == nil {
			continue
		}
		name := strings.ToLower(key.Value)
		if name == "api_key_env" || name != "api_key" && name != "base_url" && !sensitiveHeader(name) {
			continue
		}
		var value []*token.Token
		depth := 0
	scan:
		for j := i + 2; j < len(tokens); j++ {
			tk, prev := tokens[j], tokens[j-1]
			if tk.Position == nil || tk.Type == token.CommentType {
				continue
			}
			blockContent := prev.Type == token.LiteralType || prev.Type == token.FoldedType
			if depth == 0 && !blockContent {
				switch tk.Type {
				case token.CollectEntryType, token.MappingEndType, token.SequenceEndType,
					token.DocumentHeaderType, token.DocumentEndType:
					break scan
				}
				if tk.Position.Line > key.Position.Line && tk.Position.Column <= key.Position.Column {
					break scan // back at the key's indentation: the next key
				}
			}
			switch tk.Type {
			case token.SequenceStartType, token.MappingStartType:
				depth++
			case token.SequenceEndType, token.MappingEndType:
				depth--
			}
			value = append(value, tk)
		}
		if len(value) == 0 || !isSecret(name, value) {
			continue
		}
		span := secretSpan{line: value[0].Position.Line, col: value[0].Position.Column}
		for _, tk := range value {
			span.endLine = max(span.endLine, tk.Position.Line+strings.Count(strings.TrimSpace(tk.Origin), "\n"))
			if span.value == "" || len(tk.Value) > len(span.value) {
				span.value = tk.Value // the longest piece is the one worth scrubbing from messages
			}
		}
		spans = append(spans, span)
	}
	return spans
}

// secretKeyRE finds "key:" on a line; lineSecrets uses it as a second net under findSecrets
// for text the lexer cannot tokenise (a bad escape inside a quoted key, say).
var secretKeyRE = regexp.MustCompile(`([A-Za-z0-9_.-]+)["']?[ \t]*:([ \t]|$)`)

// lineSecrets marks, line by line, everything after a credential key's colon.
func lineSecrets(lines []string) []secretSpan {
	var spans []secretSpan
	for i, line := range lines {
		for _, m := range secretKeyRE.FindAllStringSubmatchIndex(line, -1) {
			name := strings.ToLower(line[m[2]:m[3]])
			rest := strings.TrimSpace(line[m[1]:])
			unquoted := strings.Trim(rest, `"'`)
			// In a flow mapping the value may be followed by "," or "}".
			inFlow := strings.Trim(strings.TrimRight(rest, ",}] "), `"'`)
			secret := false
			switch {
			case name == "api_key":
				secret = rest != "" && !envRefRE.MatchString(unquoted) && !envRefRE.MatchString(inFlow)
			case name == "base_url":
				secret = strings.ContainsAny(rest, "@?#")
			case name != "api_key_env" && sensitiveHeader(name):
				refs, _ := envRefs(unquoted)
				secret = rest != "" && len(refs) == 0
			}
			if secret {
				col := utf8.RuneCountInString(line[:m[1]]) + 1
				spans = append(spans, secretSpan{line: i + 1, col: col, endLine: i + 1, value: unquoted})
				break
			}
		}
	}
	return spans
}

func isSecret(key string, value []*token.Token) bool {
	var raw strings.Builder // the lexer may split "${X}" into several tokens
	for _, tk := range value {
		raw.WriteString(tk.Origin)
	}
	text := strings.Trim(strings.TrimSpace(raw.String()), `"'`)
	switch key {
	case "api_key":
		return !envRefRE.MatchString(text)
	case "base_url":
		return strings.ContainsAny(text, "@?#") // user info, a query string (keys), a fragment
	}
	refs, _ := envRefs(text)
	return len(refs) == 0
}

func isScalarToken(tk *token.Token) bool {
	switch tk.Type {
	case token.StringType, token.SingleQuoteType, token.DoubleQuoteType:
		return true
	}
	return false
}

var bigIntRE = regexp.MustCompile(`^[-+]?[0-9]+$`)

var envRefRE = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// loader walks the YAML AST itself rather than decoding into structs: it knows each value's
// node, so semantic errors get a position, and it can refuse what a struct decoder would
// silently coerce (max_tokens: 1.5 becoming 1).
type loader struct {
	file    string
	lines   []string
	secrets []secretSpan
	anchors map[string]ast.Node
}

// entry is one key: value pair of a mapping, merge keys already expanded.
type entry struct {
	key     string
	keyNode ast.Node
	value   ast.Node // as written (may be an alias)
}

// settings are the keys an endpoint shares with defaults:. nil means not given.
type settings struct {
	prompt                    *string
	maxTokens, concurrency    *int
	interval, timeout, stall  *time.Duration
	headers                   map[string]string
	extraBody                 map[string]any
	slo                       *SLO   // merged key by key over defaults:
	price                     *Price // replaces defaults: whole
	inputTokens, outputTokens *TokenLength
	prompts, cache            *string

	// The keys that chose the prompt (prompt, input_tokens, prompts) and the output length
	// (max_tokens, output_tokens) at this level: two of a kind at one level are an error.
	promptKey, lengthKey *entry
}

// Keys that are alternatives: one level (defaults: or an endpoint) gives at most one of each
// group; a more specific level's choice replaces the other's.
var (
	promptSourceKeys = []string{"prompt", "input_tokens", "prompts"}
	outputLengthKeys = []string{"max_tokens", "output_tokens"}
)

func (l *loader) errAt(line, col int, format string, args ...any) *Error {
	return &Error{
		File:    l.file,
		Line:    max(line, 1),
		Col:     max(col, 1),
		Msg:     fmt.Sprintf(format, args...),
		Snippet: snippet(l.lines, max(line, 1), max(col, 1), l.secrets),
	}
}

func (l *loader) errNode(n ast.Node, format string, args ...any) *Error {
	line, col := posOf(n)
	return l.errAt(line, col, format, args...)
}

// errValue points at an entry's value, or at its key when the value has no place of its own
// (an empty value).
func (l *loader) errValue(e entry, format string, args ...any) *Error {
	if isNil(e.value) || e.value.Type() == ast.NullType {
		return l.errNode(e.keyNode, format, args...)
	}
	return l.errNode(e.value, format, args...)
}

func isNil(n ast.Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// posOf is where a node starts in the source. A block mapping's own token is its first ":",
// so it is located by its first key instead.
func posOf(n ast.Node) (line, col int) {
	if isNil(n) {
		return 1, 1
	}
	switch t := n.(type) {
	case *ast.DocumentNode:
		if !isNil(t.Body) {
			return posOf(t.Body)
		}
	case *ast.MappingNode:
		if !t.IsFlowStyle && len(t.Values) > 0 {
			return posOf(t.Values[0])
		}
	case *ast.MappingValueNode:
		if !isNil(t.Key) {
			return posOf(t.Key)
		}
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return 1, 1
	}
	return tk.Position.Line, tk.Position.Column
}

// registerAnchors records every anchor before the walk, so an alias resolves wherever the
// loader happens to meet it first.
func (l *loader) registerAnchors(doc ast.Node) *Error {
	var err *Error
	ast.Walk(visitFunc(func(n ast.Node) bool {
		if err != nil {
			return false
		}
		if a, ok := n.(*ast.AnchorNode); ok && !isNil(a.Name) {
			name := a.Name.GetToken().Value
			if _, dup := l.anchors[name]; dup {
				err = l.errNode(a, "anchor &%s is defined twice", name)
				return false
			}
			l.anchors[name] = a.Value
		}
		return true
	}), doc)
	return err
}

type visitFunc func(ast.Node) bool

func (f visitFunc) Visit(n ast.Node) ast.Visitor {
	if isNil(n) || !f(n) {
		return nil
	}
	return f
}

// resolve follows anchors and aliases to the node holding the value.
func (l *loader) resolve(n ast.Node) (ast.Node, *Error) {
	for range maxNesting {
		switch t := n.(type) {
		case *ast.AnchorNode:
			n = t.Value
		case *ast.AliasNode:
			name := ""
			if !isNil(t.Value) && t.Value.GetToken() != nil {
				name = t.Value.GetToken().Value
			}
			target, ok := l.anchors[name]
			if !ok {
				return nil, l.errNode(t, "alias *%s names no anchor", name)
			}
			n = target
		case *ast.TagNode:
			return nil, l.errNode(t, "YAML tags (%s) are not supported in a tokscope config", t.Start.Value)
		default:
			if isNil(n) {
				return nil, nil
			}
			return n, nil
		}
	}
	return nil, l.errNode(n, "aliases nest too deeply (an alias that refers to itself?)")
}

func kindOf(n ast.Node) string {
	switch n.Type() {
	case ast.MappingType, ast.MappingValueType:
		return "a mapping"
	case ast.SequenceType:
		return "a list"
	case ast.IntegerType:
		return "an integer"
	case ast.FloatType, ast.InfinityType, ast.NanType:
		return "a number"
	case ast.BoolType:
		return "a boolean"
	case ast.NullType:
		return "nothing"
	case ast.StringType, ast.LiteralType:
		return "a string"
	}
	return "a " + strings.ToLower(n.Type().String())
}

func isNull(n ast.Node) bool { return isNil(n) || n.Type() == ast.NullType }

// entries returns the pairs of a mapping node, expanding merge keys (explicit keys win over
// merged ones, earlier merge sources over later ones).
func (l *loader) entries(n ast.Node, what string, depth int) ([]entry, *Error) {
	if depth > maxNesting {
		return nil, l.errNode(n, "%s nests too deeply", what)
	}
	r, err := l.resolve(n)
	if err != nil {
		return nil, err
	}
	var pairs []*ast.MappingValueNode
	switch t := r.(type) {
	case *ast.MappingNode:
		pairs = t.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{t}
	case nil:
		return nil, nil
	default:
		if r.Type() == ast.NullType {
			return nil, nil
		}
		return nil, l.errNode(n, "%s must be a mapping (key: value), got %s", what, kindOf(r))
	}
	var explicit, merged []entry
	for _, p := range pairs {
		if isNil(p.Key) {
			continue
		}
		if p.Key.Type() == ast.MergeKeyType {
			sources, err := l.resolve(p.Value)
			if err != nil {
				return nil, err
			}
			list := []ast.Node{p.Value}
			if seq, ok := sources.(*ast.SequenceNode); ok {
				list = seq.Values
			}
			for _, src := range list {
				es, err := l.entries(src, "a merge (<<) value", depth+1)
				if err != nil {
					return nil, err
				}
				merged = append(merged, es...)
			}
			continue
		}
		key, err := l.key(p.Key)
		if err != nil {
			return nil, err
		}
		explicit = append(explicit, entry{key: key, keyNode: p.Key, value: p.Value})
	}
	out := explicit
	for _, m := range merged {
		if !slices.ContainsFunc(out, func(e entry) bool { return e.key == m.key }) {
			out = append(out, m)
		}
	}
	return out, nil
}

func (l *loader) key(n ast.Node) (string, *Error) {
	if k, ok := n.(*ast.MappingKeyNode); ok {
		n = k.Value
	}
	r, err := l.resolve(n)
	if err != nil {
		return "", err
	}
	if s, ok := scalarText(r); ok {
		return s, nil
	}
	return "", l.errNode(n, "a key must be a plain string, got %s", kindOf(r))
}

// scalarText is the text of a scalar as the user wrote it (model: 3.10 stays "3.10").
func scalarText(n ast.Node) (string, bool) {
	switch t := n.(type) {
	case *ast.StringNode:
		return t.Value, true
	case *ast.LiteralNode:
		if t.Value != nil {
			return t.Value.Value, true
		}
		return "", true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		if tk := n.GetToken(); tk != nil {
			return tk.Value, true
		}
	}
	return "", false
}

// Closest is the candidate nearest to word within two edits ("" when none is), for "did
// you mean" hints.
func Closest(word string, candidates []string) string {
	best, bestDist := "", 3
	for _, v := range candidates {
		if d := editDistance(word, v); d < bestDist {
			best, bestDist = v, d
		}
	}
	return best
}

func unknownKey(key string, valid []string) string {
	if best := Closest(key, valid); best != "" {
		return fmt.Sprintf("unknown key %q; did you mean %q?", key, best)
	}
	return fmt.Sprintf("unknown key %q; known keys: %s", key, strings.Join(valid, ", "))
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// --- typed values ------------------------------------------------------------------------

// str returns a scalar as text; ok is false for an empty value (treated as not given).
func (l *loader) str(e entry) (s string, ok bool, err *Error) {
	r, err := l.resolve(e.value)
	if err != nil || isNull(r) {
		return "", false, err
	}
	if s, ok := scalarText(r); ok {
		return s, true, nil
	}
	return "", false, l.errValue(e, "%s must be a string, got %s", e.key, kindOf(r))
}

func (l *loader) integer(e entry, most int) (n int, ok bool, err *Error) {
	r, err := l.resolve(e.value)
	if err != nil || isNull(r) {
		return 0, false, err
	}
	in, isInt := r.(*ast.IntegerNode)
	if str, isStr := r.(*ast.StringNode); isStr && str.Token != nil && str.Token.Type == token.StringType &&
		bigIntRE.MatchString(str.Value) {
		// The parser leaves an integer too large for int64 as a string.
		return 0, false, l.errValue(e, "%s is too large, got %s", e.key, str.Value)
	}
	if !isInt {
		got := kindOf(r)
		if s, ok := scalarText(r); ok {
			got += " (" + strconv.Quote(s) + ")"
		}
		return 0, false, l.errValue(e, "%s must be a whole number, got %s", e.key, got)
	}
	var v int64
	switch x := in.Value.(type) {
	case int64:
		v = x
	case uint64:
		if x > math.MaxInt64 {
			v = math.MaxInt64
		} else {
			v = int64(x)
		}
	}
	if v > math.MaxInt32 {
		v = math.MaxInt32 // beyond any limit; reported by the range check below
	}
	if msg := checkCount(e.key, int(v), most); msg != "" {
		return 0, false, l.errValue(e, "%s", msg)
	}
	return int(v), true, nil
}

func (l *loader) boolean(e entry) (b, ok bool, err *Error) {
	r, err := l.resolve(e.value)
	if err != nil || isNull(r) {
		return false, false, err
	}
	bn, isBool := r.(*ast.BoolNode)
	if !isBool {
		return false, false, l.errValue(e, "%s must be true or false, got %s", e.key, kindOf(r))
	}
	return bn.Value, true, nil
}

func (l *loader) duration(e entry, zeroOK bool) (d time.Duration, ok bool, err *Error) {
	r, err := l.resolve(e.value)
	if err != nil || isNull(r) {
		return 0, false, err
	}
	switch t := r.(type) {
	case *ast.IntegerNode:
		if t.Value == int64(0) || t.Value == uint64(0) {
			d = 0 // "0" needs no unit
		} else {
			return 0, false, l.errValue(e, "%s needs a unit, e.g. %ss", e.key, t.GetToken().Value)
		}
	case *ast.StringNode:
		d, err := time.ParseDuration(t.Value)
		if err != nil {
			return 0, false, l.errValue(e, "%s must be a duration such as 500ms, 2s or 1m30s, got %q", e.key, t.Value)
		}
		if msg := checkDuration(e.key, d, zeroOK); msg != "" {
			return 0, false, l.errValue(e, "%s", msg)
		}
		return d, true, nil
	default:
		return 0, false, l.errValue(e, "%s must be a duration such as 500ms, 2s or 1m30s, got %s", e.key, kindOf(r))
	}
	if msg := checkDuration(e.key, d, zeroOK); msg != "" {
		return 0, false, l.errValue(e, "%s", msg)
	}
	return d, true, nil
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
	var defaults settings
	var endpointsEntry *entry
	var grace *time.Duration
	for i, e := range top {
		switch e.key {
		case "grace":
			d, ok, err := l.duration(e, true)
			if err != nil {
				return nil, err
			}
			if ok {
				grace = &d
			}
		case "defaults":
			es, err := l.entries(e.value, "defaults", 0)
			if err != nil {
				return nil, err
			}
			for _, se := range es {
				known, err := l.setting(&defaults, se)
				if err != nil {
					return nil, err
				}
				if !known {
					return nil, l.errNode(se.keyNode, "defaults: %s", unknownKey(se.key, settingKeys))
				}
			}
		case "endpoints":
			endpointsEntry = &top[i]
		default:
			return nil, l.errNode(e.keyNode, "%s", unknownKey(e.key, topKeys))
		}
	}
	if endpointsEntry == nil {
		return nil, l.errNode(docs[0], "no endpoints: add an endpoints: list, each with base_url and model")
	}
	eps, err := l.endpoints(*endpointsEntry, &defaults)
	if err != nil {
		return nil, err
	}
	return &Config{File: l.file, Endpoints: eps, Grace: grace}, nil
}

func (l *loader) endpoints(e entry, defaults *settings) ([]Endpoint, *Error) {
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

func (l *loader) endpoint(idx int, item ast.Node, defaults *settings) (Endpoint, ast.Node, *Error) {
	var ep Endpoint
	r, err := l.resolve(item)
	if err != nil {
		return ep, nil, err
	}
	if isNull(r) {
		return ep, nil, l.errNode(item, "endpoint %d is empty: it needs base_url and model", idx)
	}
	what := fmt.Sprintf("endpoint %d", idx)
	es, err := l.entries(item, what, 0)
	if err != nil {
		return ep, nil, err
	}
	var own settings
	var nameNode ast.Node
	var hasURL, hasModel bool
	var keyEntry *entry // api_key or api_key_env, whichever came first
	for i, e := range es {
		switch e.key {
		case "name":
			s, ok, err := l.str(e)
			if err != nil {
				return ep, nil, err
			}
			if !ok {
				s = ""
			}
			if msg := checkText("name", s); msg != "" {
				return ep, nil, l.errValue(e, "%s", msg)
			}
			ep.Name, nameNode = s, e.value
		case "base_url":
			s, ok, err := l.str(e)
			if err != nil {
				return ep, nil, err
			}
			if !ok {
				s = ""
			}
			if msg := checkBaseURL(s); msg != "" {
				return ep, nil, l.errValue(e, "%s", msg)
			}
			ep.BaseURL, hasURL = s, true
		case "model":
			s, ok, err := l.str(e)
			if err != nil {
				return ep, nil, err
			}
			if !ok {
				s = ""
			}
			if msg := checkText("model", s); msg != "" {
				return ep, nil, l.errValue(e, "%s", msg)
			}
			ep.Model, hasModel = s, true
		case "api_key_env", "api_key":
			if keyEntry != nil {
				return ep, nil, l.errNode(e.keyNode, "give either api_key or api_key_env, not both")
			}
			keyEntry = &es[i]
			name, err := l.keySource(e)
			if err != nil {
				return ep, nil, err
			}
			ep.APIKeyEnv = name
		case "insecure_skip_verify":
			b, _, err := l.boolean(e)
			if err != nil {
				return ep, nil, err
			}
			ep.InsecureSkipVerify = b
		default:
			known, err := l.setting(&own, e)
			if err != nil {
				return ep, nil, err
			}
			if !known {
				return ep, nil, l.errNode(e.keyNode, "%s: %s", what, unknownKey(e.key, endpointKeys))
			}
		}
	}
	if !hasURL {
		return ep, nil, l.errNode(item, "%s has no base_url (e.g. base_url: http://127.0.0.1:8080/v1)", what)
	}
	if !hasModel {
		return ep, nil, l.errNode(item, "%s has no model", what)
	}
	ep.merge(defaults, &own)
	return ep, nameNode, nil
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

// setting decodes one of the keys shared with defaults:; known is false for any other key.
func (l *loader) setting(s *settings, e entry) (known bool, err *Error) {
	if err := l.alternative(&s.promptKey, promptSourceKeys, e); err != nil {
		return true, err
	}
	if err := l.alternative(&s.lengthKey, outputLengthKeys, e); err != nil {
		return true, err
	}
	switch e.key {
	case "prompt":
		v, ok, err := l.str(e)
		if err != nil {
			return true, err
		}
		if !ok {
			v = ""
		}
		if msg := checkPrompt(v); msg != "" {
			return true, l.errValue(e, "%s", msg)
		}
		s.prompt = &v
	case "max_tokens", "concurrency":
		most := 0
		if e.key == "concurrency" {
			most = MaxConcurrency
		}
		v, ok, err := l.integer(e, most)
		if err != nil || !ok {
			return true, err
		}
		if e.key == "max_tokens" {
			s.maxTokens = &v
		} else {
			s.concurrency = &v
		}
	case "interval", "timeout", "stall":
		v, ok, err := l.duration(e, e.key == "interval")
		if err != nil || !ok {
			return true, err
		}
		switch e.key {
		case "interval":
			s.interval = &v
		case "timeout":
			s.timeout = &v
		default:
			s.stall = &v
		}
	case "input_tokens", "output_tokens":
		v, ok, err := l.tokenLength(e)
		if err != nil || !ok {
			return true, err
		}
		if e.key == "input_tokens" {
			s.inputTokens = &v
		} else {
			s.outputTokens = &v
		}
	case "prompts":
		v, err := l.promptsFile(e)
		if err != nil {
			return true, err
		}
		s.prompts = &v
	case "cache":
		v, ok, err := l.str(e)
		if err != nil {
			return true, err
		}
		if msg := checkCache(v); msg != "" || !ok {
			return true, l.errValue(e, "cache must be %s (the default: every prompt starts with a unique tag) or %s (prompts as they are)",
				CacheBust, CacheReuse)
		}
		s.cache = &v
	case "headers":
		h, err := l.headers(e)
		if err != nil {
			return true, err
		}
		s.headers = h
	case "slo":
		v, err := l.slo(e)
		if err != nil {
			return true, err
		}
		s.slo = v
	case "price":
		v, err := l.price(e)
		if err != nil {
			return true, err
		}
		s.price = v
	case "extra_body":
		es, err := l.entries(e.value, "extra_body", 0)
		if err != nil {
			return true, err
		}
		budget := maxExtraBodyNodes
		body := make(map[string]any, len(es))
		for _, be := range es {
			if msg := checkExtraBodyKey(be.key); msg != "" {
				return true, l.errNode(be.keyNode, "%s", msg)
			}
			v, err := l.jsonValue(be.value, 0, &budget)
			if err != nil {
				return true, err
			}
			body[be.key] = v
		}
		s.extraBody = body
	default:
		return false, nil
	}
	return true, nil
}

// alternative records e in *seen when its key is one of group, and refuses a second key of
// the group at the same level.
func (l *loader) alternative(seen **entry, group []string, e entry) *Error {
	if !slices.Contains(group, e.key) {
		return nil
	}
	if first := *seen; first != nil {
		line, _ := posOf(first.keyNode)
		return l.errNode(e.keyNode, "give one of %s, not both %s (line %d) and %s", strings.Join(group, ", "), first.key, line, e.key)
	}
	*seen = &e
	return nil
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
func (l *loader) promptsFile(e entry) (string, *Error) {
	v, ok, err := l.str(e)
	if err != nil {
		return "", err
	}
	if !ok {
		v = ""
	}
	if msg := checkText("prompts", v); msg != "" {
		return "", l.errValue(e, "%s (a JSONL or ShareGPT JSON file)", msg)
	}
	if !filepath.IsAbs(v) && l.file != "" {
		v = filepath.Join(filepath.Dir(l.file), v)
	}
	if msg := checkPromptsFile(v); msg != "" {
		return "", l.errValue(e, "%s", msg)
	}
	return v, nil
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

// merge resolves an endpoint's settings: its own, else defaults:, else the built-in defaults.
// Headers and extra_body merge key by key, the endpoint's keys winning.
func (e *Endpoint) merge(defaults, own *settings) {
	base := NewEndpoint(e.BaseURL, e.Model)
	e.Prompt, e.MaxTokens, e.Concurrency = base.Prompt, base.MaxTokens, base.Concurrency
	e.Interval, e.Timeout, e.Stall = base.Interval, base.Timeout, base.Stall
	e.Cache = base.Cache
	for _, s := range []*settings{defaults, own} {
		// A level that chooses the prompt (or the output length) replaces the other level's
		// choice: an endpoint's prompt: wins over input_tokens: in defaults:.
		if s.promptKey != nil {
			e.InputTokens, e.Prompts = TokenLength{}, ""
		}
		if s.prompt != nil {
			e.Prompt = *s.prompt
		}
		if s.inputTokens != nil {
			e.InputTokens = *s.inputTokens
		}
		if s.prompts != nil {
			e.Prompts = *s.prompts
		}
		if s.lengthKey != nil {
			e.OutputTokens = TokenLength{}
		}
		if s.maxTokens != nil {
			e.MaxTokens = *s.maxTokens
		}
		if s.outputTokens != nil {
			e.OutputTokens = *s.outputTokens
		}
		if s.cache != nil {
			e.Cache = *s.cache
		}
		if s.concurrency != nil {
			e.Concurrency = *s.concurrency
		}
		if s.interval != nil {
			e.Interval = *s.interval
		}
		if s.timeout != nil {
			e.Timeout = *s.timeout
		}
		if s.stall != nil {
			e.Stall = *s.stall
		}
		e.SLO = mergeSLO(e.SLO, s.slo)
		if s.price != nil {
			p := *s.price
			e.Price = &p
		}
		for k, v := range s.headers {
			if e.Headers == nil {
				e.Headers = make(map[string]string)
			}
			e.Headers[k] = v
		}
		for k, v := range s.extraBody {
			if e.ExtraBody == nil {
				e.ExtraBody = make(map[string]any)
			}
			e.ExtraBody[k] = deepCopy(v) // endpoints never share a map
		}
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
