package sim

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// A schedule sets exactly the fields its keys name; the rest keep their defaults.
func TestParseSchedule(t *testing.T) {
	p, err := ParseSchedule("sim:ttft=200ms,tps=50,chunk=2,slots=4,500=0.1,cache,timings=false,seed=7")
	if err != nil {
		t.Fatal(err)
	}
	want := Profile{Name: p.Name, Model: p.Name, TTFT: 200 * time.Millisecond, TokensPerSecond: 50, TokensPerChunk: 2, MaxRunning: 4,
		Rate500: 0.1, PrefixCache: true, Seed: 7}
	if p != want {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
	if p, err := ParseSchedule("sim:cache,tokenizer=cl100k_base"); err != nil || p.Tokenizer != TokenizerCl100k ||
		FormatSchedule(p) != "sim:ttft=100ms,tps=100,cache,tokenizer=cl100k_base" {
		t.Errorf("tokenizer=cl100k_base: %+v, %v, written %s", p, err, FormatSchedule(p))
	}
	if p, err := ParseSchedule("sim:"); err != nil || p.TTFT != ScheduleDefaultTTFT || p.TokensPerSecond != ScheduleDefaultTPS {
		t.Errorf("sim: alone: %+v, %v; want the default TTFT and tps", p, err)
	}
}

// Every bad schedule is refused with the key, what it accepts and the syntax.
func TestParseScheduleErrors(t *testing.T) {
	for _, tc := range []struct{ model, want string }{
		{"fast", "not a schedule"},
		{"sim:rate=50", `unknown key "rate"`},
		{"sim:ttft=fast", `ttft: "fast" is not a duration`},
		{"sim:ttft=-1s", "is not a duration from 0s to 10m0s"},
		{"sim:tps=0", `tps: "0" is not a number > 0`},
		{"sim:chunk=0", `chunk: "0" is not a whole number from 1 to 4096`},
		{"sim:429=1.5", `429: "1.5" is not a number from 0 to 1`},
		{"sim:cache=maybe", "is not true or false"},
		{"sim:slots", "needs a value (slots=N)"},
		{"sim:tps=5,tps=6", "given twice"},
		{"sim:cache,ttft=1s space", "not a duration"},
		{"sim:cache?", `unknown key "cache?"`},
		{"sim:tokenizer=bpe", `tokenizer: "bpe" is not one of words, cl100k_base`},
		{"sim:tokenizer", "needs a value (tokenizer=WORD)"},
	} {
		_, err := ParseSchedule(tc.model)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasSuffix(err.Error(), ScheduleSyntax) {
			t.Errorf("%s: %v; want %q and the syntax", tc.model, err, tc.want)
		}
	}
}

// FormatSchedule writes a profile that ParseSchedule reads back to the same served profile:
// each demo profile is a schedule anyone can ask for.
func TestFormatScheduleRoundTrip(t *testing.T) {
	for _, p := range DemoProfiles() {
		text := FormatSchedule(p)
		back, err := ParseSchedule(text)
		if err != nil {
			t.Fatalf("%s: %s: %v", p.Name, text, err)
		}
		p.Name, p.Model, p.API = text, text, ""
		p, _ = p.normalized()
		back, _ = back.normalized()
		if back != p {
			t.Errorf("%s:\n got %+v\nwant %+v", text, back, p)
		}
	}
	if got := FormatSchedule(Profile{TokensPerSecond: 50}); got != "sim:ttft=0s,tps=50" {
		t.Errorf("zero TTFT: %s, want ttft=0s written (its default is not 0)", got)
	}
}

// At the root, the request's model chooses the profile: a name, a model id, or a schedule
// added on first use (and listed, and in /metrics after); an unknown model is a 404 listing
// the models, a bad schedule a 400 naming the syntax, each in its API's error shape.
func TestServeByModel(t *testing.T) {
	s := start(t, Options{}, Profile{Name: "fast", Model: "fast-model", TokensPerSecond: 2000, MaxTokens: 3})
	for _, model := range []string{"fast", "fast-model", "sim:ttft=5ms,tps=2000,max=3"} {
		status, _, body := post(t, s.URL()+"/v1/chat/completions", `{"model":"`+model+`","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
		if status != http.StatusOK || !strings.Contains(body, "data: [DONE]") {
			t.Fatalf("%s: %d %s", model, status, body)
		}
	}
	if got := s.Requests("sim:ttft=5ms,tps=2000,max=3"); got != 1 {
		t.Errorf("the schedule's requests: %d, want 1", got)
	}
	if _, body := get(t, s.URL()+"/v1/models"); !strings.Contains(body, `"id":"fast"`) || !strings.Contains(body, `"id":"sim:ttft=5ms,tps=2000,max=3"`) {
		t.Errorf("/v1/models: %s", body)
	}
	if _, body := get(t, s.URL()+"/api/tags"); !strings.Contains(body, `"name":"fast"`) {
		t.Errorf("/api/tags: %s", body)
	}
	if _, body := get(t, s.MetricsURL()); !strings.Contains(body, `vllm:num_requests_running{engine="0",model_name="sim:ttft=5ms,tps=2000,max=3"} 0`) {
		t.Errorf("/metrics lacks the schedule's series:\n%s", body)
	}
	for _, tc := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/v1/messages", `{"model":"nope","stream":true,"max_tokens":2,"messages":[]}`, 404, `"type":"not_found_error","message":"model \"nope\" is not served here; models: fast, sim:`},
		{"/api/chat", `{"model":"sim:rate=5","messages":[]}`, 400, `{"error":"model \"sim:rate=5\": unknown key \"rate\"`},
		{"/v1/responses", `{"model":"sim:ttft=x"}`, 400, "see `tokscope sim --help`"},
		{"/v1/completions", `{"prompt":"hi"}`, 404, `model \"\" is not served here`},
	} {
		status, _, body := post(t, s.URL()+tc.path, tc.body)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s: %d %s; want %d and %q", tc.path, tc.body, status, body, tc.status, tc.want)
		}
	}
}

// A server takes at most maxSchedules schedules: new model names cannot grow it without end.
func TestScheduleLimit(t *testing.T) {
	s := start(t, Options{}, Profile{Name: "fast", TokensPerSecond: 2000})
	for i := range maxSchedules + 1 {
		_, status, err := s.modelEndpoint("sim:tps=2000,seed=" + itoa(i+1))
		if i < maxSchedules && err != nil {
			t.Fatalf("schedule %d: %v", i, err)
		}
		if i == maxSchedules && (status != http.StatusBadRequest || err == nil || !strings.Contains(err.Error(), "the most it takes")) {
			t.Fatalf("schedule %d past the limit: %d %v", i, status, err)
		}
	}
	if ep, _, err := s.modelEndpoint("sim:tps=2000,seed=1"); err != nil || ep == nil {
		t.Errorf("a schedule already served is still served at the limit: %v", err)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// docs/sim.md's table of keys has every key of the syntax, and no other.
func TestScheduleKeysDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/sim.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\| [^|]+ \\| [^|]+ \\|$").FindAllStringSubmatch(string(b), -1)
	var names []string
	for _, m := range documented {
		names = append(names, m[1])
	}
	if want := strings.Split(keyNames(), ", "); !slices.Equal(names, want) {
		t.Errorf("docs/sim.md documents the keys %v; the syntax has %v", names, want)
	}
}
