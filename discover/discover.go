// Package discover finds OpenAI-compatible servers: LocalWith probes the usual local inference
// servers on loopback (LocalCandidates), ModelsFor lists the models of any base URL (tokscope models).
//
// It uses only the standard library and package redact, and must not import probe, stats, ui, bubbletea or
// lipgloss. An API key passed in is sent as a Bearer token and never appears in an error.
package discover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"tokscope/redact"
)

// Candidate is a place a local server may listen: its usual name and its OpenAI base URL.
type Candidate struct {
	Server  string // e.g. "Ollama"
	BaseURL string // e.g. http://127.0.0.1:11434/v1
}

// Found is a server that answered with a valid OpenAI models list, or that refused to list
// its models without a key (401 or 403: a server is there, and it needs --api-key-env).
type Found struct {
	Server string // the candidate's name, or the server the models list names (owned_by)
	// Owned is the server the models list names by its owned_by ("vLLM", …), "" when it names
	// none: unlike Server, never a guess from the port.
	Owned    string
	BaseURL  string   // ready for --url
	Models   []string // model ids in the server's order; empty when it has none loaded
	NeedsKey string   // the refusal ("401 Unauthorized") when the server wants a key; else ""
	// Native is set when the server also speaks Ollama's native API (its /api/tags answered):
	// the API to offer ("ollama") and its base URL, the server's root.
	Native, NativeURL string
}

// LocalCandidates are the default ports of the servers tokscope users run most, on 127.0.0.1
// only: discovery never touches the network beyond this machine.
var LocalCandidates = []Candidate{
	{"Ollama", "http://127.0.0.1:11434/v1"},
	{"llama.cpp", "http://127.0.0.1:8080/v1"},
	{"vLLM", "http://127.0.0.1:8000/v1"},
	{"LM Studio", "http://127.0.0.1:1234/v1"},
	{"SGLang", "http://127.0.0.1:30000/v1"},
}

// ProbeTimeout bounds each local probe. A local server answers /v1/models in milliseconds;
// all candidates are probed in parallel, so LocalWith takes at most about this long.
const ProbeTimeout = 500 * time.Millisecond

// maxBody caps a models list read (remote lists such as OpenRouter's run to a few MB).
const maxBody = 16 << 20

// LocalWith probes every candidate's /models in parallel, each bounded by ProbeTimeout, and
// returns those that answered with a valid models list or with 401/403 (NeedsKey), in
// candidate order. Candidates that refuse the connection, time out or answer with something
// else are silently absent. A nil client means a fresh client that keeps no idle connections.
func LocalWith(ctx context.Context, client *http.Client, candidates []Candidate) []Found {
	if client == nil {
		client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	}
	results := make([]*Found, len(candidates))
	var wg sync.WaitGroup
	for i, c := range candidates {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
			defer cancel()
			list, err := fetch(pctx, client, c.BaseURL, "")
			var refused *StatusError
			if errors.As(err, &refused) && (refused.Code == http.StatusUnauthorized || refused.Code == http.StatusForbidden) {
				results[i] = &Found{Server: c.Server, BaseURL: strings.TrimRight(c.BaseURL, "/"), NeedsKey: refused.Status}
				return
			}
			if err != nil {
				return
			}
			server, named := c.Server, serverFromOwner(list)
			if named != "" {
				server = named // e.g. vLLM started on llama.cpp's port 8080
			}
			results[i] = &Found{Server: server, Owned: named, BaseURL: strings.TrimRight(c.BaseURL, "/"), Models: list.ids()}
			if root := ollamaRoot(c.BaseURL); server == c.Server {
				if _, err := fetchTags(pctx, client, root, ""); err == nil {
					results[i].Native, results[i].NativeURL = APIOllama, root
				}
			}
		})
	}
	wg.Wait()
	var found []Found
	for _, f := range results {
		if f != nil {
			found = append(found, *f)
		}
	}
	return found
}

// The APIs whose model lists differ from OpenAI's GET /models with a Bearer token (the names
// of config's API constants; discover imports no tokscope package).
const (
	APIAnthropic = "anthropic" // GET <base>/models with x-api-key and anthropic-version
	APIOllama    = "ollama"    // GET <root>/api/tags: {"models": [{"name"}]}
)

// ModelsFor lists the model ids at baseURL in an endpoint's API, sending apiKey when it is not
// empty: Ollama's native API lists /api/tags at the server's root (a base URL ending in /v1 is
// taken for its root), Anthropic's /models wants the key as x-api-key; every other API ("")
// lists /models as OpenAI does, with the key as a Bearer token. Errors name the URL without
// credentials and never contain the key, even when the server echoes it.
func ModelsFor(ctx context.Context, client *http.Client, baseURL, apiKey, api string) ([]string, error) {
	if client == nil {
		client = http.DefaultClient
	}
	if api == APIOllama {
		return fetchTags(ctx, client, ollamaRoot(baseURL), apiKey)
	}
	list, err := fetchAPI(ctx, client, baseURL, apiKey, api)
	if err != nil {
		return nil, err
	}
	return list.ids(), nil
}

// ollamaRoot is the server root of an Ollama base URL.
func ollamaRoot(baseURL string) string {
	return strings.TrimSuffix(strings.TrimRight(strings.TrimSpace(baseURL), "/"), "/v1")
}

// modelsList is the OpenAI list shape: {"object": "list", "data": [{"id": ..., "owned_by": ...}]}.
type modelsList struct {
	Object string           `json:"object"`
	Data   *[]modelListItem `json:"data"` // pointer: a missing "data" is not a models list
}

type modelListItem struct {
	ID      string `json:"id"`
	OwnedBy string `json:"owned_by"`
}

func (l *modelsList) ids() []string {
	ids := make([]string, 0, len(*l.Data))
	for _, m := range *l.Data {
		ids = append(ids, m.ID)
	}
	return ids
}

// serverFromOwner names the server when its models list says so unmistakably.
func serverFromOwner(l *modelsList) string {
	for _, m := range *l.Data {
		switch m.OwnedBy {
		case "vllm":
			return "vLLM"
		case "llamacpp":
			return "llama.cpp"
		case "sglang":
			return "SGLang"
		}
	}
	return ""
}

func fetch(ctx context.Context, client *http.Client, baseURL, apiKey string) (*modelsList, error) {
	return fetchAPI(ctx, client, baseURL, apiKey, "")
}

func fetchAPI(ctx context.Context, client *http.Client, baseURL, apiKey, api string) (*modelsList, error) {
	body, fail, err := get(ctx, client, strings.TrimRight(strings.TrimSpace(baseURL), "/")+"/models", baseURL, apiKey, api)
	if err != nil {
		return nil, err
	}
	var list modelsList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fail("not an OpenAI models list (invalid JSON: %v)", err)
	}
	if list.Data == nil {
		return nil, fail(`not an OpenAI models list (no "data" array)`)
	}
	for i, m := range *list.Data {
		if m.ID == "" {
			return nil, fail("not an OpenAI models list (model %d has no id)", i)
		}
	}
	return &list, nil
}

// fetchTags lists Ollama's models: GET <root>/api/tags, {"models": [{"name": …}]}.
func fetchTags(ctx context.Context, client *http.Client, root, apiKey string) ([]string, error) {
	body, fail, err := get(ctx, client, root+"/api/tags", root, apiKey, APIOllama)
	if err != nil {
		return nil, err
	}
	var tags struct {
		Models *[]struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal(body, &tags); err != nil || tags.Models == nil {
		return nil, fail(`not an Ollama model list (no "models" array)`)
	}
	names := make([]string, 0, len(*tags.Models))
	for i, m := range *tags.Models {
		if m.Name == "" {
			return nil, fail("not an Ollama model list (model %d has no name)", i)
		}
		names = append(names, m.Name)
	}
	return names, nil
}

// failFunc builds an error naming the request, the key redacted.
type failFunc func(format string, args ...any) error

// get reads a model list at endpoint, bounded, with the key in api's header; a non-2xx answer
// is a *StatusError.
func get(ctx context.Context, client *http.Client, endpoint, baseURL, apiKey, api string) ([]byte, failFunc, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, fmt.Errorf("list models: base URL %q is not an http(s) URL",
			redact.Text(redact.URL(baseURL), apiKey))
	}
	shown := redact.URL(endpoint)
	fail := func(format string, args ...any) error {
		return errors.New(redact.Text("list models: GET "+shown+": "+fmt.Sprintf(format, args...), apiKey))
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return nil, fail, fail("%v", err)
	}
	req.Header.Set("Accept", "application/json")
	switch {
	case api == APIAnthropic:
		req.Header.Set("Anthropic-Version", "2023-06-01")
		if apiKey != "" {
			req.Header.Set("X-Api-Key", apiKey)
		}
	case apiKey != "":
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		// *url.Error repeats the URL (user name included); report only its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fail, fail("no answer in time")
		}
		return nil, fail, fail("%v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fail, fail("reading the response: %v", err)
	}
	if len(body) > maxBody {
		return nil, fail, fail("response larger than %d MiB", maxBody>>20)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := fail("%s", resp.Status)
		if msg := apiErrorMessage(body); msg != "" {
			err = fail("%s: %s", resp.Status, msg)
		}
		// Status is the canonical text, not the server's reason phrase: it is printed as is.
		status := strings.TrimSpace(fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode)))
		return nil, fail, &StatusError{Code: resp.StatusCode, Status: status, err: err}
	}
	return body, fail, nil
}

// StatusError is a models list refused with a non-2xx HTTP status.
type StatusError struct {
	Code   int    // e.g. 401
	Status string // e.g. "401 Unauthorized"
	err    error  // the whole message, URL and server's reason included, key redacted
}

func (e *StatusError) Error() string { return e.err.Error() }

// apiErrorMessage pulls a short message out of an error body: OpenAI's {"error": {"message"}},
// {"error": "text"}, or the first line of plain text.
func apiErrorMessage(body []byte) string {
	var shaped struct {
		Error json.RawMessage `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &shaped) == nil && len(shaped.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var text string
		switch {
		case json.Unmarshal(shaped.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case json.Unmarshal(shaped.Error, &text) == nil:
			msg = text
		}
	} else if !json.Valid(body) {
		msg, _, _ = strings.Cut(string(body), "\n")
	}
	msg = strings.TrimSpace(strings.ToValidUTF8(msg, "?"))
	if r := []rune(msg); len(r) > 200 {
		msg = string(r[:200]) + "…"
	}
	return msg
}
