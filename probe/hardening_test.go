package probe

import (
	"strings"
	"testing"
	"unicode/utf8"

	"tokscope/config"
)

// A server that echoes the key in an error body, at every offset around the places where a
// message used to be cut (200 bytes of a body, 4 KiB of a tail): not even a part of the key
// may survive, because the message is cut only after redaction.
func TestKeyCutAtMessageLimitNeverLeaks(t *testing.T) {
	t.Setenv(testKeyEnv, testKey)
	withKey := func(ep *config.Endpoint) { ep.APIKeyEnv = testKeyEnv }
	for _, pad := range []int{150, 180, 185, 190, 195, 199, 250, 290, 296, 299, 4090} {
		body := strings.Repeat("x", pad) + " " + testKey + " tail"
		for _, sc := range []script{
			{status: 401, contentType: "text/plain", body: body},
			{status: 401, contentType: "application/json", body: `{"error":{"message":"` + body + `"}}`},
			{contentType: "text/html", body: "<p>" + body + "</p>"}, // 200, no SSE
		} {
			s, _, _ := measure(t, sc, withKey)
			if s.Outcome != OutcomeError {
				t.Fatalf("pad %d: %s", pad, s.Outcome)
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
