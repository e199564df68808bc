package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"html"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"tokscope/apiwire"
	"tokscope/sample"

	openai "github.com/sashabaranov/go-openai"
)

// ErrRequest: the request could not be built or sent at all (an extra_body that is not JSON, a
// model name go-openai refuses for chat completions). Nothing reached the network.
const ErrRequest = "request"

// ctxEnd is contextKind's answer, taken when reading a stream ended.
type ctxEnd struct {
	kind, msg string
	ok        bool
}

// contextKind classifies an end caused by a context: the caller's (canceled), our deadline
// (timeout) or our stall timer (stall). ok=false when no context ended the request.
func (c *Client) contextKind(parent, reqCtx context.Context) (kind, msg string, ok bool) {
	if parent.Err() != nil {
		return sample.ErrCanceled, "canceled", true
	}
	cause := context.Cause(reqCtx)
	switch {
	case cause == nil:
		return "", "", false
	case errors.Is(cause, errStall):
		return sample.ErrStall, fmt.Sprintf("no chunk for %s (stall limit)", c.ep.Stall), true
	case errors.Is(cause, errDeadline), errors.Is(cause, context.DeadlineExceeded):
		return sample.ErrTimeout, fmt.Sprintf("no complete answer within %s (timeout)", c.ep.Timeout), true
	}
	return sample.ErrCanceled, "canceled: " + cause.Error(), true
}

// classifyRequestError classifies a failure before the stream started: no response, or a
// non-2xx one.
func (c *Client) classifyRequestError(parent, reqCtx context.Context, err error, x *exchange) (kind, msg string) {
	if kind, msg, ok := c.contextKind(parent, reqCtx); ok {
		return kind, msg
	}
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) && apiErr.HTTPStatusCode > 0 {
		return "http_" + strconv.Itoa(apiErr.HTTPStatusCode), apiErrorText(apiErr)
	}
	var se *statusError
	if errors.As(err, &se) {
		return "http_" + strconv.Itoa(se.status), se.message()
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		msg := reqErr.HTTPStatus
		if msg == "" {
			msg = strconv.Itoa(reqErr.HTTPStatusCode)
		}
		if body := bodyText(reqErr.Body); body != "" && !strings.Contains(msg, body) {
			msg += ": " + body
		}
		return "http_" + strconv.Itoa(reqErr.HTTPStatusCode), msg
	}
	if x.status >= 400 { // defensive: a failure status go-openai did not type
		return "http_" + strconv.Itoa(x.status), strconv.Itoa(x.status) + ": " + err.Error()
	}
	if !x.sent {
		return ErrRequest, err.Error()
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return sample.ErrDNS, err.Error()
	}
	if isTLSError(err) || x.tlsFailed.Load() {
		return sample.ErrTLS, err.Error()
	}
	// Refused, reset, closed before the response: all are failures to get a connection
	// that answers, which is what "connect" tells the user.
	return sample.ErrConnect, err.Error()
}

func isTLSError(err error) bool {
	var (
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
		verErr   *tls.CertificateVerificationError
		authErr  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		certErr  x509.CertificateInvalidError
	)
	return errors.As(err, &recErr) || errors.As(err, &alertErr) || errors.As(err, &verErr) ||
		errors.As(err, &authErr) || errors.As(err, &hostErr) || errors.As(err, &certErr)
}

// apiErrorText is "<status>: <message> (code …)"; go-openai's own Error() repeats the status
// twice and omits the code.
func apiErrorText(e *openai.APIError) string {
	var b strings.Builder
	if e.HTTPStatus != "" {
		b.WriteString(e.HTTPStatus)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	code := ""
	if e.Code != nil && e.Code != 0 { // go-openai turns "code": null (OpenAI's 5xx) into 0
		code = fmt.Sprint(e.Code)
	}
	switch {
	case code != "":
		b.WriteString(" (code " + code + ")")
	case e.Type != "":
		b.WriteString(" (type " + e.Type + ")")
	}
	return b.String()
}

// maxRetryAfter bounds a server's Retry-After: an absurd value (hours) would silently freeze an
// endpoint; ten minutes is visible as a back-off and still honours every sane server.
const maxRetryAfter = 10 * time.Minute

// retryAfter reads retry-after-ms (OpenAI, Azure) or Retry-After (seconds or an HTTP date);
// 0 when absent.
func retryAfter(h http.Header, now time.Time) time.Duration {
	var d time.Duration
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms > 0 {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); d == 0 && v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 {
			d = time.Duration(secs * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = t.Sub(now)
		}
	}
	return min(max(d, 0), maxRetryAfter)
}

func headerInt(h http.Header, name string) int {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

func contentType(h http.Header) string {
	ct := h.Get("Content-Type")
	if ct == "" {
		return "no content type"
	}
	return ct
}

// rateLimitHeader reads the first of names that is present (OpenAI's x-ratelimit-*, then
// Anthropic's anthropic-ratelimit-*); -1 when none is.
func rateLimitHeader(h http.Header, names ...string) int {
	for _, n := range names {
		if v := headerInt(h, n); v >= 0 {
			return v
		}
	}
	return -1
}

// statusError is a non-2xx answer of an API the engine sends itself (chat's are go-openai's).
type statusError struct {
	status int
	text   string // "404 Not Found"
	body   []byte
}

func (e *statusError) Error() string { return e.message() }

// message is "<status>: <the body's message>", as chat's apiErrorText.
func (e *statusError) message() string {
	msg := e.text
	if msg == "" {
		msg = strconv.Itoa(e.status)
	}
	if b := bodyText(e.body); b != "" {
		msg += ": " + b
	}
	return msg
}

func isNDJSON(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "application/x-ndjson"
}

func isEventStream(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// maxMessage bounds Sample.ErrorMessage, in runes: it is shown on one line of a card, kept
// for every failed request and written to records.
const maxMessage = 300

// readable makes a message one short line: valid UTF-8, no control characters (a server's
// ANSI escapes or carriage returns must not reach the terminal), white space collapsed, at
// most maxMessage runes. It runs after redact, so that no cut can leave part of a secret that
// redact would no longer recognise.
func readable(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if utf8.RuneCountInString(s) <= maxMessage {
		return s
	}
	n := 0
	for i := range s {
		if n == maxMessage-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// maxBodyScan bounds the work spent reading a message out of an error body.
const maxBodyScan = 64 << 10

// bodyText is the readable part of an error body: the message of the JSON error shapes that
// OpenAI-compatible servers use ({"error": {"message"}}, {"error": "…"} (Ollama),
// {"message"} (vLLM), {"detail"} (FastAPI)), the title or text of an HTML page (proxies,
// CDNs, web UIs), else the text itself. The caller makes it one short line.
func bodyText(body []byte) string {
	body = bytes.TrimSpace(body[:min(len(body), maxBodyScan)])
	switch {
	case len(body) == 0:
		return ""
	case body[0] == '{':
		if t := apiwire.ErrorText(body); t != "" {
			return t
		}
	case body[0] == '<':
		return htmlText(string(body))
	}
	return string(body)
}

// htmlText is an HTML page's title, else its visible text: scripts, styles, comments and
// tags removed, entities decoded.
func htmlText(page string) string {
	lower := strings.ToLower(page)
	if i := strings.Index(lower, "<title"); i >= 0 {
		if j := strings.IndexByte(lower[i:], '>'); j >= 0 {
			start := i + j + 1
			if end := strings.Index(lower[start:], "</title"); end >= 0 {
				if t := strings.Join(strings.Fields(html.UnescapeString(page[start:start+end])), " "); t != "" {
					return t
				}
			}
		}
	}
	var b strings.Builder
	for i := 0; i < len(page); {
		if page[i] != '<' {
			j := strings.IndexByte(page[i:], '<')
			if j < 0 {
				j = len(page) - i
			}
			b.WriteString(page[i : i+j])
			i += j
			continue
		}
		skipTo := ">"
		switch {
		case strings.HasPrefix(lower[i:], "<!--"):
			skipTo = "-->"
		case strings.HasPrefix(lower[i:], "<script"):
			skipTo = "</script>"
		case strings.HasPrefix(lower[i:], "<style"):
			skipTo = "</style>"
		}
		j := strings.Index(lower[i:], skipTo)
		if j < 0 {
			break
		}
		i += j + len(skipTo)
		b.WriteByte(' ')
	}
	return strings.Join(strings.Fields(html.UnescapeString(b.String())), " ")
}

// redirectMessage says where a redirect that was not followed pointed, and what to do.
func redirectMessage(x *exchange) string {
	msg := strconv.Itoa(x.status) + " " + http.StatusText(x.status)
	target := "(no Location)"
	if x.resp != nil {
		if u, err := x.resp.Location(); err == nil {
			u.User = nil
			target = u.String()
		}
	}
	return msg + ": redirect to " + target + " not followed (only same-origin 307/308 redirects are): set base_url to the final URL"
}
