package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// The five APIs the simulator serves, on every profile, with the same backend, schedule and
// faults: their paths, request shapes and stream framing follow the captures of llama.cpp
// b10470 and Ollama 0.17.4 (../shared/fixtures/servers/).
const (
	APIChat        = "chat"        // POST /<profile>/v1/chat/completions
	APICompletions = "completions" // POST /<profile>/v1/completions
	APIResponses   = "responses"   // POST /<profile>/v1/responses
	APIAnthropic   = "anthropic"   // POST /<profile>/v1/messages
	APIOllama      = "ollama"      // POST /<profile>/api/chat (+ GET /<profile>/api/tags)
)

// APIs lists every API the simulator serves.
var APIs = []string{APIChat, APICompletions, APIResponses, APIAnthropic, APIOllama}

// apiOfPath is the API served at a profile's sub-path; "" for none.
func apiOfPath(rest string) string {
	switch rest {
	case "v1/chat/completions":
		return APIChat
	case "v1/completions":
		return APICompletions
	case "v1/responses":
		return APIResponses
	case "v1/messages":
		return APIAnthropic
	case "api/chat":
		return APIOllama
	}
	return ""
}

// BaseURLFor is the base URL a client of api uses for a profile: BaseURL's /v1, or for
// Ollama's native API the profile's root (http://127.0.0.1:PORT/<profile>, where /api/chat
// and /api/tags are).
func (s *Server) BaseURLFor(profile, api string) string {
	if api == APIOllama {
		return s.url + "/" + profile
	}
	return s.BaseURL(profile)
}

// parseRequest reads a request of api into the chat request the backend shapes: its messages
// (for the prompt's tokens), limit, min_tokens, stream and usage options.
//
//	completions  prompt (a string or strings: one user message each), max_tokens, min_tokens
//	responses    input (a string, or messages whose content is a string or text parts),
//	             instructions (a system message), max_output_tokens
//	anthropic    system (a string or text blocks), messages, max_tokens
//	ollama       messages, options.num_predict (< 0: no limit), stream (default true)
func parseRequest(api string, body []byte, req *chatRequest) error {
	switch api {
	case APIChat:
		return json.Unmarshal(body, req)
	case APICompletions:
		var r struct {
			chatRequest
			Prompt json.RawMessage `json:"prompt"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return err
		}
		*req = r.chatRequest
		req.Messages = promptMessages(r.Prompt)
		return nil
	case APIResponses:
		return parseResponses(body, req)
	case APIAnthropic:
		var r struct {
			chatRequest
			System json.RawMessage `json:"system"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return err
		}
		*req = r.chatRequest
		if len(r.System) > 0 && string(r.System) != "null" {
			req.Messages = append([]chatMessage{{Role: "system", Content: r.System}}, req.Messages...)
		}
		return nil
	}
	return parseOllama(body, req)
}

func promptMessages(prompt json.RawMessage) []chatMessage {
	var many []json.RawMessage
	if json.Unmarshal(prompt, &many) != nil {
		return []chatMessage{{Role: "user", Content: prompt}}
	}
	msgs := make([]chatMessage, len(many))
	for i, p := range many {
		msgs[i] = chatMessage{Role: "user", Content: p}
	}
	return msgs
}

func parseResponses(body []byte, req *chatRequest) error {
	var r struct {
		Input           json.RawMessage `json:"input"`
		Instructions    json.RawMessage `json:"instructions"`
		MaxOutputTokens *int            `json:"max_output_tokens"`
		Stream          bool            `json:"stream"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	*req = chatRequest{MaxTokens: r.MaxOutputTokens, Stream: r.Stream}
	if len(r.Instructions) > 0 && string(r.Instructions) != "null" {
		req.Messages = append(req.Messages, chatMessage{Role: "system", Content: r.Instructions})
	}
	var msgs []chatMessage
	if json.Unmarshal(r.Input, &msgs) != nil {
		msgs = []chatMessage{{Role: "user", Content: r.Input}}
	}
	req.Messages = append(req.Messages, msgs...)
	return nil
}

func parseOllama(body []byte, req *chatRequest) error {
	var r struct {
		Messages []chatMessage `json:"messages"`
		Stream   *bool         `json:"stream"`
		Options  struct {
			NumPredict *int `json:"num_predict"`
		} `json:"options"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	*req = chatRequest{Messages: r.Messages, Stream: r.Stream == nil || *r.Stream}
	if n := r.Options.NumPredict; n != nil && *n >= 0 {
		req.MaxTokens = n
	}
	return nil
}

// writeAPIError writes an error body in api's shape: Anthropic's {"type":"error","error":
// {"type","message"}}, Ollama's {"error": "…"}, else OpenAI's.
func writeAPIError(w http.ResponseWriter, api string, status int, message, typ string, code any) {
	switch api {
	case APIAnthropic:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"type":"error","error":{"type":%s,"message":%s}}`+"\n", jsonString(anthropicErrorType(status, typ)), jsonString(message))
	case APIOllama:
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":%s}`+"\n", jsonString(message))
	default:
		writeError(w, status, message, typ, code)
	}
}

func anthropicErrorType(status int, typ string) string {
	switch status {
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusNotFound:
		return "not_found_error"
	}
	if typ == "server_error" {
		return "api_error"
	}
	return typ
}

var errNoUnary = errors.New("only streamed answers are simulated on this API (stream: true)")

// serveTags answers Ollama's GET /api/tags with the profile's model.
func (ep *endpoint) serveTags(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	fmt.Fprintf(w, `{"models":[{"name":%s,"model":%s,"modified_at":"2026-01-01T00:00:00Z","size":1,"digest":"sim","details":{"format":"gguf","family":"sim"}}]}`+"\n",
		ep.modelJSON, ep.modelJSON)
}
