package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// ErrRequest: the request could not be built or sent at all (an extra_body that is not JSON, a
// model name go-openai refuses for chat completions). Nothing reached the network.
const ErrRequest = "request"

// contextKind classifies an end caused by a context: the caller's (canceled), our deadline
// (timeout) or our stall timer (stall). ok=false when no context ended the request.
func (c *Client) contextKind(parent, reqCtx context.Context) (kind, msg string, ok bool) {
	if parent.Err() != nil {
		return ErrCanceled, "canceled", true
	}
	cause := context.Cause(reqCtx)
	switch {
	case cause == nil:
		return "", "", false
	case errors.Is(cause, errStall):
		return ErrStall, fmt.Sprintf("no chunk for %s (stall limit)", c.ep.Stall), true
	case errors.Is(cause, errDeadline), errors.Is(cause, context.DeadlineExceeded):
		return ErrTimeout, fmt.Sprintf("no complete answer within %s (timeout)", c.ep.Timeout), true
	}
	return ErrCanceled, "canceled: " + cause.Error(), true
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
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		msg := reqErr.HTTPStatus
		if msg == "" {
			msg = strconv.Itoa(reqErr.HTTPStatusCode)
		}
		if body := strings.TrimSpace(string(reqErr.Body)); body != "" {
			msg += ": " + clip(body, 200)
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
		return ErrDNS, err.Error()
	}
	if isTLSError(err) || x.tlsFailed.Load() {
		return ErrTLS, err.Error()
	}
	// Refused, reset, closed before the response: all are failures to get a connection
	// that answers, which is what "connect" tells the user.
	return ErrConnect, err.Error()
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
	if e.Code != nil {
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

func isEventStream(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}
