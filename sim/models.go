package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Serving by model name at the server's root, as one inference server serves several models:
// /v1/chat/completions, /v1/completions, /v1/responses, /v1/messages and /api/chat choose
// the profile by the request's "model" — a profile's Name (or its Model), or a schedule
// (schedule.go), which becomes a profile of its own the first time it is asked for and stays
// (its backend, slots, cache and /metrics series shared by every later request naming it).
// /v1/models and /api/tags list the profiles.

// maxSchedules bounds the profiles schedules may add to a server, so that a client sending
// ever new model names cannot grow it without end.
const maxSchedules = 256

// serveRoot answers the root paths (v1/... and api/...); false when the path is none of them.
func (s *Server) serveRoot(w http.ResponseWriter, r *http.Request, first, rest string) bool {
	sub := first + "/" + rest
	switch sub {
	case "v1/models":
		s.serveModels(w, r)
		return true
	case "api/tags":
		s.serveRootTags(w)
		return true
	case "api/version":
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprintln(w, `{"version":"0.17.4-sim"}`)
		return true
	}
	api := apiOfPath(sub)
	if api == "" {
		return false
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeAPIError(w, api, http.StatusMethodNotAllowed, "use POST", "invalid_request_error", "method_not_allowed")
		return true
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeAPIError(w, api, http.StatusBadRequest, "cannot read request body: "+err.Error(), "invalid_request_error", nil)
		return true
	}
	var named struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(body, &named); err != nil {
		writeAPIError(w, api, http.StatusBadRequest, "invalid JSON body: "+err.Error(), "invalid_request_error", nil)
		return true
	}
	ep, status, err := s.modelEndpoint(named.Model)
	if err != nil {
		writeAPIError(w, api, status, err.Error(), "invalid_request_error", "model_not_found")
		return true
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	ep.requests.Add(1)
	s.serve(w, r, ep, api)
	return true
}

// modelEndpoint is the profile a request's model names, a schedule's added on first use; else
// the HTTP status and why.
func (s *Server) modelEndpoint(model string) (*endpoint, int, error) {
	if ep, ok := s.endpointOfModel(model); ok {
		return ep, 0, nil
	}
	if !IsSchedule(model) {
		return nil, http.StatusNotFound, fmt.Errorf("model %q is not served here; models: %s, or a schedule: %s",
			model, strings.Join(s.ModelNames(), ", "), ScheduleSyntax)
	}
	p, err := ParseSchedule(model)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	ep, err := s.add(p)
	if err != nil {
		if ep, ok := s.endpointOfModel(model); ok { // another request added it meanwhile
			return ep, 0, nil
		}
		return nil, http.StatusBadRequest, fmt.Errorf("model %q: %w", model, err)
	}
	return ep, 0, nil
}

// endpointOfModel is the profile named model, else the first whose Model it is.
func (s *Server) endpointOfModel(model string) (*endpoint, bool) {
	s.endpointsMu.RLock()
	defer s.endpointsMu.RUnlock()
	if ep, ok := s.endpoints[model]; ok {
		return ep, true
	}
	for _, ep := range s.order {
		if ep.profile.Model == model {
			return ep, true
		}
	}
	return nil, false
}

// ModelNames are the names of the profiles the server serves now, in the order they were
// added (schedules asked for so far included): what /v1/models lists at the root.
func (s *Server) ModelNames() []string {
	s.endpointsMu.RLock()
	defer s.endpointsMu.RUnlock()
	names := make([]string, len(s.order))
	for i, ep := range s.order {
		names[i] = ep.profile.Name
	}
	return names
}

// serveModels answers GET /v1/models at the root: every profile by name.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, http.StatusMethodNotAllowed, "use GET", "invalid_request_error", "method_not_allowed")
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	now := time.Now().Unix()
	for _, name := range s.ModelNames() {
		list.Data = append(list.Data, model{ID: name, Object: "model", Created: now, OwnedBy: "tokscope-sim"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

// serveRootTags answers Ollama's GET /api/tags at the root: every profile by name.
func (s *Server) serveRootTags(w http.ResponseWriter) {
	type details struct {
		Format string `json:"format"`
		Family string `json:"family"`
	}
	type tag struct {
		Name       string  `json:"name"`
		Model      string  `json:"model"`
		ModifiedAt string  `json:"modified_at"`
		Size       int     `json:"size"`
		Digest     string  `json:"digest"`
		Details    details `json:"details"`
	}
	tags := struct {
		Models []tag `json:"models"`
	}{Models: []tag{}}
	for _, name := range s.ModelNames() {
		tags.Models = append(tags.Models, tag{Name: name, Model: name, ModifiedAt: "2026-01-01T00:00:00Z", Size: 1, Digest: "sim",
			Details: details{Format: "gguf", Family: "sim"}})
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(tags)
}
