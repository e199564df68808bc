// Package redact takes secrets out of text before it is shown, logged or written: a server's
// error message that echoes the key it rejected, a URL with user:pass@ or ?api_key= in it.
// probe (request errors), discover (model lists), report (the run's settings) and cli (flag
// errors) all redact through it, so that there is one rule to audit.
//
// It uses only the standard library and imports no tokscope package.
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mark replaces what was taken out.
const Mark = "[redacted]"

// minSecret is the shortest secret Text replaces: a shorter one would also cut ordinary
// words out of the message, and no real key is that short.
const minSecret = 4

// bearer is a bearer token Text was not told of (a proxy's, a server echoing another one).
var bearer = regexp.MustCompile(`Bearer\s+[A-Za-z0-9._~+/=-]+`)

// Text is text with every secret of at least 4 bytes replaced by Mark, and every
// "Bearer <token>" too.
func Text(text string, secrets ...string) string {
	if text == "" {
		return text
	}
	for _, s := range secrets {
		if len(s) >= minSecret {
			text = strings.ReplaceAll(text, s, Mark)
		}
	}
	return bearer.ReplaceAllString(text, "Bearer "+Mark)
}

// URL is raw fit to be shown: an absolute URL without its user info (user:pass@) and with
// its query (where keys hide: ?api_key=) replaced by Mark; a value that looks like a URL but
// does not parse as one (a scheme-less user:pass@host, a space in the password) without
// everything before its last '@'. Anything else is returned as it is.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err == nil && u.Scheme != "" && u.Host != "" {
		if u.User == nil && u.RawQuery == "" {
			return raw
		}
		u.User = nil
		if u.RawQuery != "" {
			u.RawQuery = Mark
		}
		return u.String()
	}
	at := strings.LastIndexByte(raw, '@')
	if at >= 0 && (err != nil || u.Opaque != "" || strings.Contains(raw, "://")) {
		return "…" + raw[at:]
	}
	return raw
}

// Password is the password of a URL's user info ("" without one): a secret Text should take
// out of messages about that URL.
func Password(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		pw, _ := u.User.Password()
		return pw
	}
	return ""
}
