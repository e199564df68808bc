package promexport

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"tokscope/config"
	"tokscope/probe"
	"tokscope/sample"
)

const (
	leakKeyEnv = "TOKSCOPE_METRICS_HARDENING_KEY"
	leakKey    = "sk-metrics-leak-4c1d2e3f5a6b7c8d"
	leakHdrEnv = "TOKSCOPE_METRICS_HARDENING_HDR"
	leakHdr    = "hdr-metrics-leak-0a9b8c7d6e"
)

// echoHeaders writes every credential the request carried.
func echoHeaders(r *http.Request) string {
	return fmt.Sprintf("auth=%q x-api-key=%q", r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
}

// TestExpositionNeverHoldsKeys runs real requests, with a key and a credential header from
// the environment, against servers that echo both back — in a 401 body, a 500 plain-text
// body, and an error event inside a 200 stream — feeds every event to an Exporter, and greps
// the exposition: labels and values never carry the key, the header or "Bearer".
func TestExpositionNeverHoldsKeys(t *testing.T) {
	t.Setenv(leakKeyEnv, leakKey)
	t.Setenv(leakHdrEnv, leakHdr)
	handlers := []http.HandlerFunc{
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error","code":"invalid_api_key"}}`, echoHeaders(r))
		},
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "proxy failure for request with "+echoHeaders(r))
		},
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"choices":[{"delta":{"content":" hi"}}]}`+"\n\n")
			fmt.Fprintf(w, "data: {\"error\":{\"message\":%q,\"code\":%q}}\n\n", "upstream rejected "+echoHeaders(r), leakKey)
		},
	}
	var eps []config.Endpoint
	for i, h := range handlers {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		eps = append(eps, config.Endpoint{Name: fmt.Sprintf("echo-%d", i), BaseURL: srv.URL + "/v1", Model: "m",
			Prompt: "hi", MaxTokens: 8, Concurrency: 1, Timeout: 10 * time.Second, Stall: 10 * time.Second,
			APIKeyEnv: leakKeyEnv, Headers: map[string]string{"X-Api-Key": "${" + leakHdrEnv + "}"}})
	}

	e := New(eps)
	r := probe.NewRunner(eps, probe.Options{Requests: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	var messages []string
	for ev := range r.Events() {
		switch ev := ev.(type) {
		case *sample.Started:
			e.Started(eps[ev.Endpoint].Name, ev.Seq)
		case *sample.Done:
			e.Observe(&ev.Sample)
			messages = append(messages, ev.Sample.ErrorKind+": "+ev.Sample.ErrorMessage)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the run did not finish")
	}

	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{`error_type="http_401"`, `error_type="http_500"`, `error_type="stream_error"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the exposition lacks %s: the failures were not observed, the test proves nothing", want)
		}
	}
	sort.Strings(messages)
	for _, m := range messages {
		if !strings.Contains(m, "[redacted]") {
			t.Errorf("message without the echoed credentials (the servers echo them): %q", m)
		}
	}
	for _, needle := range []string{leakKey, leakKey[3:15], leakKey[len(leakKey)-12:], leakHdr, leakHdr[4:], "Bearer"} {
		if strings.Contains(body, needle) {
			i := strings.Index(body, needle)
			t.Errorf("the exposition holds %q: …%s…", needle, body[max(0, i-120):min(len(body), i+60)])
		}
		for _, m := range messages {
			if needle != "Bearer" && strings.Contains(m, needle) { // "Bearer [redacted]" is fine there
				t.Errorf("a sample's message holds %q: %s", needle, m)
			}
		}
	}
}
