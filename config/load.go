package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
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
	settingKeys = []string{"prompt", "max_tokens", "interval", "timeout", "stall", "concurrency", "headers", "extra_body", "slo", "price", "turns", "think_time", "shared_prefix",
		"input_tokens", "output_tokens", "prompts", "cache", "api", "gpu_metrics"}
	endpointKeys = append([]string{"name", "base_url", "model", "api_key_env", "api_key", "insecure_skip_verify"}, settingKeys...)
	topKeys      = []string{"defaults", "endpoints", "grace", "session_start", "sessions", "tiers", "trace", "watch"}
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
	best := Closest(key, valid)
	if best == "" { // the key is the end of one: url (the flag --url) for base_url
		for _, v := range valid {
			if strings.HasSuffix(v, "_"+key) {
				best = v
				break
			}
		}
	}
	if best != "" {
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
