package apiwire

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Error is an error inside a stream: an error object ({"message", "code", "type"}) or a bare
// string.
type Error struct {
	Message, Code, Type string
}

// UnmarshalJSON reads an error object or a bare string; anything else is kept as its text
// (clipped to Keep bytes), so that the message says what came.
func (e *Error) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &e.Message)
	}
	var o struct {
		Message json.RawMessage `json:"message"`
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		e.Message = clip(string(b), Keep) // the caller shortens it after redacting
		return nil
	}
	e.Message, e.Code, e.Type = rawText(o.Message), rawText(o.Code), o.Type
	if e.Message == "" {
		e.Message = clip(string(b), Keep) // the caller shortens it after redacting
	}
	return nil
}

// rawText renders a JSON string, number or array of strings as plain text.
func rawText(b json.RawMessage) string {
	if len(b) == 0 || string(b) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		return s
	}
	var ss []string
	if json.Unmarshal(b, &ss) == nil {
		return strings.Join(ss, ", ")
	}
	return string(b)
}

// Text is the error as one message: its text and its code (or type).
func (e *Error) Text() string {
	msg := e.Message
	if msg == "" {
		msg = "error"
	}
	if e.Code != "" {
		msg += " (code " + e.Code + ")"
	} else if e.Type != "" {
		msg += " (type " + e.Type + ")"
	}
	return msg
}

// ErrorText is the message of a JSON error body in the shapes the APIs and their servers send
// ({"error": {…}} or {"error": "…"}: OpenAI, Anthropic, Ollama; a top-level message and code;
// FastAPI's detail list); "" when none applies.
func ErrorText(body []byte) string {
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return ""
	}
	if len(doc.Error) > 0 && string(doc.Error) != "null" {
		var e Error
		if e.UnmarshalJSON(doc.Error) == nil && e.Message != "" {
			return e.Text()
		}
	}
	if m := rawText(doc.Message); m != "" {
		e := Error{Message: m, Code: rawText(doc.Code), Type: doc.Type}
		return e.Text()
	}
	if len(doc.Detail) > 0 {
		var items []struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal(doc.Detail, &items) == nil {
			var msgs []string
			for _, it := range items {
				if it.Msg != "" {
					msgs = append(msgs, it.Msg)
				}
			}
			return strings.Join(msgs, "; ")
		}
		return rawText(doc.Detail)
	}
	return ""
}
