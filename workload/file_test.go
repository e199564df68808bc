package workload

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseGood(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		first   []string // each item's first message text
		max     []int
		skipped int
	}{
		{"jsonl prompts", "{\"prompt\": \"a\"}\n{\"prompt\": \"b\", \"max_tokens\": 3}\n", []string{"a", "b"}, []int{0, 3}, 0},
		{"blank lines, CRLF, BOM, no final newline", "\ufeff\r\n{\"prompt\": \"a\"}\r\n\r\n  \n{\"prompt\": \"b\"}", []string{"a", "b"}, []int{0, 0}, 0},
		{"unknown keys are kept out", `{"id": 7, "category": "qa", "prompt": "a"}`, []string{"a"}, []int{0}, 0},
		{"messages", `{"messages": [{"role": "system", "content": "s", "name": "x"}, {"role": "user", "content": "u"}], "max_tokens": 10}`,
			[]string{"s"}, []int{10}, 0},
		{"sharegpt jsonl", `{"id": "x", "conversations": [{"from": "gpt", "value": "hi"}, {"from": "human", "value": "q1"}, {"from": "human", "value": "q2"}]}`,
			[]string{"q1"}, []int{0}, 0},
		{"sharegpt array", "[\n  {\"id\": \"1\", \"conversations\": [{\"from\": \"human\", \"value\": \"[not] {a} \\\"bracket\\\"\"}]},\n" +
			"  {\"id\": \"2\", \"conversations\": []},\n  {\"conversations\": [{\"from\": \"system\", \"value\": \"s\"}, {\"from\": \"user\", \"value\": \"q\"}]}\n]\n",
			[]string{`[not] {a} "bracket"`, "q"}, []int{0, 0}, 1},
		{"lmsys-style turns", `{"conversations": [{"role": "user", "content": "c"}]}`, []string{"c"}, []int{0}, 0},
		{"array of plain entries", `[{"prompt": "a"}, {"messages": [{"role": "user", "content": "b"}]}]`, []string{"a", "b"}, []int{0, 0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := Parse("p", strings.NewReader(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if len(set.Items) != len(tt.first) || set.Skipped != tt.skipped || set.Truncated {
				t.Fatalf("%d items, %d skipped, truncated %v: %+v", len(set.Items), set.Skipped, set.Truncated, set.Items)
			}
			for i, it := range set.Items {
				if it.Messages[0].Content != tt.first[i] || it.MaxTokens != tt.max[i] {
					t.Errorf("item %d = %+v, want %q max %d", i, it, tt.first[i], tt.max[i])
				}
			}
		})
	}
}

func TestParseLines(t *testing.T) {
	set, err := Parse("p", strings.NewReader("\n{\"prompt\": \"a\"}\n\n{\"prompt\": \"b\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if set.Items[0].Line != 2 || set.Items[1].Line != 4 {
		t.Errorf("lines %d %d, want 2 4", set.Items[0].Line, set.Items[1].Line)
	}
	arr, err := Parse("p", strings.NewReader("[\n{\"prompt\": \"a\"},\n\n  {\"prompt\":\n \"b\"}]"))
	if err != nil {
		t.Fatal(err)
	}
	if arr.Items[0].Line != 2 || arr.Items[1].Line != 4 {
		t.Errorf("array lines %d %d, want 2 4", arr.Items[0].Line, arr.Items[1].Line)
	}
}

// TestParseErrors: every bad entry is an error naming file:line and what is wrong.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"not json", "{\"prompt\": \"a\"}\nhello\n", 2, "p.jsonl:2: invalid character 'h'"},
		{"not an object", "{\"prompt\": \"a\"}\n\n[1, 2]\n", 3, "p.jsonl:3: an entry must be a JSON object"},
		{"a string line", "\"a\"\n", 1, "an entry must be a JSON object"},
		{"no prompt", `{"id": 1}`, 1, `an entry needs "prompt", "messages" or "conversations" (ShareGPT)`},
		{"both", `{"prompt": "a", "messages": []}`, 1, `not both "messages" and "prompt"`},
		{"misspelt key", `{"promt": "a"}`, 1, `p.jsonl:1:2: unknown key "promt"; did you mean "prompt"?` + "\n  1 | {\"promt\": \"a\"}\n    |  ^"},
		{"misspelt message key", "{\"prompt\": \"a\"}\n  {\"messages\": [{\"role\": \"user\", \"contnet\": \"x\"}]}", 2,
			`p.jsonl:2:34: unknown key "contnet"; did you mean "content"?`},
		{"misspelt turn key", "[\n {\"id\": \"a\",\n  \"conversations\": [\n    {\"from\": \"human\", \"vaule\": \"hi\"}]}\n]", 4,
			`p.jsonl:4:23: unknown key "vaule"; did you mean "value"?`},
		{"misspelt max_tokens", `{"prompt": "a", "max_token": 5}`, 1, `did you mean "max_tokens"?`},
		{"empty prompt", `{"prompt": "  "}`, 1, `"prompt" is empty`},
		{"prompt a number", `{"prompt": 5}`, 1, `"prompt" must be a string`},
		{"max_tokens zero", `{"prompt": "a", "max_tokens": 0}`, 1, `"max_tokens" must be a whole number from 1 to 1048576, got 0`},
		{"max_tokens float", `{"prompt": "a", "max_tokens": 1.5}`, 1, "got 1.5"},
		{"max_tokens string", `{"prompt": "a", "max_tokens": "5"}`, 1, `got "5"`},
		{"messages empty", `{"messages": []}`, 1, `"messages" is empty`},
		{"messages an object", `{"messages": {"role": "user"}}`, 1, `"messages" must be a list`},
		{"message without role", `{"messages": [{"content": "a"}]}`, 1, `messages[0] has no "role"`},
		{"message without content", `{"messages": [{"role": "user", "content": "a"}, {"role": "user"}]}`, 1, `messages[1] has no "content"`},
		{"content a number", `{"messages": [{"role": "user", "content": 5}]}`, 1, "messages[0].content must be a string or a list of text parts"},
		{"image part", `{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}`, 1,
			`messages[0].content[0]: only {"type": "text", "text": "…"} parts are supported, got type "image_url"`},
		{"no text", `{"messages": [{"role": "user", "content": " "}]}`, 1, `"messages" hold no text`},
		{"conversations wrong", `{"conversations": [{"from": "human", "value": 5}]}`, 1, `"conversations" must be a list of {"from": "human", "value": "…"}`},
		{"empty file", "\n\n", 0, "p.jsonl: no prompts: write one JSON object a line"},
		{"only skipped", `[{"conversations": []}, {"conversations": [{"from": "gpt", "value": "x"}]}]`, 0, "none of its 2 conversations has a human turn"},
		{"array entry bad", "[\n {\"prompt\": \"a\"},\n {\"prompt\":\n   nope}\n]", 4, "p.jsonl:4: invalid character 'o' in literal null"},
		{"array scalar entry", "[{\"prompt\": \"a\"}, 5]", 1, "an entry must be a JSON object {…}, got '5'"},
		{"array trailing comma", "[{\"prompt\": \"a\"},\n]", 2, `an entry must be a JSON object {…}, got ']'`},
		{"array not closed", "[{\"prompt\": \"a\"}", 1, "the JSON array is not closed"},
		{"array cut in an entry", "[{\"prompt\": \"a\"},\n{\"prompt\": \"b", 2, "the file ends inside this entry"},
		{"array missing comma", "[{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}]", 2, "expected , or ] after an entry, got '{'"},
		{"array trailing data", "[{\"prompt\": \"a\"}]\nx", 2, "unexpected 'x' after the end of the JSON array"},
		{"array empty", "[]", 0, "no prompts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.jsonl", strings.NewReader(tt.src))
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *FileError", err)
			}
			if fe.Line != tt.line || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %q (line %d), want line %d and %q", err, fe.Line, tt.line, tt.msg)
			}
		})
	}
}

// TestParseBounds: an over-long line is an error, not an allocation without end; reading
// stops at MaxItems and says so.
func TestParseBounds(t *testing.T) {
	long := `{"prompt": "` + strings.Repeat("a", MaxEntryBytes) + `"}`
	_, err := Parse("p", strings.NewReader("{\"prompt\": \"a\"}\n"+long+"\n"))
	if err == nil || !strings.Contains(err.Error(), "p:2: line is longer than 8 MiB") {
		t.Errorf("long line: %v", err)
	}
	_, err = Parse("p", strings.NewReader("[\n"+long+"]"))
	if err == nil || !strings.Contains(err.Error(), "p:2: entry is longer than 8 MiB") {
		t.Errorf("long entry: %v", err)
	}

	var b bytes.Buffer
	for range MaxItems + 10 {
		b.WriteString("{\"prompt\": \"p\"}\n")
	}
	b.WriteString("not json\n") // beyond the bound: never read
	set, err := Parse("p", &b)
	if err != nil || len(set.Items) != MaxItems || !set.Truncated {
		t.Errorf("truncation: %v items, truncated %v, err %v", len(set.Items), set != nil && set.Truncated, err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.jsonl")
	if err := os.WriteFile(path, []byte(`{"prompt": "a"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if set, err := Load(path); err != nil || set.Path != path || len(set.Items) != 1 {
		t.Errorf("Load = %+v, %v", set, err)
	}
	_, err := Load(filepath.Join(dir, "missing.jsonl"))
	if err == nil || err.Error() != filepath.Join(dir, "missing.jsonl")+": cannot read prompts: no such file or directory" {
		t.Errorf("missing: %v", err)
	}
}

// FuzzParse: the parser never panics; an error is a *FileError whose line is inside the
// file; what it accepts has at least one entry, each with text to send.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"prompt": "a", "max_tokens": 3}`,
		"{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"x\"}]}]}\n{\"prompt\": \"b\"}",
		`[{"conversations": [{"from": "human", "value": "q"}]}, {"conversations": []}]`,
		"[\n{\"prompt\": \"a\\\"]}\"}\n]",
		"\ufeff[]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		set, err := Parse("f", bytes.NewReader(src))
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *FileError: %v", err, err)
			}
			if lines := bytes.Count(src, []byte("\n")) + 1; fe.Line < 0 || fe.Line > lines {
				t.Fatalf("line %d outside the file's %d lines: %v", fe.Line, lines, err)
			}
			if !strings.HasPrefix(err.Error(), "f:") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(set.Items) == 0 {
			t.Fatal("accepted a file without prompts")
		}
		for _, it := range set.Items {
			text := ""
			for _, m := range it.Messages {
				text += m.Content + strings.Join(m.Parts, "")
				if m.Role == "" {
					t.Fatalf("message without a role: %+v", it)
				}
			}
			if strings.TrimSpace(text) == "" {
				t.Fatalf("accepted an entry without text: %+v", it)
			}
			if it.MaxTokens < 0 || it.Line < 1 {
				t.Fatalf("bad item %+v", it)
			}
		}
	})
}
