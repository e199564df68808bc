package redact

import "testing"

func TestText(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"", ""},
		{"Incorrect API key provided: sk-live-123456", "Incorrect API key provided: " + Mark},
		{"sk-live-123456 twice sk-live-123456", Mark + " twice " + Mark},
		{"header Authorization: Bearer abc.DEF-123_x~/+=", "header Authorization: Bearer " + Mark},
		{"pw hunter2 echoed", "pw " + Mark + " echoed"},
		{"abc is too short to be a key", "abc is too short to be a key"},
	} {
		if got := Text(tc.text, "sk-live-123456", "hunter2", "abc", ""); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestURL(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"},
		{"https://user:pw-secret@api.example.com/v1", "https://api.example.com/v1"},
		{"https://tok@api.example.com/v1", "https://api.example.com/v1"},
		{"https://llm.example.com/v1?api_key=sk-123", "https://llm.example.com/v1?" + Mark},
		{"http://us er:pw@host/v1", "…@host/v1"},    // does not parse
		{"user:pw-secret@host:4318", "…@host:4318"}, // no scheme: user:pw looks like one
		{"me@example.com", "me@example.com"},        // not a URL
		{"--requests", "--requests"},
		{"", ""},
	} {
		if got := URL(tc.raw); got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func TestPassword(t *testing.T) {
	if got := Password("https://user:pw-secret@h/v1"); got != "pw-secret" {
		t.Errorf("Password = %q, want pw-secret", got)
	}
	if got := Password("https://h/v1"); got != "" {
		t.Errorf("Password without user info = %q", got)
	}
}
