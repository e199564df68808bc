package record

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"tokscope/servermetrics"
)

// A scrape written to the record reads back as the Update it was, every figure and its
// absence; a request line and the scrape lines share the file, each read as what it is.
func TestServerLinesRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 14, 15, 9, 26, 123456789, time.UTC)
	ok := servermetrics.Update{Endpoint: 1, State: servermetrics.StateOK, Reading: servermetrics.Reading{
		Kind: servermetrics.KindVLLM, At: at,
		Running: servermetrics.Value{V: 3, OK: true}, Waiting: servermetrics.Value{V: 0, OK: true},
		KVCacheUsage: servermetrics.Value{V: 0.125, OK: true}, GenTPS: servermetrics.Value{V: 812.5, OK: true}, GenLive: true,
		GenTokens: servermetrics.Value{V: 812.5, OK: true}, GenSpan: time.Second,
		PrefixHits: 64, PrefixQueries: 128, PrefixFromCounters: true,
	}}
	down := servermetrics.Update{Endpoint: 1, State: servermetrics.StateUnavailable, Note: "connection refused",
		Reading: servermetrics.Reading{At: at.Add(time.Second)}}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	s := fullSample()
	s.Endpoint, s.Model = "b", "model-b"
	for _, err := range []error{rec.WriteServer("a", "model-a", ok), rec.Write(&s), rec.WriteServer("a", "model-a", down), rec.Close()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(bytes.NewReader(b))
	if err != nil || len(f.Records) != 1 || len(f.Server) != 2 {
		t.Fatalf("%d records, %d server lines, error %v", len(f.Records), len(f.Server), err)
	}
	for i, want := range []servermetrics.Update{ok, down} {
		if got := f.Server[i].Update(1); !equalUpdates(got, want) {
			t.Errorf("scrape %d: read back %+v, wrote %+v", i, got, want)
		}
	}
	// readRecords is the requests only; a line of an unknown type is skipped.
	more := append(b, []byte(`{"type":"future","endpoint":"a"}`+"\n")...)
	if recs, err := readRecords(bytes.NewReader(more)); err != nil || len(recs) != 1 {
		t.Errorf("readRecords: %d records, %v", len(recs), err)
	}
	// No sentinel: a scrape line has no "stream", and one without a response no "at" (nor a
	// reading's zeros).
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &keys); err != nil {
			t.Fatal(err)
		}
		if _, ok := keys["stream"]; ok {
			t.Errorf("line %d has a stream: %s", i+1, line)
		}
		if i == 2 {
			for _, k := range []string{"running", "prefix_hits", "gen_live", "gen_span_ms"} {
				if _, ok := keys[k]; ok {
					t.Errorf("a failed scrape has %q: %s", k, line)
				}
			}
		}
	}
	never := servermetrics.Update{State: servermetrics.StateUnavailable, Note: "not yet"}
	if l, _ := marshalLine(&ServerLine{scrape: scrapeOf(serverType, "a", "m", time.Time{}, never)}); strings.Contains(string(l), `"at"`) {
		t.Errorf("a scrape without a response has an instant: %s", l)
	}

	// A replay hands the scrapes on by endpoint; endpoints keep the order of their requests,
	// one named only by scrapes comes after them.
	rp, err := LoadReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.Endpoints) != 2 || rp.Endpoints[0].Name != "b" || rp.Endpoints[1].Name != "a" || len(rp.Server) != 2 || rp.Server[0].Endpoint != 1 {
		t.Errorf("replay endpoints %v, server %+v", rp.Endpoints, rp.Server)
	}
}

func equalUpdates(a, b servermetrics.Update) bool {
	return a.Endpoint == b.Endpoint && a.State == b.State && a.Note == b.Note && a.Reading.At.Equal(b.Reading.At) &&
		a.Reading.Kind == b.Reading.Kind && a.Reading.Running == b.Reading.Running && a.Reading.Waiting == b.Reading.Waiting &&
		a.Reading.KVCacheUsage == b.Reading.KVCacheUsage && a.Reading.PrefixCacheHitRate == b.Reading.PrefixCacheHitRate &&
		a.Reading.GenTPS == b.Reading.GenTPS && a.Reading.GenLive == b.Reading.GenLive && a.Reading.GenTokens == b.Reading.GenTokens &&
		a.Reading.GenSpan == b.Reading.GenSpan && a.Reading.PrefixHits == b.Reading.PrefixHits &&
		a.Reading.PrefixQueries == b.Reading.PrefixQueries && a.Reading.PrefixFromCounters == b.Reading.PrefixFromCounters
}

// Records written before the sentinels went (server and GPU lines with "stream":
// 9223372036854775807 and a zero "at"; request lines with "" and 0 for what they lacked) read
// as the same requests and scrapes as the lines written now.
func TestOldRecordsReadTheSame(t *testing.T) {
	old := `{"type":"server","endpoint":"a","model":"m","stream":9223372036854775807,"at":"0001-01-01T00:00:00Z","state":"unavailable","note":"refused","running":null,"waiting":null,"kv_cache_usage":null,"prefix_cache_hit_rate":null,"gen_tps":null,"gen_live":false,"gen_tokens":null,"prefix_hits":0,"prefix_queries":0,"prefix_from_counters":false,"gen_span_ms":0}
{"type":"gpu","endpoint":"a","model":"m","stream":9223372036854775807,"at":"2026-03-14T15:09:26Z","state":"ok","gpus":1,"power_w":300,"util":null,"memory_used_mib":null,"energy_mj":null,"energy_j":null,"from_counter":false,"span_ms":0}
{"endpoint":"a","model":"m","api":"chat","seq":2,"warmup":false,"response_id":"","start":"2026-03-14T15:09:26Z","queue_ms":0,"dns_ms":null,"connect_ms":null,"tls_ms":null,"reused":true,"wrote_ms":0.1,"headers_ms":null,"first_event_ms":null,"first_token_ms":null,"first_answer_ms":null,"last_token_ms":null,"end_ms":3,"chunks":[],"tokens":0,"token_source":"","reasoning_tokens":0,"prompt_tokens":0,"cached_tokens":null,"output_target":null,"cache":"bust","outcome":"error","finish_reason":"","error_kind":"connect","error_message":"refused","http_status":0,"retry_after_ms":0}
`
	f, err := ReadFile(strings.NewReader(old))
	if err != nil || len(f.Server) != 1 || len(f.GPU) != 1 || len(f.Records) != 1 {
		t.Fatalf("%d server, %d gpu, %d requests: %v", len(f.Server), len(f.GPU), len(f.Records), err)
	}
	var now bytes.Buffer
	for _, l := range []any{&f.Server[0], &f.GPU[0], &f.Records[0]} {
		b, err := marshalLine(l)
		if err != nil {
			t.Fatal(err)
		}
		now.Write(b)
	}
	for _, sentinel := range []string{"9223372036854775807", "0001-01-01", `""`, `"http_status"`, `"retry_after_ms"`, `"prefix_hits"`, `"span_ms"`} {
		if strings.Contains(now.String(), sentinel) {
			t.Errorf("rewritten lines hold %s:\n%s", sentinel, now.String())
		}
	}
	g, err := ReadFile(&now)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := f.Server[0].Update(0), g.Server[0].Update(0); !equalUpdates(a, b) {
		t.Errorf("server line: old %+v, now %+v", a, b)
	}
	if a, b := f.GPU[0].Update(0), g.GPU[0].Update(0); a.GPU.PowerW != b.GPU.PowerW || !a.GPU.At.Equal(b.GPU.At) || a.GPU.Span != b.GPU.Span {
		t.Errorf("gpu line: old %+v, now %+v", a, b)
	}
	if a, b := f.Records[0].Sample(), g.Records[0].Sample(); !reflect.DeepEqual(a, b) {
		t.Errorf("request: old %+v, now %+v", a, b)
	}
}
