package config

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a configuration error. When it comes from a file, File, Line and Col (1-based,
// columns counted in characters) locate it and Snippet shows the offending line with a caret;
// credentials on that line are replaced by "<redacted>". Errors from Validate on a config built
// from flags have no position and name the field and its flag instead.
type Error struct {
	File    string
	Line    int // 0 when there is no position
	Col     int
	Msg     string
	Snippet string // "" when there is no source line to show
}

// Error renders "file:line:col: message" ("file:line: message" without a column), followed
// by the snippet on the next lines.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0 && e.Col < 1:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d:%d: ", e.File, e.Line, e.Col)
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "%d:%d: ", e.Line, e.Col)
	}
	b.WriteString(e.Msg)
	if e.Snippet != "" {
		b.WriteString("\n")
		b.WriteString(e.Snippet)
	}
	return b.String()
}

const redacted = "<redacted>"

// secretSpan marks source text that holds a credential: from (line, col) to the end of line
// endLine. Snippets never show it.
type secretSpan struct {
	line, col, endLine int
	value              string
}

// LineError is an error at column col (1-based, in characters) of line `line` of file, whose
// text is text: rendered as config errors are, "file:line:col: msg" and the line with a
// caret. Other files tokscope reads line by line (prompts, traces) report through it.
// A long line (a prompt) shows only the part around the column.
func LineError(file string, line, col int, text, msg string) *Error {
	const width, before = 100, 40
	r := []rune(text)
	if len(r) > width {
		start := max(0, min(col-1-before, len(r)-width))
		end := start + width
		window := append([]rune(nil), r[start:end]...)
		col -= start
		if start > 0 {
			window, col = append([]rune("…"), window...), col+1
		}
		if end < len(r) {
			window = append(window, '…')
		}
		r = window
	}
	return &Error{File: file, Line: line, Col: col, Msg: msg, Snippet: snippetText(r, line, col, nil)}
}

// UnknownKey is the message for a key that is not one of valid: the nearest within two
// edits as "did you mean", else the list of valid keys.
func UnknownKey(key string, valid []string) string { return unknownKey(key, valid) }

// snippet renders source line `line` with a caret under column `col`, redacting secrets.
// Tabs before the caret are kept so the caret lines up in a terminal.
func snippet(lines []string, line, col int, secrets []secretSpan) string {
	if line < 1 || line > len(lines) {
		return ""
	}
	return snippetText([]rune(lines[line-1]), line, col, secrets)
}

// snippetText is snippet of one line's text.
func snippetText(text []rune, line, col int, secrets []secretSpan) string {
	cut := len(text) // redact from here to the end of the line
	for _, s := range secrets {
		switch {
		case s.line == line:
			cut = min(cut, max(s.col-1, 0))
		case s.line < line && line <= s.endLine:
			cut = min(cut, indentOf(text))
		}
	}
	cut = min(cut, len(text))
	shown := string(text[:cut])
	if cut < len(text) {
		shown += redacted
	}
	shown = strings.Map(func(r rune) rune {
		if r == '\t' || r >= ' ' && r != 0x7f && (r < 0x80 || r > 0x9f) {
			return r
		}
		return '?' // control characters would garble the terminal
	}, shown)
	col = max(col, 1)
	if cut < len(text) && col-1 > cut {
		col = cut + 1 // point at the redaction, not past it
	}
	caretRunes := []rune(shown)
	var pad strings.Builder
	for i := 0; i < col-1; i++ {
		if i < len(caretRunes) && caretRunes[i] == '\t' {
			pad.WriteByte('\t')
		} else {
			pad.WriteByte(' ')
		}
	}
	num := strconv.Itoa(line)
	gutter := strings.Repeat(" ", len(num))
	return fmt.Sprintf("  %s | %s\n  %s | %s^", num, shown, gutter, pad.String())
}

func indentOf(text []rune) int {
	for i, r := range text {
		if r != ' ' && r != '\t' {
			return i
		}
	}
	return len(text)
}

// scrub removes secret values from a message produced by the YAML parser. Very short values
// are left alone: they are not real credentials and replacing them would mangle the message.
func scrub(msg string, secrets []secretSpan) string {
	for _, s := range secrets {
		if v := strings.TrimSpace(s.value); utf8.RuneCountInString(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, redacted)
		}
	}
	return msg
}
