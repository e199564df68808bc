package discover

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Found.Owned names a server only from its models list's owned_by, never from the port's
// usual server: a vLLM probe must not go to a server that merely listens on vLLM's port.
func TestFoundOwned(t *testing.T) {
	serve := func(owner string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model","owned_by":"` + owner + `"}]}`))
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/v1"
	}
	onVLLMPort, ownedByVLLM := serve("someone"), serve("vllm")
	found := LocalWith(t.Context(), nil, []Candidate{{Server: "vLLM", BaseURL: onVLLMPort}, {Server: "llama.cpp", BaseURL: ownedByVLLM}})
	owned := map[string]string{}
	for _, f := range found {
		owned[f.BaseURL] = f.Owned
	}
	if len(found) != 2 || owned[onVLLMPort] != "" || owned[ownedByVLLM] != "vLLM" {
		t.Errorf("owned %v, want only %s as vLLM: %+v", owned, ownedByVLLM, found)
	}
}
