package discover

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
)

// ollama serves Ollama 0.17.4's captured /v1/models and /api/tags (testdata), and records the
// headers of each request.
func ollama(t *testing.T, headers *[]http.Header) *httptest.Server {
	t.Helper()
	read := func(f string) []byte {
		b, err := os.ReadFile("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	models, tags := read("v1-models.json"), read("api-tags.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if headers != nil {
			*headers = append(*headers, r.Header.Clone())
		}
		switch r.URL.Path {
		case "/v1/models":
			_, _ = w.Write(models)
		case "/api/tags":
			_, _ = w.Write(tags)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestModelsForOllamaAndAnthropic(t *testing.T) {
	var hdrs []http.Header
	srv := ollama(t, &hdrs)
	for _, base := range []string{srv.URL, srv.URL + "/v1", srv.URL + "/"} {
		got, err := ModelsFor(context.Background(), nil, base, "", APIOllama)
		if err != nil || !slices.Equal(got, []string{"random-tiny:latest"}) {
			t.Errorf("%s: %v, %v", base, got, err)
		}
	}
	got, err := ModelsFor(context.Background(), nil, srv.URL+"/v1", "sk-ant-secret", APIAnthropic)
	if err != nil || !slices.Equal(got, []string{"random-tiny:latest"}) {
		t.Errorf("anthropic: %v, %v", got, err)
	}
	h := hdrs[len(hdrs)-1]
	if h.Get("X-Api-Key") != "sk-ant-secret" || h.Get("Anthropic-Version") != "2023-06-01" || h.Get("Authorization") != "" {
		t.Errorf("anthropic headers %v", h)
	}
	// Not an Ollama server: its /api/tags is a 404, named without the key.
	plain := server(t, http.StatusOK, `{"object":"list","data":[{"id":"m"}]}`)
	_, err = ModelsFor(context.Background(), nil, plain.URL+"/v1", "sk-ant-secret", APIOllama)
	if err == nil || !strings.Contains(err.Error(), "404") || strings.Contains(err.Error(), "sk-ant-secret") {
		t.Errorf("err %v", err)
	}
}

// Discovery that finds Ollama offers its native API, at the server's root.
func TestLocalWithOffersOllamaNative(t *testing.T) {
	srv := ollama(t, nil)
	plain := server(t, http.StatusOK, `{"object":"list","data":[{"id":"m"}]}`)
	found := LocalWith(context.Background(), nil, []Candidate{{"Ollama", srv.URL + "/v1"}, {"llama.cpp", plain.URL + "/v1"}})
	if len(found) != 2 {
		t.Fatalf("found %+v", found)
	}
	if f := found[0]; f.Native != APIOllama || f.NativeURL != srv.URL || !slices.Equal(f.Models, []string{"random-tiny:latest"}) {
		t.Errorf("ollama: %+v", f)
	}
	if f := found[1]; f.Native != "" || f.NativeURL != "" {
		t.Errorf("not ollama: %+v", f)
	}
}
