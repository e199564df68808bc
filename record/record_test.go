package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"tokscope/sample"
)

// fullSample has every field set, with instants that are not whole microseconds.
func fullSample() sample.Sample {
	us := time.Microsecond
	return sample.Sample{
		Endpoint: "local", Model: "qwen3", API: "anthropic", Seq: 42, Warmup: false, ResponseID: "chatcmpl-abc",
		Start: time.Date(2026, 3, 14, 15, 9, 26, 123456789, time.FixedZone("CET", 3600)),
		Queue: 1500*us + 400,
		DNS:   sample.Absent, Connect: 2*time.Millisecond + 1, TLS: sample.Absent, Reused: false, ConnRetry: true,
		Wrote: 3*time.Millisecond + 250, Headers: 40*time.Millisecond + 499,
		FirstEvent: 41*time.Millisecond + 500, FirstToken: 52123 * us, FirstAnswer: 80 * time.Millisecond,
		LastToken: 152123 * us, End: 153 * time.Millisecond,
		Chunks: []sample.Chunk{
			{At: 41*time.Millisecond + 500},
			{At: 52123 * us, Reasoning: 12, Tokens: 2},
			{At: 62123 * us, Reasoning: 9, Tokens: 3},
			{At: 80 * time.Millisecond, Content: 4, Tokens: 1},
			{At: 152123 * us, Content: 17, Tokens: 5},
			{At: 152200 * us}, // usage-only chunk
		},
		Clock:  sample.ClockKernel,
		Tokens: 11, Source: sample.SourceUsage, ReasoningTokens: 5, PromptTokens: 33, CachedTokens: 16,
		OutputTarget: 11, Cache: "bust",
		Outcome: sample.OutcomeOK, FinishReason: "stop",
		HTTPStatus: 200, RetryAfter: 0,
		RateLimitRemainingRequests: 99, RateLimitRemainingTokens: -1,
	}
}

// roundUS is what a round trip through JSON keeps of an instant.
func roundUS(d time.Duration) time.Duration {
	if d < 0 {
		return d
	}
	return d.Round(time.Microsecond)
}

func TestRecordRoundTrip(t *testing.T) {
	for _, s := range []sample.Sample{fullSample(), errorSample(), {Start: time.Unix(0, 0).UTC(), DNS: sample.Absent, End: sample.Absent, Cut: true}} {
		line, err := marshalLine(ptr(FromSample(&s)))
		if err != nil {
			t.Fatal(err)
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		got := rec.Sample()

		want := s
		for _, d := range []*time.Duration{&want.Queue, &want.DNS, &want.Connect, &want.TLS, &want.Wrote, &want.Headers,
			&want.FirstEvent, &want.FirstToken, &want.FirstAnswer, &want.LastToken, &want.End, &want.RetryAfter, &want.Backoff} {
			*d = roundUS(*d)
		}
		want.Chunks = nil
		for _, c := range s.Chunks {
			c.At = roundUS(c.At)
			want.Chunks = append(want.Chunks, c)
		}
		if !got.Start.Equal(want.Start) {
			t.Errorf("start %v, want %v", got.Start, want.Start)
		}
		got.Start, want.Start = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func errorSample() sample.Sample {
	return sample.Sample{
		Endpoint: "remote", Seq: 7, Warmup: true, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		DNS: 1500 * time.Microsecond, Connect: 3 * time.Millisecond, TLS: 9 * time.Millisecond,
		Wrote: 10 * time.Millisecond, Headers: 30 * time.Millisecond,
		FirstEvent: sample.Absent, FirstToken: sample.Absent, FirstAnswer: sample.Absent, LastToken: sample.Absent,
		End: 31 * time.Millisecond, Outcome: sample.OutcomeError, ErrorKind: "http_429",
		ErrorMessage: `rate limited: "slow down" <&>`, HTTPStatus: 429, RetryAfter: 2 * time.Second,
		Backoff: 2*time.Second + 1234567*time.Nanosecond, RateLimitRemainingRequests: 0, RateLimitRemainingTokens: 1200,
		CachedTokens: -1, Cache: "reuse", Conversation: 12, Turn: 3,
	}
}

func TestRecordJSONShape(t *testing.T) {
	s := fullSample()
	line, err := marshalLine(ptr(FromSample(&s)))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
		t.Fatalf("not one line: %q", line)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"start":                        `"2026-03-14T15:09:26.123456789+01:00"`,
		"queue_ms":                     "1.5",
		"dns_ms":                       "null",
		"connect_ms":                   "2",
		"headers_ms":                   "40",
		"first_event_ms":               "41.001", // 41.0005 ms rounds up
		"first_token_ms":               "52.123",
		"chunks":                       "[[41.001,0,0,0],[52.123,0,12,2],[62.123,0,9,3],[80,4,0,1],[152.123,17,0,5],[152.2,0,0,0]]",
		"ttft_ms":                      "52.123",
		"ttfa_ms":                      "80",
		"decode_tps":                   "100",   // 10 tokens over 100 ms
		"tpot_ms":                      "10",    // 100 ms / 10
		"e2e_tps":                      "72.31", // 11 / 152.123 ms = 72.3099…
		"tokens_per_chunk":             "2.75",
		"itl_max_ms":                   "72.123",
		"reasoning_tps":                "400",    // 4 tokens over 10 ms
		"answer_tps":                   "69.326", // 5 tokens over 72.123 ms
		"ratelimit_remaining_requests": "99",
		"ratelimit_remaining_tokens":   "null",
		"token_source":                 `"usage"`,
		"cached_tokens":                "16",
		"output_target":                "11",
		"cache":                        `"bust"`,
		"prefill_tps":                  "326.152", // (33 − 16) / 52.123 ms = 326.1516…
		"e2e_ms":                       "152.2",
		"conn_retry":                   "true",
		"api":                          `"anthropic"`,
		"clock":                        `"kernel"`,
	} {
		if got := string(m[k]); got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
	}
	// An error has no derived speed figures, as null rather than 0.
	e := errorSample()
	line, _ = marshalLine(ptr(FromSample(&e)))
	m = nil
	_ = json.Unmarshal(line, &m)
	for _, k := range []string{"ttft_ms", "decode_tps", "e2e_tps", "tpot_ms", "itl_p50_ms", "tokens_per_chunk", "first_token_ms",
		"cached_tokens", "output_target", "prefill_tps", "e2e_ms"} {
		if string(m[k]) != "null" {
			t.Errorf("error sample %s = %s, want null", k, m[k])
		}
	}
	if _, ok := m["conn_retry"]; ok {
		t.Error("conn_retry written for a request that was not sent again")
	}
	if _, ok := m["cut"]; ok {
		t.Error("cut written for a request that was not cut")
	}
	if _, ok := m["clock"]; ok {
		t.Error("clock written for a sample that does not say which clock stamped it")
	}
	c := errorSample()
	c.Cut, c.Outcome, c.ErrorKind = true, sample.OutcomeError, sample.ErrCanceled
	line, _ = marshalLine(ptr(FromSample(&c)))
	if !strings.Contains(string(line), `"cut":true,"outcome":"error"`) {
		t.Errorf("cut record: %s", line)
	}
	if string(m["backoff_ms"]) != "2001.235" {
		t.Errorf("backoff_ms = %s, want the 429's back-off 2001.235", m["backoff_ms"])
	}
	if string(m["chunks"]) != "[]" || string(m["ttfb_ms"]) != "30" || !strings.Contains(string(line), `<&>`) {
		t.Errorf("error record: %s", line)
	}
}

// A Record has nowhere to put a key or an Authorization header.
func TestRecordHasNoSecretFields(t *testing.T) {
	rt := reflect.TypeFor[Record]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		name := strings.ToLower(f.Name + " " + f.Tag.Get("json"))
		for _, bad := range []string{"key", "auth", "token_env", "secret", "password", "bearer"} {
			if strings.Contains(name, bad) {
				t.Errorf("field %s (%s) looks like a secret", f.Name, f.Tag)
			}
		}
		if f.Type.Kind() == reflect.Map {
			t.Errorf("field %s is a map: it could carry headers", f.Name)
		}
	}
}

func TestRecorderConcurrentAndReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				s := fullSample()
				s.Endpoint = fmt.Sprint("ep", w)
				s.Seq = uint64(i + 1)
				if err := rec.Write(&s); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	s := fullSample()
	if err := rec.Write(&s); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}

	// Appending: a second recorder adds to the same file.
	rec2, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	e := errorSample()
	if err := rec2.Write(&e); err != nil {
		t.Fatal(err)
	}
	if err := rec2.Close(); err != nil {
		t.Fatal(err)
	}

	recs := readBack(t, path)
	if len(recs) != writers*each+1 {
		t.Fatalf("%d records", len(recs))
	}
	seen := map[string]int{}
	for _, r := range recs[:writers*each] {
		seen[r.Endpoint]++
		if got := r.Sample(); got.FirstToken != 52123*time.Microsecond || len(got.Chunks) != 6 {
			t.Fatalf("bad record %+v", got)
		}
	}
	for w := range writers {
		if seen[fmt.Sprint("ep", w)] != each {
			t.Errorf("ep%d: %d records", w, seen[fmt.Sprint("ep", w)])
		}
	}
	if last := recs[len(recs)-1]; last.ErrorKind != "http_429" || last.Endpoint != "remote" {
		t.Errorf("appended record %+v", last)
	}
}

// readRecords is ReadFile's requests.
func readRecords(r io.Reader) ([]Record, error) {
	f, err := ReadFile(r)
	return f.Records, err
}

func TestReadFileTruncatedAndCorrupt(t *testing.T) {
	s := fullSample()
	line, _ := marshalLine(ptr(FromSample(&s)))
	whole := bytes.Repeat(line, 3)

	// A write torn by a kill: the last line is cut short, without its newline.
	torn := append(append([]byte{}, whole...), line[:len(line)/2]...)
	recs, err := readRecords(bytes.NewReader(torn))
	if len(recs) != 3 || !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("torn: %d records, err %v", len(recs), err)
	}
	// A complete last line without a newline is fine; so are blank lines.
	recs, err = readRecords(bytes.NewReader(append(append([]byte("\n"), whole...), bytes.TrimSpace(line)...)))
	if len(recs) != 4 || err != nil {
		t.Errorf("no final newline: %d records, err %v", len(recs), err)
	}
	// A corrupt line in the middle is an error naming it, not a truncation.
	bad := append(append(append([]byte{}, line...), "{not json\n"...), line...)
	recs, err = readRecords(bytes.NewReader(bad))
	if len(recs) != 1 || err == nil || errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("corrupt: %d records, err %v", len(recs), err)
	}
	recs, err = readRecords(strings.NewReader(""))
	if len(recs) != 0 || err != nil {
		t.Errorf("empty: %v %v", recs, err)
	}
	// Torn lines a later run appended after (NewRecorder ended them): skipped wherever they
	// are, the whole records around them kept, the first named and the others counted.
	twice := bytes.Join([][]byte{line, line[:len(line)/2], []byte("\n"), line, line[:10], []byte("\n"), line}, nil)
	recs, err = readRecords(bytes.NewReader(twice))
	if len(recs) != 3 || !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "line 2 and 1 more") {
		t.Errorf("torn lines in the middle: %d records, err %v", len(recs), err)
	}
	// A whole line that is not JSON at all stays an error, also after a torn one.
	recs, err = readRecords(bytes.NewReader(bytes.Join([][]byte{line[:len(line)/2], []byte("\n}{\n"), line}, nil)))
	if len(recs) != 0 || err == nil || errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("garbage after a torn line: %d records, err %v", len(recs), err)
	}
}

// A run killed in the middle of a write leaves a torn last line; the next run appending to
// the file ends it first, so its own first record is whole and readable.
func TestRecorderAppendsAfterATornLine(t *testing.T) {
	s := fullSample()
	line, _ := marshalLine(ptr(FromSample(&s)))
	path := filepath.Join(t.TempDir(), "run.jsonl")
	os.WriteFile(path, append(bytes.Repeat(line, 2), line[:len(line)/3]...), 0o600)
	rec, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := rec.Write(&s); err != nil {
			t.Fatal(err)
		}
	}
	rec.Close()
	b, _ := os.ReadFile(path)
	recs, err := readRecords(bytes.NewReader(b))
	if len(recs) != 4 || !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "line 3:") {
		t.Errorf("%d records, err %v, want 4 and line 3 torn", len(recs), err)
	}
	// A file that ends whole gets nothing added.
	whole := filepath.Join(t.TempDir(), "whole.jsonl")
	os.WriteFile(whole, line, 0o600)
	rec, err = NewRecorder(whole)
	if err != nil {
		t.Fatal(err)
	}
	rec.Close()
	if b, _ := os.ReadFile(whole); !bytes.Equal(b, line) {
		t.Errorf("a whole file changed on open: %q", b)
	}
}

func BenchmarkRecorderWrite(b *testing.B) {
	rec, err := NewRecorder(filepath.Join(b.TempDir(), "bench.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close()
	s := fullSample()
	s.Chunks = nil
	for i := range 256 {
		s.Chunks = append(s.Chunks, sample.Chunk{At: time.Duration(50+i*12) * time.Millisecond, Content: 4})
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := rec.Write(&s); err != nil {
			b.Fatal(err)
		}
	}
}

// readBack is the records of the file at path, read as a replay reads them; the test fails
// on a read error.
func readBack(t *testing.T, path string) []Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := readRecords(f)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
