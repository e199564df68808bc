package watch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCanaryBesideTheServersClock: the canary asks the server's first model, streams the
// real llama.cpp b10470 capture (apiwire/testdata/captures) and returns the client's figures
// beside the server's own timings of that request.
func TestCanaryBesideTheServersClock(t *testing.T) {
	sse, err := os.ReadFile(filepath.Join("..", "apiwire", "testdata", "captures", "llamacpp-b10470", "chat-completions.sse"))
	if err != nil {
		t.Fatal(err)
	}
	var posts int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
			w.Write([]byte(`{"object":"list","data":[{"id":"random-tiny","object":"model"}]}`))
		case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
			posts++
			w.Header().Set("Content-Type", "text/event-stream")
			for _, event := range strings.SplitAfter(string(sse), "\n\n") { // spaced, as a server streams
				w.Write([]byte(event))
				w.(http.Flusher).Flush()
				time.Sleep(5 * time.Millisecond)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	tg, _ := NewTarget(srv.URL, "url")
	res := Canary(context.Background(), tg, "")
	if res.Error != "" || posts != 1 || res.Model != "random-tiny" {
		t.Fatalf("canary: %+v, %d requests", res, posts)
	}
	if res.Tokens != 5 || res.TTFTms == nil || res.DecodeTPS == nil {
		t.Fatalf("client figures: %+v", res)
	}
	// Five tokens, 5 ms apart: 4 gaps of ≥ 5 ms, so at most 200 tok/s.
	if *res.DecodeTPS > 200 || *res.DecodeTPS <= 0 || *res.TTFTms <= 0 {
		t.Errorf("client TTFT %v ms, decode %v tok/s", *res.TTFTms, *res.DecodeTPS)
	}
	near(t, "server TTFT (prompt_ms)", res.ServerTTFTms, 3.201)
	near(t, "server decode ((predicted_n-1)/predicted_ms)", res.ServerDecodeTPS, 4/1.162*1000)

	dead := Canary(context.Background(), Target{URL: "http://127.0.0.1:9"}, "")
	if !strings.HasPrefix(dead.Error, "no model to ask: connection refused") {
		t.Errorf("dead server: %q", dead.Error)
	}
}
