package discover

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

// server answers /v1/models with body and status; httptest binds 127.0.0.1 only.
func server(t *testing.T, status int, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	if host, _, _ := net.SplitHostPort(srv.Listener.Addr().String()); host != "127.0.0.1" {
		t.Fatalf("test server on %s, want loopback only", host)
	}
	return srv
}

const (
	ollamaList = `{"object":"list","data":[{"id":"llama3.2:3b","object":"model","created":1,"owned_by":"library"},{"id":"qwen3:8b","object":"model","owned_by":"library"}]}`
	vllmList   = `{"object":"list","data":[{"id":"Qwen/Qwen3-8B","object":"model","owned_by":"vllm","root":"Qwen/Qwen3-8B"}]}`
	emptyList  = `{"object":"list","data":[]}`
)

func TestLocalWith(t *testing.T) {
	ollama := server(t, 200, ollamaList)
	vllmOn8080 := server(t, 200, vllmList)
	lmStudio := server(t, 200, emptyList)
	html := server(t, 200, `<html>router admin</html>`)
	needsKey := server(t, 401, `{"error":{"message":"Unauthorized"}}`)
	forbidden := server(t, 403, `forbidden`)
	notFound := server(t, 404, `{"detail":"Not Found"}`)
	noData := server(t, 200, `{"models":[{"name":"x"}]}`)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(hang.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	candidates := []Candidate{
		{"Ollama", ollama.URL + "/v1"},
		{"llama.cpp", vllmOn8080.URL + "/v1/"},
		{"Hung", hang.URL + "/v1"},
		{"Closed", closedURL + "/v1"},
		{"HTML", html.URL + "/v1"},
		{"NeedsKey", needsKey.URL + "/v1"},
		{"NoData", noData.URL + "/v1"},
		{"Forbidden", forbidden.URL + "/v1"},
		{"NotFound", notFound.URL + "/v1"},
		{"LM Studio", lmStudio.URL + "/v1"},
	}
	start := time.Now()
	got := LocalWith(context.Background(), nil, candidates)
	took := time.Since(start)

	want := []Found{
		{Server: "Ollama", BaseURL: ollama.URL + "/v1", Models: []string{"llama3.2:3b", "qwen3:8b"}},
		{Server: "vLLM", Owned: "vLLM", BaseURL: vllmOn8080.URL + "/v1", Models: []string{"Qwen/Qwen3-8B"}},
		{Server: "NeedsKey", BaseURL: needsKey.URL + "/v1", NeedsKey: "401 Unauthorized"},
		{Server: "Forbidden", BaseURL: forbidden.URL + "/v1", NeedsKey: "403 Forbidden"},
		{Server: "LM Studio", BaseURL: lmStudio.URL + "/v1", Models: []string{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LocalWith =\n%+v\nwant\n%+v", got, want)
	}
	// Probes run in parallel: one hung server costs one timeout, not a timeout per candidate.
	if took > 4*ProbeTimeout {
		t.Errorf("LocalWith took %v with one hung candidate; probes are not parallel or not bounded", took)
	}
}

func TestLocalWithCanceledContext(t *testing.T) {
	srv := server(t, 200, ollamaList)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := LocalWith(ctx, nil, []Candidate{{"Ollama", srv.URL + "/v1"}}); len(got) != 0 {
		t.Errorf("LocalWith on a canceled context = %+v", got)
	}
}

func TestLocalCandidatesAreLoopback(t *testing.T) {
	ports := map[string]string{"Ollama": "11434", "llama.cpp": "8080", "vLLM": "8000", "LM Studio": "1234", "SGLang": "30000"}
	if len(LocalCandidates) != len(ports) {
		t.Fatalf("%d candidates, want %d", len(LocalCandidates), len(ports))
	}
	for _, c := range LocalCandidates {
		u, err := url.Parse(c.BaseURL)
		if err != nil {
			t.Fatal(err)
		}
		if u.Hostname() != "127.0.0.1" || u.Port() != ports[c.Server] || u.Path != "/v1" {
			t.Errorf("candidate %s at %s, want http://127.0.0.1:%s/v1", c.Server, c.BaseURL, ports[c.Server])
		}
	}
}

func TestModelsSendsKeyOnlyWhenGiven(t *testing.T) {
	var gotAuth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
		if r.Method != http.MethodGet || r.URL.Path != "/api/v1/models" {
			t.Errorf("%s %s, want GET /api/v1/models", r.Method, r.URL.Path)
		}
		w.Write([]byte(vllmList))
	}))
	defer srv.Close()
	for _, key := range []string{"sk-abc", ""} {
		ids, err := ModelsFor(context.Background(), srv.Client(), srv.URL+"/api/v1/", key, "")
		if err != nil || !reflect.DeepEqual(ids, []string{"Qwen/Qwen3-8B"}) {
			t.Fatalf("ModelsFor = %v, %v", ids, err)
		}
	}
	if want := []string{"Bearer sk-abc", ""}; !reflect.DeepEqual(gotAuth, want) {
		t.Errorf("Authorization headers %q, want %q", gotAuth, want)
	}
}

func TestModelsErrors(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	echo := server(t, 401, `{"error":{"message":"Incorrect API key provided: `+key+`","type":"invalid_request_error","code":"invalid_api_key"}}`)
	plain := server(t, 503, "upstream overloaded\nmore detail")
	textErr := server(t, 429, `{"error":"rate limited, key `+key+`"}`)
	bad := server(t, 200, `{"object":"list","data":[`)
	noData := server(t, 200, `{"object":"list"}`)
	noID := server(t, 200, `{"object":"list","data":[{"object":"model"}]}`)
	withUser := strings.Replace(echo.URL, "http://", "http://alice:hunter2@", 1)

	for _, tc := range []struct {
		name, baseURL string
		want          []string
	}{
		{"401 echoing the key", withUser + "/v1", []string{"401 Unauthorized", "Incorrect API key provided: [redacted]", echo.URL + "/v1/models"}},
		{"503 plain text", plain.URL + "/v1", []string{"503 Service Unavailable", "upstream overloaded"}},
		{"429 string error", textErr.URL + "/v1", []string{"429", "rate limited, key [redacted]"}},
		{"invalid JSON", bad.URL + "/v1", []string{"invalid JSON"}},
		{"no data", noData.URL + "/v1", []string{`no "data" array`}},
		{"no id", noID.URL + "/v1", []string{"model 0 has no id"}},
		{"not found", bad.URL + "/nope", []string{"404"}},
		{"not a URL", "ftp://alice:hunter2@x/" + key, []string{"not an http(s) URL"}},
		{"refused", "http://127.0.0.1:1/v1", []string{"GET http://127.0.0.1:1/v1/models"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, err := ModelsFor(context.Background(), nil, tc.baseURL, key, "")
			if err == nil {
				t.Fatalf("ModelsFor = %v, want an error", ids)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			for _, secret := range []string{key, "hunter2", "alice", "Bearer"} {
				if strings.Contains(msg, secret) {
					t.Errorf("error %q contains %q", msg, secret)
				}
			}
			if strings.Count(msg, "\n") > 0 {
				t.Errorf("error %q spans lines", msg)
			}
		})
	}
}

func TestModelsTimeout(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer hang.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := ModelsFor(ctx, nil, hang.URL+"/v1", "", "")
	if err == nil || !strings.Contains(err.Error(), "no answer in time") {
		t.Errorf("err = %v, want a timeout", err)
	}
}
