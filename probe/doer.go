package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"tokscope/apiwire"
	"tokscope/config"
	"tokscope/redact"
)

// doer is the go-openai HTTPDoer. It does what go-openai cannot: merges the endpoint's extra
// body fields into the JSON request (temperature: 0, ignore_eos, continuous_usage_stats),
// forces stream_options.include_usage, adds extra headers and the key (read per request), and
// hands the response status and headers back through the exchange in the request context —
// go-openai drops them on errors, and Retry-After lives there.
//
// It also replaces dead kept-alive connections (conn.go): a request that failed on a reused
// connection before any byte of a response is sent again once, through fresh, on a new
// connection; and on a server that closes every connection, every request goes through fresh.
type doer struct {
	hc    *http.Client // the pool
	fresh *http.Client // a new connection per request
	conns *connWatch
	ep    config.Endpoint
	extra map[string]json.RawMessage // ExtraBody, marshalled once; nil when there is none
	api   apiwire.API
}

func newDoer(ep config.Endpoint, hc, fresh *http.Client, conns *connWatch) *doer {
	d := &doer{hc: hc, fresh: fresh, conns: conns, ep: ep, api: apiwire.Of(ep)}
	if len(ep.ExtraBody) == 0 {
		return d // the body already carries stream_options.include_usage where the API has it
	}
	d.extra = make(map[string]json.RawMessage, len(ep.ExtraBody)+1)
	for k, v := range ep.ExtraBody {
		if k == "stream" {
			continue // the engine measures streams; stream:false would defeat it
		}
		b, err := json.Marshal(v)
		if err != nil {
			continue // config validates ExtraBody; an unencodable value is dropped, not fatal
		}
		d.extra[k] = b
	}
	if !d.api.UsageOption() {
		return d // no stream_options: Anthropic's and the Responses API refuse unknown fields
	}
	opts := map[string]any{}
	if so, ok := ep.ExtraBody["stream_options"].(map[string]any); ok {
		for k, v := range so {
			opts[k] = v
		}
	}
	opts["include_usage"] = true
	d.extra["stream_options"], _ = json.Marshal(opts)
	return d
}

func (d *doer) Do(req *http.Request) (*http.Response, error) {
	x, _ := req.Context().Value(exchangeKey{}).(*exchange)
	var fields map[string]json.RawMessage
	if x != nil {
		fields = x.fields
	}
	if (d.extra != nil || fields != nil) && req.Body != nil {
		if err := d.mergeBody(req, fields); err != nil {
			return nil, err
		}
	}
	for k, v := range d.ep.HeaderValues() {
		req.Header.Set(k, v)
	}
	apiwire.SetAuth(req.Header, d.ep, d.api)
	if x != nil {
		x.sent = true
	}
	hc := d.hc
	if d.conns.closesEvery() {
		hc = d.fresh
	}
	resp, err := hc.Do(req)
	if err != nil && x != nil && x.deadConn(req) {
		if body, berr := req.GetBody(); berr == nil {
			again := req.Clone(req.Context())
			again.Body = body
			x.freshSent = true
			resp, err = d.fresh.Do(again)
		}
	}
	if x != nil && resp != nil {
		x.status = resp.StatusCode
		x.header = resp.Header
		x.resp = resp
		x.tail = &tailBody{ReadCloser: resp.Body}
		if resp.StatusCode < 200 || resp.StatusCode >= 400 { // go-openai reads it whole as an error body
			x.tail.bound = bound{limit: maxErrorBody, eofAt: true}
		} else {
			x.tail.bound = bound{limit: responseLimit(x.maxTokens), maxTokens: x.maxTokens}
		}
		resp.Body = x.tail
	}
	return resp, err
}

// mergeBody sets the endpoint's extra_body fields, then the request's own fields, in the
// JSON body go-openai built.
func (d *doer) mergeBody(req *http.Request, fields map[string]json.RawMessage) error {
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return fmt.Errorf("reading request body: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("merging extra_body: %w", err)
	}
	for k, v := range d.extra {
		m[k] = v
	}
	for k, v := range fields {
		m[k] = v
	}
	body, err = json.Marshal(m)
	if err != nil {
		return fmt.Errorf("merging extra_body: %w", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return nil
}

// redactFor removes the key and every extra header value from a message: servers echo
// credentials in error bodies more often than one would hope.
func redactFor(msg string, ep config.Endpoint) string {
	if msg == "" {
		return msg
	}
	secrets := []string{ep.APIKey(), redact.Password(ep.BaseURL)}
	for _, v := range ep.HeaderValues() {
		secrets = append(secrets, v)
		if f := strings.Fields(v); len(f) == 2 { // "Bearer xyz": hide xyz alone too
			secrets = append(secrets, f[1])
		}
	}
	return redact.Text(msg, secrets...)
}

// tailBody keeps the last bytes of a response body: when go-openai swallows an error event
// (RecvRaw returns nil, nil) or the server ignored stream:true, the text is still here. It
// also stops the body at its bounds (bounds.go): an error body ends at maxErrorBody, a
// stream fails at an over-long line or past responseLimit.
type tailBody struct {
	io.ReadCloser
	buf     []byte
	trimmed bool // the start of the body was dropped
	bound   bound
	stop    error // the bound that ended the body; every later Read returns it
}

const tailKeep = 4096

func (t *tailBody) Read(p []byte) (int, error) {
	if t.stop != nil {
		if t.stop == errBodyLimit {
			return 0, io.EOF
		}
		return 0, t.stop
	}
	n, err := t.ReadCloser.Read(p)
	if n > 0 {
		var stop error
		if n, stop = t.bound.take(p[:n]); stop != nil {
			t.stop, err = stop, stop
			if stop == errBodyLimit {
				err = io.EOF // classify what was read
			}
		}
	}
	if n > 0 {
		t.buf = append(t.buf, p[:n]...)
		if len(t.buf) > 2*tailKeep {
			t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailKeep:]...)
			t.trimmed = true
		}
	}
	return n, err
}

// errorText finds the last `data: {"error": …}` event in the tail and returns its message.
func (t *tailBody) errorText() string {
	if t == nil {
		return "unparsed error event"
	}
	lines := bytes.Split(t.buf, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		line := bytes.TrimSpace(lines[i])
		line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("data:")))
		if !bytes.HasPrefix(line, []byte("{")) || !bytes.Contains(line, []byte(`"error"`)) {
			continue
		}
		var ev struct {
			Error *apiwire.Error `json:"error"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Error != nil {
			return ev.Error.Text()
		}
		return clip(string(line), tailKeep)
	}
	return "unparsed error event"
}

// text is the readable part of what the tail holds (see bodyText), for messages about
// unexpected bodies. When the start of the body was dropped, the first, partial word is
// dropped too: it may be the end of an echoed secret that redact could not recognise.
func (t *tailBody) text() string {
	if t == nil {
		return ""
	}
	b := t.buf
	if t.trimmed {
		if i := bytes.IndexAny(b, " \t\r\n<>\"'"); i >= 0 {
			b = b[i:]
		} else {
			b = nil
		}
	}
	return bodyText(b)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
