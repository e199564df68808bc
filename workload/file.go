package workload

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"tokscope/config"
)

// Bounds on a prompts file: it is read whole before the run, and a ShareGPT dump is often
// hundreds of megabytes of which a run uses the first few thousand prompts.
const (
	// MaxEntryBytes bounds one JSONL line or one entry of a JSON array (a 1M-token prompt
	// is about 4 MB of text).
	MaxEntryBytes = 8 << 20
	// MaxItems and MaxTextBytes bound what is kept: reading stops at whichever comes first,
	// Set.Truncated says so, and requests cycle through what was read.
	MaxItems     = 100_000
	MaxTextBytes = 256 << 20
)

// Item is one request's prompt from a prompts file.
type Item struct {
	Messages  []Message
	MaxTokens int // the entry's max_tokens; 0 when it gave none
	Line      int // where the entry starts in the file
	// Later are a ShareGPT conversation's later human turns, in order: the user messages of
	// turns 2, 3, … under --turns (convo.go).
	Later []string
}

// Set is a loaded prompts file; it is never modified after Load, and may be shared by
// several endpoints' workloads.
type Set struct {
	Path  string
	Items []Item
	// Skipped counts ShareGPT conversations without a human turn (they cannot be a prompt).
	Skipped int
	// Truncated: reading stopped at MaxItems or MaxTextBytes; the rest of the file was not
	// read, nor checked.
	Truncated bool
}

// FileError is a bad prompts or trace file: config's own error, so that every file tokscope
// reads says where in the same way: "file:line: message", and at a key "file:line:col:
// message" with the line under a caret. Line is 0 when the error is about the file as a whole.
type FileError = config.Error

// keyError is a key an entry or a trace line may not have; atKey places it at its line and
// column.
type keyError struct{ key, msg string }

func (e *keyError) Error() string { return e.msg }

// unknownKey is the error for key, which is not one of valid: config's message, with its
// "did you mean".
func unknownKey(key string, valid []string) error {
	return &keyError{key: key, msg: config.UnknownKey(key, valid)}
}

// atKey is err as a *FileError of file, whose text raw begins on line `line`: at the key a
// *keyError names (its line and column, and that line's text), else at the line.
func atKey(file string, raw []byte, line int, err error) *FileError {
	var ke *keyError
	if !errors.As(err, &ke) {
		return &FileError{File: file, Line: line, Msg: err.Error()}
	}
	q, _ := json.Marshal(ke.key)
	for off := 0; off < len(raw); {
		i := bytes.Index(raw[off:], q)
		if i < 0 {
			break
		}
		pos, end := off+i, off+i+len(q)
		if rest := bytes.TrimLeft(raw[end:], " \t\r\n"); len(rest) > 0 && rest[0] == ':' {
			start := bytes.LastIndexByte(raw[:pos], '\n') + 1
			stop := len(raw)
			if j := bytes.IndexByte(raw[pos:], '\n'); j >= 0 {
				stop = pos + j
			}
			return config.LineError(file, line+bytes.Count(raw[:pos], []byte("\n")), utf8.RuneCount(raw[start:pos])+1,
				string(bytes.TrimRight(raw[start:stop], "\r")), ke.msg)
		}
		off = end
	}
	return &FileError{File: file, Line: line, Msg: ke.msg}
}

// Load reads a prompts file: JSON Lines, one request a line ({"prompt": "…"},
// {"messages": […]} or a ShareGPT {"conversations": […]}, each with an optional
// "max_tokens"), or a JSON array of such entries (a ShareGPT dump). Blank lines are skipped.
// The first bad entry is a *FileError naming its line; nothing is sent before it is found.
func Load(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &FileError{File: path, Msg: "cannot read prompts: " + err.Error()}
	}
	defer f.Close()
	return Parse(path, f)
}

// Parse reads a prompts file from r (see Load); name is the file's name in errors.
func Parse(name string, r io.Reader) (*Set, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, _ := br.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		_, _ = br.Discard(3)
	}
	p := &fileParser{set: &Set{Path: name}, name: name}
	var err error
	if firstByte(br) == '[' {
		err = p.array(br)
	} else {
		err = p.lines(br)
	}
	if err != nil {
		return nil, err
	}
	if len(p.set.Items) == 0 {
		msg := "no prompts: write one JSON object a line, e.g. {\"prompt\": \"Hello\"}, or give a ShareGPT JSON file"
		if p.set.Skipped > 0 {
			msg = fmt.Sprintf("no prompts: none of its %d conversations has a human turn", p.set.Skipped)
		}
		return nil, &FileError{File: name, Msg: msg}
	}
	return p.set, nil
}

// firstByte is the first byte that is not JSON whitespace, without consuming anything; 0
// when there is none within the reader's buffer.
func firstByte(br *bufio.Reader) byte {
	for n := 1; n <= br.Size(); n *= 2 {
		b, err := br.Peek(n)
		for _, c := range b {
			if !isSpace(c) {
				return c
			}
		}
		if err != nil {
			return 0
		}
	}
	return 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

type fileParser struct {
	set       *Set
	name      string
	textBytes int
}

func (p *fileParser) errAt(line int, format string, args ...any) *FileError {
	return &FileError{File: p.name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// add parses one entry; false when the bounds are reached and reading must stop.
func (p *fileParser) add(raw []byte, line int) (bool, error) {
	item, skip, err := parseEntry(raw)
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && se.Offset > 0 && int(se.Offset) <= len(raw) {
			line += bytes.Count(raw[:se.Offset-1], []byte("\n"))
		}
		return false, atKey(p.name, raw, line, err)
	}
	if skip {
		p.set.Skipped++
		return true, nil
	}
	item.Line = line
	p.set.Items = append(p.set.Items, item)
	for _, m := range item.Messages {
		p.textBytes += len(m.Content)
		for _, t := range m.Parts {
			p.textBytes += len(t)
		}
	}
	if len(p.set.Items) >= MaxItems || p.textBytes >= MaxTextBytes {
		p.set.Truncated = true
		return false, nil
	}
	return true, nil
}

// lines reads JSON Lines.
func (p *fileParser) lines(br *bufio.Reader) error {
	var buf []byte
	for line := 1; ; line++ {
		buf = buf[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			buf = append(buf, chunk...)
			if len(buf) > MaxEntryBytes {
				return p.errAt(line, "line is longer than %d MiB", MaxEntryBytes>>20)
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && err != io.EOF {
			return &FileError{File: p.name, Line: line, Msg: "cannot read prompts: " + err.Error()}
		}
		// Only the end is trimmed: a key's column counts from the start of the line.
		if raw := bytes.TrimRight(buf, " \t\r\n"); len(bytes.TrimSpace(raw)) > 0 {
			more, aerr := p.add(raw, line)
			if aerr != nil || !more {
				return aerr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// array reads a JSON array of entries, one at a time: each entry is cut out by its
// brackets (bounded by MaxEntryBytes) and decoded on its own, so a ShareGPT dump of
// hundreds of megabytes is never held whole and every error names the entry's line.
func (p *fileParser) array(br *bufio.Reader) error {
	s := &scanner{r: br, line: 1}
	if c, _ := s.skipSpace(); c != '[' {
		return p.errAt(s.line, "expected a JSON array")
	}
	var buf []byte
	for first := true; ; first = false {
		c, err := s.skipSpace()
		if err != nil {
			return p.errAt(s.line, "the JSON array is not closed: ] missing at the end")
		}
		if c == ']' && first {
			break
		}
		if c != '{' {
			return p.errAt(s.line, "an entry must be a JSON object {…}, got %q", rune(c))
		}
		line := s.line
		buf, err = s.object(buf[:0])
		if err != nil {
			return p.errAt(line, "%v", err)
		}
		more, err := p.add(buf, line)
		if err != nil || !more {
			return err
		}
		if c, err = s.skipSpace(); err != nil {
			return p.errAt(s.line, "the JSON array is not closed: ] missing at the end")
		}
		if c == ']' {
			break
		}
		if c != ',' {
			return p.errAt(s.line, "expected , or ] after an entry, got %q", rune(c))
		}
	}
	if c, err := s.skipSpace(); err == nil {
		return p.errAt(s.line, "unexpected %q after the end of the JSON array", rune(c))
	}
	return nil
}

// scanner reads JSON structure byte by byte, counting lines.
type scanner struct {
	r    *bufio.Reader
	line int
}

func (s *scanner) next() (byte, error) {
	c, err := s.r.ReadByte()
	if c == '\n' && err == nil {
		s.line++
	}
	return c, err
}

func (s *scanner) skipSpace() (byte, error) {
	for {
		c, err := s.next()
		if err != nil || !isSpace(c) {
			return c, err
		}
	}
}

// object appends to buf the object whose '{' was just read, up to its matching '}'.
// Brackets inside strings do not count; mismatched brackets are left to the JSON decoder.
func (s *scanner) object(buf []byte) ([]byte, error) {
	buf = append(buf, '{')
	depth, inString, escaped := 1, false, false
	for depth > 0 {
		c, err := s.next()
		if err != nil {
			return nil, errors.New("the file ends inside this entry")
		}
		if buf = append(buf, c); len(buf) > MaxEntryBytes {
			return nil, fmt.Errorf("entry is longer than %d MiB", MaxEntryBytes>>20)
		}
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	return buf, nil
}

// entryKeys are the keys an entry may have; others are ignored (datasets carry ids and
// metadata), unless they look like a misspelt one of these.
var entryKeys = []string{"prompt", "messages", "conversations", "max_tokens"}

// The keys read of a message and of a ShareGPT turn; as in an entry, other keys are ignored
// (tool calls, names, weights) unless they look like a misspelt one of these.
var (
	messageKeys = []string{"role", "content"}
	turnKeys    = []string{"from", "value", "role", "content"}
)

// nearMiss is the error for the first key of the objects of list raw that is not one of
// known but within two letters of one ("contnet"); nil when there is none.
func nearMiss(raw json.RawMessage, known []string) error {
	var objects []map[string]json.RawMessage
	if json.Unmarshal(raw, &objects) != nil {
		return nil // the caller says what is wrong with the list itself
	}
	for _, o := range objects {
		for _, k := range keysInOrder(raw, o) {
			if !slices.Contains(known, k) && config.Closest(strings.ToLower(k), known) != "" {
				return unknownKey(k, known)
			}
		}
	}
	return nil
}

// keysInOrder are the keys of o in the order raw (its text) first names them, so that the
// first bad key reported is the first one in the file.
func keysInOrder(raw []byte, o map[string]json.RawMessage) []string {
	at := func(k string) int {
		q, _ := json.Marshal(k)
		if i := bytes.Index(raw, q); i >= 0 {
			return i
		}
		return len(raw)
	}
	keys := slices.Collect(maps.Keys(o))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(at(a), at(b)), cmp.Compare(a, b)) })
	return keys
}

// parseEntry decodes one entry. skip is true for a ShareGPT conversation without a human
// turn.
func parseEntry(raw []byte) (item Item, skip bool, err error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return item, false, errors.New("an entry must be a JSON object, e.g. {\"prompt\": \"Hello\"}")
		}
		return item, false, err
	}
	var given []string
	for k := range fields {
		if slices.Contains(entryKeys, k) {
			if k != "max_tokens" {
				given = append(given, k)
			}
			continue
		}
		if config.Closest(strings.ToLower(k), entryKeys) != "" {
			return item, false, unknownKey(k, entryKeys)
		}
	}
	slices.Sort(given)
	switch len(given) {
	case 0:
		return item, false, errors.New(`an entry needs "prompt", "messages" or "conversations" (ShareGPT)`)
	case 1:
	default:
		return item, false, fmt.Errorf("an entry gives one of \"prompt\", \"messages\" or \"conversations\", not both %q and %q", given[0], given[1])
	}
	switch given[0] {
	case "prompt":
		var s string
		if json.Unmarshal(fields["prompt"], &s) != nil {
			return item, false, errors.New(`"prompt" must be a string`)
		}
		if strings.TrimSpace(s) == "" {
			return item, false, errors.New(`"prompt" is empty`)
		}
		item.Messages = []Message{{Role: "user", Content: s}}
	case "messages":
		msgs, err := parseMessages(fields["messages"])
		if err != nil {
			return item, false, err
		}
		item.Messages = msgs
	case "conversations":
		texts, err := humanTurns(fields["conversations"])
		if err != nil {
			return item, false, err
		}
		if len(texts) == 0 {
			return item, true, nil
		}
		item.Messages = []Message{{Role: "user", Content: texts[0]}}
		item.Later = texts[1:]
	}
	if raw, ok := fields["max_tokens"]; ok {
		n, err := strconv.Atoi(string(bytes.TrimSpace(raw)))
		if err != nil || n < 1 || n > config.MaxLengthTokens {
			return item, false, fmt.Errorf(`"max_tokens" must be a whole number from 1 to %d, got %s`, config.MaxLengthTokens, clip(string(raw), 40))
		}
		item.MaxTokens = n
	}
	return item, false, nil
}

// parseMessages reads an OpenAI messages array: each message a role and a content that is a
// string or an array of text parts. Other message keys are ignored.
func parseMessages(raw json.RawMessage) ([]Message, error) {
	var list []struct {
		Role    *string         `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New(`"messages" must be a list of {"role": "…", "content": "…"}`)
	}
	if len(list) == 0 {
		return nil, errors.New(`"messages" is empty`)
	}
	if err := nearMiss(raw, messageKeys); err != nil {
		return nil, err
	}
	msgs := make([]Message, len(list))
	text := false
	for i, m := range list {
		where := fmt.Sprintf("messages[%d]", i)
		if m.Role == nil || strings.TrimSpace(*m.Role) == "" {
			return nil, fmt.Errorf(`%s has no "role"`, where)
		}
		msgs[i].Role = *m.Role
		content := bytes.TrimSpace(m.Content)
		switch {
		case len(content) == 0 || string(content) == "null":
			return nil, fmt.Errorf(`%s has no "content"`, where)
		case content[0] == '"':
			if err := json.Unmarshal(content, &msgs[i].Content); err != nil {
				return nil, fmt.Errorf("%s.content: %v", where, err)
			}
			text = text || strings.TrimSpace(msgs[i].Content) != ""
		case content[0] == '[':
			var parts []struct {
				Type string  `json:"type"`
				Text *string `json:"text"`
			}
			if err := json.Unmarshal(content, &parts); err != nil || len(parts) == 0 {
				return nil, fmt.Errorf(`%s.content must be a string or a non-empty list of {"type": "text", "text": "…"}`, where)
			}
			msgs[i].Parts = make([]string, len(parts))
			for j, part := range parts {
				if part.Type != "text" || part.Text == nil {
					return nil, fmt.Errorf(`%s.content[%d]: only {"type": "text", "text": "…"} parts are supported, got type %q`, where, j, part.Type)
				}
				msgs[i].Parts[j] = *part.Text
				text = text || strings.TrimSpace(*part.Text) != ""
			}
		default:
			return nil, fmt.Errorf("%s.content must be a string or a list of text parts", where)
		}
	}
	if !text {
		return nil, errors.New(`"messages" hold no text`)
	}
	return msgs, nil
}

// humanTurns are the texts of a ShareGPT conversation's turns from "human" (or "user"), in
// order; none when it has none. Turns may also be written {"role", "content"} (LMSYS-Chat).
func humanTurns(raw json.RawMessage) ([]string, error) {
	var turns []struct {
		From    string `json:"from"`
		Role    string `json:"role"`
		Value   string `json:"value"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &turns); err != nil {
		return nil, errors.New(`"conversations" must be a list of {"from": "human", "value": "…"} (ShareGPT)`)
	}
	if err := nearMiss(raw, turnKeys); err != nil {
		return nil, err
	}
	var texts []string
	for _, t := range turns {
		who, text := cmp.Or(t.From, t.Role), cmp.Or(t.Value, t.Content)
		if (who == "human" || who == "user") && strings.TrimSpace(text) != "" {
			texts = append(texts, text)
		}
	}
	return texts, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
