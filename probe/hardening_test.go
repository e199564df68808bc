package probe

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"tokscope/sample"

	"tokscope/config"
)

// A server that echoes the key in an error body, at every offset around the places where a
// message used to be cut (200 bytes of a body, 4 KiB of a tail): not even a part of the key
// may survive, because the message is cut only after redaction.
func TestKeyCutAtMessageLimitNeverLeaks(t *testing.T) {
	t.Setenv(testKeyEnv, testKey)
	for _, api := range []string{config.APIChat, config.APICompletions, config.APIResponses, config.APIAnthropic, config.APIOllama} {
		keyCutNeverLeaks(t, api)
	}
}

func keyCutNeverLeaks(t *testing.T, api string) {
	withKey := func(ep *config.Endpoint) { ep.APIKeyEnv, ep.API = testKeyEnv, api }
	for _, pad := range []int{150, 180, 185, 190, 195, 199, 250, 290, 296, 299, 4090} {
		body := strings.Repeat("x", pad) + " " + testKey + " tail"
		for _, sc := range []script{
			{status: 401, contentType: "text/plain", body: body},
			{status: 401, contentType: "application/json", body: `{"error":{"message":"` + body + `"}}`},
			{contentType: "text/html", body: "<p>" + body + "</p>"}, // 200, no SSE
		} {
			s, _, _ := measure(t, sc, withKey)
			if s.Outcome != sample.OutcomeError {
				t.Fatalf("%s, pad %d: %s", api, pad, s.Outcome)
			}
			for n := 6; n <= len(testKey); n++ {
				if strings.Contains(s.ErrorMessage, testKey[:n]) || strings.Contains(s.ErrorMessage, testKey[len(testKey)-n:]) {
					t.Errorf("pad %d, %s: message holds %d characters of the key: %q", pad, sc.contentType, n, s.ErrorMessage)
					break
				}
			}
		}
	}
}

// Error bodies become one short readable line whatever their shape.
func TestBodyText(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{``, ``},
		{`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, `Rate limit reached (code rate_limit_exceeded)`},
		{`{"error":"model \"llama3\" not found, try pulling it first"}`, `model "llama3" not found, try pulling it first`},
		{`{"object":"error","message":"The model ` + "`x`" + ` does not exist.","type":"NotFoundError","param":null,"code":404}`, "The model `x` does not exist. (code 404)"},
		{`{"detail":"Not Found"}`, `Not Found`},
		{`{"detail":[{"loc":["body","model"],"msg":"field required","type":"value_error.missing"}]}`, `field required`},
		{`{"unrelated":1}`, `{"unrelated":1}`},
		{`<html><head><title>502 Bad Gateway</title></head><body><h1>502</h1></body></html>`, `502 Bad Gateway`},
		{`<html><body><script>if (a<b) x()</script><style>p{}</style><!-- c --><p>Service &amp; stuff</p><p>down</p></body></html>`, `Service & stuff down`},
		{"plain text\n", "plain text"},
	} {
		if got := bodyText([]byte(tc.body)); got != tc.want {
			t.Errorf("bodyText(%.40q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestReadable(t *testing.T) {
	long := strings.Repeat("é", 400)
	got := readable(long)
	if n := utf8.RuneCountInString(got); n != maxMessage || !strings.HasSuffix(got, "…") {
		t.Errorf("long message: %d runes, %q…", n, got[:10])
	}
	if got := readable("a\r\n\tb \x1b[31mred\x00 \xff end"); got != "a b [31mred \uFFFD end" {
		t.Errorf("control characters: %q", got)
	}
}

// Redirects: a same-origin 307/308 is followed with its POST body, and the instants are the
// final request's; a redirect to another origin (here only another port, which net/http
// treats as the same host and sends Authorization to) or one that would turn the POST into a
// GET is not followed, and says where it pointed.
func TestRedirects(t *testing.T) {
	t.Setenv(testKeyEnv, testKey)
	var otherHits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, contentChunk("a")+finishChunk("stop")+doneEvent)
	}))
	defer other.Close()
	final := newGT(t, fixed(script{headerDelay: ms(60), events: []event{{ms(60), contentChunk("a")}, {ms(60), finishChunk("stop")}, {ms(60), doneEvent}}}))
	var status atomic.Int64
	var target atomic.Value
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/final/") {
			final.ServeHTTP(w, r)
			return
		}
		http.Redirect(w, r, target.Load().(string), int(status.Load()))
	}))
	defer front.Close()
	ep := config.Endpoint{Name: "r", BaseURL: front.URL + "/v1", Model: "m", MaxTokens: 8, Timeout: 10 * time.Second,
		Stall: 10 * time.Second, APIKeyEnv: testKeyEnv, Headers: map[string]string{"X-Api-Key": "hdr-secret-value"}}
	c := NewClient(ep)
	defer c.CloseIdleConnections()

	for _, tc := range []struct {
		status int
		target string
		kind   string
	}{
		{307, "/final/chat/completions", ""},
		{308, "/final/chat/completions", ""},
		{308, other.URL + "/v1/chat/completions", "http_308"},
		{307, strings.Replace(front.URL, "http://", "https://", 1) + "/final/chat/completions", "http_307"},
		{301, "/final/chat/completions", "http_301"},
		{302, "/final/chat/completions", "http_302"},
		{307, "/v1/chat/completions", "http_307"}, // a loop
	} {
		status.Store(int64(tc.status))
		target.Store(tc.target)
		s := ask(t.Context(), c, "hi", Live{})
		if tc.kind == "" {
			outcome(t, s, sample.OutcomeOK, "")
			if v, _ := s.TTFB(); v < ms(60) {
				t.Errorf("%d: TTFB %v is the redirect's, not the answer's (≥ 60 ms)", tc.status, v)
			}
			body := final.requests()[len(final.requests())-1]
			if body.body["stream"] != true {
				t.Errorf("%d: the followed request lost its body: %v", tc.status, body.body)
			}
			continue
		}
		outcome(t, s, sample.OutcomeError, tc.kind)
		if !strings.Contains(s.ErrorMessage, "not followed") || !strings.Contains(s.ErrorMessage, strings.TrimPrefix(tc.target, "/")) {
			t.Errorf("%d → %s: message %q", tc.status, tc.target, s.ErrorMessage)
		}
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("another origin received %d requests carrying the key and headers", n)
	}
}

// A server that ignores max_tokens and never finishes: reading stops after
// overrunChunks(max_tokens) answer chunks, long before the timeout; reasoning chunks do not
// count (some providers leave reasoning out of max_tokens), and a finished answer followed by
// more content is still ok.
func TestOverrunStopsReading(t *testing.T) {
	t.Parallel()
	many := func(n int, mk func(string) string) []event {
		evs := []event{{ms(1), roleChunk()}}
		for i := range n {
			evs = append(evs, event{ms(1 + 0.01*float64(i)), mk(" x")})
		}
		return evs
	}
	eight := func(ep *config.Endpoint) { ep.MaxTokens = 8 }

	s, _, _ := measure(t, script{events: many(500, contentChunk), hold: time.Minute}, eight)
	outcome(t, s, sample.OutcomeError, sample.ErrStreamError)
	// Counts, not End: a reader that went on would end on the stall limit (10 s), as a stall.
	if s.TokenChunks() != overrunChunks(8)+1 || !strings.Contains(s.ErrorMessage, "ignores max_tokens") {
		t.Errorf("%d token chunks, end %v: %q", s.TokenChunks(), s.End, s.ErrorMessage)
	}

	evs := append(many(200, reasoningChunk), event{ms(5), contentChunk(" a")}, event{ms(5), finishChunk("stop")}, event{ms(5), doneEvent})
	s, _, _ = measure(t, script{events: evs}, eight)
	outcome(t, s, sample.OutcomeOK, "")

	evs = append([]event{{ms(1), contentChunk(" a")}, {ms(1), finishChunk("length")}}, many(500, contentChunk)...)
	s, _, _ = measure(t, script{events: evs, hold: time.Minute}, eight)
	// After finish_reason "length" the chunks that keep coming are read up to the same bound,
	// then reading stops: a count, not End (a reader that went on would wait for the stall
	// limit, 10 s, however fast the machine).
	outcome(t, s, sample.OutcomeOK, "")
	if s.TokenChunks() != overrunChunks(8)+1 {
		t.Errorf("%d token chunks, want reading stopped at %d", s.TokenChunks(), overrunChunks(8)+1)
	}
}
