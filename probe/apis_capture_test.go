package probe

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
)

// Real streams of llama-server b10470 and Ollama 0.17.4 (the wire's own record, kept beside
// its decoders in apiwire/testdata/captures, copied from ../shared/fixtures/servers) replayed
// over loopback one event every captureGap: the decoded events, instants, tokens, usage,
// finish and text must be exactly what the capture holds.
const captureGap = 5 * time.Millisecond

var captureDir = filepath.Join("..", "apiwire", "testdata", "captures")

type captureCase struct {
	file, api, path     string
	chunks, first, last int // events recorded; the chunk of the first and last token
	tokens, prompt      int
	cached              int
	finish, text, id    string
}

func captureCases() []captureCase {
	return []captureCase{
		{"llamacpp-b10470/chat-completions.sse", config.APIChat, "/v1/chat/completions", 8, 1, 5, 5, 43, 42, "length", " Social Very Stateol muc", "chatcmpl-6Uzu8XSygoUBAX0U4Tqh2dmw5PXRlGeJ"},
		{"llamacpp-b10470/completions.sse", config.APICompletions, "/v1/completions", 6, 0, 4, 5, 5, 0, "length", " PeFat takks", "chatcmpl-FfSdu936mpEmOdUt0VviMamhkUlsNi65"},
		{"llamacpp-b10470/responses.sse", config.APIResponses, "/v1/responses", 13, 4, 8, 5, 43, 1, "stop", "uzwapvamonunite", "resp_Ih6BvkTBuPmhJ3K3ydlEqPVqjyOVxov5"},
		{"llamacpp-b10470/anthropic-messages.sse", config.APIAnthropic, "/v1/messages", 10, 2, 6, 5, 43, 42, "max_tokens", " sociwzr face Noth", "chatcmpl-dsXJfvJx84HEyr4DyqlA42ji6y2aQcvc"},
		{"ollama-0.17.4/api-chat.ndjson", config.APIOllama, "/api/chat", 9, 0, 7, 8, 4, -1, "length", `\bk differentseverzc An Unt Actual`, ""},
		{"ollama-0.17.4/v1-chat-completions.sse", config.APIChat, "/v1/chat/completions", 7, 0, 4, 5, 4, -1, "length", "cdsay Grekkrr", "chatcmpl-904"},
		{"ollama-0.17.4/v1-completions.sse", config.APICompletions, "/v1/completions", 7, 0, 4, 5, 2, -1, "length", "amongpusocial diff Publi", "cmpl-422"},
		{"ollama-0.17.4/v1-responses.sse", config.APIResponses, "/v1/responses", 13, 4, 8, 5, 2, 0, "stop", "xr Service younsomethifb", "resp_825113"},
		// message_delta restates input_tokens (2; message_start said 1): the later figure wins.
		{"ollama-0.17.4/v1-messages.sse", config.APIAnthropic, "/v1/messages", 10, 2, 6, 5, 2, -1, "max_tokens", " Setfew wellbu Child", "msg_ab671bf5845fe0a76657518f"},
	}
}

// captureEvents splits a capture into the writes of its replay: SSE events (up to and with
// their blank line), or NDJSON lines.
func captureEvents(t testing.TB, file string) []event {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(captureDir, file))
	if err != nil {
		t.Fatal(err)
	}
	sep := []byte("\n\n")
	if strings.HasSuffix(file, ".ndjson") {
		sep = []byte("\n")
	}
	var evs []event
	for i, part := range bytes.SplitAfter(b, sep) {
		if len(bytes.TrimSpace(part)) > 0 {
			evs = append(evs, event{time.Duration(i+1) * captureGap, string(part)})
		}
	}
	return evs
}

func captureType(file string) string {
	if strings.HasSuffix(file, ".ndjson") {
		return "application/x-ndjson"
	}
	return "text/event-stream"
}

// captureServer serves the capture file on every request, and a client of API api to it
// (Ollama's native API at the server's root). The client's idle connections close with t.
func captureServer(t *testing.T, file, api string) (*gtServer, *Client) {
	t.Helper()
	g := newGT(t, fixed(script{contentType: captureType(file), events: captureEvents(t, file)}))
	c := NewClient(testEndpoint(g.Server, func(ep *config.Endpoint) {
		ep.API = api
		if api == config.APIOllama {
			ep.BaseURL = g.URL
		}
	}))
	t.Cleanup(c.CloseIdleConnections)
	return g, c
}

func TestCaptureReplay(t *testing.T) {
	t.Parallel()
	for _, tc := range captureCases() {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			var text strings.Builder
			g, c := captureServer(t, tc.file, tc.api)
			s := ask(t.Context(), c, "hi", Live{Delta: func(d sample.Delta) { text.WriteString(d.Text) }})
			outcome(t, s, sample.OutcomeOK, "")
			if got := g.requests()[0].path; got != tc.path {
				t.Errorf("sent to %s, want %s", got, tc.path)
			}
			if len(s.Chunks) != tc.chunks {
				t.Fatalf("%d events, want %d", len(s.Chunks), tc.chunks)
			}
			ch := s.Chunks
			if s.FirstEvent != ch[0].At || s.FirstToken != ch[tc.first].At || s.FirstAnswer != s.FirstToken || s.LastToken != ch[tc.last].At {
				t.Errorf("instants event %v token %v answer %v last %v; chunks %v", s.FirstEvent, s.FirstToken, s.FirstAnswer, s.LastToken, ch)
			}
			for i, c := range ch {
				if c.At < time.Duration(i+1)*captureGap {
					t.Errorf("event %d at %v, before it was sent (%v)", i, c.At, time.Duration(i+1)*captureGap)
				}
				if c.TokenBearing() != (i >= tc.first && i <= tc.last) {
					t.Errorf("event %d token-bearing %v", i, c.TokenBearing())
				}
			}
			if s.Tokens != tc.tokens || s.Source != sample.SourceUsage || s.ReasoningTokens != 0 || s.PromptTokens != tc.prompt || s.CachedTokens != tc.cached {
				t.Errorf("N %d (%s) reasoning %d prompt %d cached %d; want %d, %d, %d", s.Tokens, s.Source, s.ReasoningTokens,
					s.PromptTokens, s.CachedTokens, tc.tokens, tc.prompt, tc.cached)
			}
			if s.FinishReason != tc.finish || text.String() != tc.text || s.ResponseID != tc.id {
				t.Errorf("finish %q text %q id %q; want %q %q %q", s.FinishReason, text.String(), s.ResponseID, tc.finish, tc.text, tc.id)
			}
		})
	}
}

// readCapture parses a whole HTTP response capture: status, headers, body.
func readCapture(t *testing.T, file string) script {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(captureDir, file))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	return script{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: body.String()}
}

// The servers' refusals, as captured, are classified like chat's, with their message.
func TestCaptureErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, api, kind, msg string
	}{
		{"llamacpp-b10470/error-context-chat-completions.http", config.APIChat, "http_400", "400 Bad Request: request (15038 tokens) exceeds the available context size (4096 tokens), try increasing it (code 400)"},
		{"llamacpp-b10470/error-context-completions.http", config.APICompletions, "http_400", "400 Bad Request: request (15002 tokens) exceeds the available context size (4096 tokens), try increasing it (code 400)"},
		{"llamacpp-b10470/error-context-responses.http", config.APIResponses, "http_400", "400 Bad Request: request (15038 tokens) exceeds the available context size (4096 tokens), try increasing it (code 400)"},
		{"llamacpp-b10470/error-context-messages.http", config.APIAnthropic, "http_400", "400 Bad Request: request (15038 tokens) exceeds the available context size (4096 tokens), try increasing it (code 400)"},
		{"ollama-0.17.4/error-unknown-model-api-chat.http", config.APIOllama, "http_404", "404 Not Found: model 'nope' not found"},
		{"ollama-0.17.4/error-think-unsupported-api-chat.http", config.APIOllama, "http_400", `400 Bad Request: "random-tiny" does not support thinking`},
		{"ollama-0.17.4/error-unknown-model-v1.http", config.APIChat, "http_404", "404 Not Found: model 'nope' not found (type api_error)"},
		{"ollama-0.17.4/error-unknown-model-v1.http", config.APIResponses, "http_404", "404 Not Found: model 'nope' not found (type api_error)"},
	} {
		t.Run(tc.api+"/"+tc.file, func(t *testing.T) {
			t.Parallel()
			s, _, _ := measure(t, readCapture(t, tc.file), func(ep *config.Endpoint) { ep.API = tc.api })
			outcome(t, s, sample.OutcomeError, tc.kind)
			if s.ErrorMessage != tc.msg || s.HTTPStatus != mustAtoi(tc.kind[5:]) {
				t.Errorf("message %q (status %d), want %q", s.ErrorMessage, s.HTTPStatus, tc.msg)
			}
			if tc.kind == "http_404" && !isPermanent(&s) {
				t.Error("an unknown model is not a permanent error")
			}
		})
	}
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}
