package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"tokscope/sim"
)

// docField is one key of a record line as docs/outputs.md describes it.
type docField struct {
	types    []string // JSON types: string, integer, number, boolean, array, object, null
	present  string   // "always", "state ok", or the condition it is written under
	lineType string
}

// recordDocs reads the tables of "## The record, line by line" in docs/outputs.md: for each
// "### `name` …" subsection, its keys. The docs are the contract; this is how the test reads it.
func recordDocs(t *testing.T) map[string]map[string]docField {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs/outputs.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## The record, line by line\n")
	if start < 0 {
		t.Fatal(`docs/outputs.md has no "## The record, line by line"`)
	}
	doc = doc[start+1:]
	if end := strings.Index(doc[3:], "\n## "); end >= 0 {
		doc = doc[:end+3]
	}
	heading := regexp.MustCompile("^### `([a-z_]+)`")
	key := regexp.MustCompile("`([a-z_0-9]+)`")
	tables := map[string]map[string]docField{}
	var current string
	for _, line := range strings.Split(doc, "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			current = m[1]
			tables[current] = map[string]docField{}
			continue
		}
		cells := strings.Split(line, "|")
		if current == "" || len(cells) != 6 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue // not a row of a field table (its header, its rule, prose)
		}
		f := docField{present: strings.TrimSpace(cells[3]), lineType: current}
		for _, ty := range strings.Split(strings.TrimSpace(cells[2]), " or ") {
			switch ty {
			case "string", "integer", "number", "boolean", "array", "object", "null":
				f.types = append(f.types, ty)
			default:
				t.Fatalf("docs/outputs.md, %s lines: type %q of %s is none of string, integer, number, boolean, array, object, null", current, ty, cells[1])
			}
		}
		for _, m := range key.FindAllStringSubmatch(cells[1], -1) {
			tables[current][m[1]] = f
		}
	}
	for _, want := range []string{"request", "server", "gpu", "server_timing"} {
		if len(tables[want]) == 0 {
			t.Fatalf("docs/outputs.md describes no %s keys", want)
		}
	}
	return tables
}

// jsonType is the documented type a decoded JSON value has.
func jsonType(v any, wants []string) bool {
	for _, w := range wants {
		switch x := v.(type) {
		case nil:
			if w == "null" {
				return true
			}
		case string:
			if w == "string" {
				return true
			}
		case bool:
			if w == "boolean" {
				return true
			}
		case []any:
			if w == "array" {
				return true
			}
		case map[string]any:
			if w == "object" {
				return true
			}
		case json.Number:
			f, err := x.Float64()
			if err == nil && (w == "number" || w == "integer" && f == math.Trunc(f) && !strings.ContainsAny(string(x), ".eE")) {
				return true
			}
		}
	}
	return false
}

// checkAgainstDocs fails on a key the docs do not name, a value of another type, and a key
// the docs say is always there (or on every ok scrape) that is missing.
func checkAgainstDocs(t *testing.T, where string, obj map[string]any, fields map[string]docField) {
	t.Helper()
	for k, v := range obj {
		f, ok := fields[k]
		if !ok {
			t.Errorf("%s: key %q is not in docs/outputs.md", where, k)
			continue
		}
		if !jsonType(v, f.types) {
			t.Errorf("%s: %q is %v, docs/outputs.md says %s", where, k, v, strings.Join(f.types, " or "))
		}
	}
	for k, f := range fields {
		_, has := obj[k]
		required := f.present == "always" || f.present == "state ok" && obj["state"] == "ok"
		if required && !has {
			t.Errorf("%s: no %q, which docs/outputs.md says is there %s", where, k, f.present)
		}
	}
}

// TestRecordMatchesItsDocs: a real run (the simulator with the server's own clock, its
// /metrics, a GPU exporter, conversations of two turns) writes a record; every line of it is
// decoded and checked against docs/outputs.md's tables for its type, so that the docs and the
// record cannot drift apart.
func TestRecordMatchesItsDocs(t *testing.T) {
	docs := recordDocs(t)
	// A second endpoint fails now and then: error fields (random, so not required below).
	s, err := sim.Start(sim.Options{}, sim.Profile{Name: "d", Model: "m", TTFT: 40 * time.Millisecond, TokensPerSecond: 200,
		MaxTokens: 20, VLLMMetrics: true, PrefixCache: true, GPU: sim.GPU{Count: 1, SlotWatts: 250}},
		sim.Profile{Name: "e", Model: "m2", TTFT: 20 * time.Millisecond, TokensPerSecond: 400, MaxTokens: 20,
			Rate500: 0.3, RateMidStreamError: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	var stdout, stderr bytes.Buffer
	args := []string{"--no-tui", "-o", "json", "--requests", "6", "--turns", "2", "-i", "0s", "--max-tokens", "20",
		"-u", s.BaseURL("d"), "-m", "m", "-u", s.BaseURL("e"), "-m", "m2", "--gpu-metrics", s.GPUMetricsURL("d"), "--record", rec}
	if code := Main("", args, &stdout, &stderr); code != ExitOK && code != ExitFailed {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		typ := "request"
		if v, ok := obj["type"]; ok {
			typ, _ = v.(string)
			delete(obj, "type") // request lines have none; the others' is checked here
			if _, documented := docs[typ]["type"]; !documented {
				t.Errorf("line %d: type %q is not in docs/outputs.md", i+1, typ)
				continue
			}
			obj["type"] = typ
		}
		seen[typ]++
		where := fmt.Sprintf("%s line %d", typ, i+1)
		checkAgainstDocs(t, where, obj, docs[typ])
		if st, ok := obj["server_timing"].(map[string]any); ok {
			seen["server_timing"]++
			checkAgainstDocs(t, where+" server_timing", st, docs["server_timing"])
		}
		if _, ok := obj["turn"]; ok {
			seen["turn"]++
		}
	}
	for _, want := range []string{"request", "server", "gpu", "server_timing", "turn"} {
		if seen[want] == 0 {
			t.Errorf("the run wrote no %s (seen %v): the test checks nothing of it", want, seen)
		}
	}
}
