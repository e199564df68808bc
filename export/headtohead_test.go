package export

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"tokscope/stats"
)

func spread(seed uint64, n int, mean, sd float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	v := make([]float64, n)
	for i := range v {
		v[i] = mean + rng.NormFloat64()*sd
	}
	return v
}

// h2hSnapshot: "fast" is clearly best on both metrics, "slow" clearly worse, "twin" has the
// very same values as "fast", "new" has only two requests.
func h2hSnapshot() stats.Snapshot {
	fastTTFT, fastDecode := spread(1, 40, 100, 10), spread(4, 40, 120, 10)
	return stats.Snapshot{TTFTFrom: "first-token", Endpoints: []stats.EndpointStats{
		{Name: "slow", LastTTFT: spread(2, 40, 300, 30), LastDecodeTPS: spread(3, 40, 40, 4)},
		{Name: "fast", LastTTFT: fastTTFT, LastDecodeTPS: fastDecode},
		{Name: "twin", LastTTFT: fastTTFT, LastDecodeTPS: fastDecode}, // a tie: the first is best
		{Name: "new", LastTTFT: []float64{500, 510}, LastDecodeTPS: []float64{20, 21}},
	}}
}

func TestHeadToHeadJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, h2hSnapshot()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Endpoints  []json.RawMessage `json:"endpoints"`
		HeadToHead []struct {
			Endpoint, Versus, Metric, Verdict string
			Diff                              *float64
			CI95                              *[2]float64
			Samples                           [2]int
		} `json:"head_to_head"`
		TTFTFrom *string `json:"ttft_from"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.TTFTFrom != nil {
		t.Errorf("ttft_from written for the default definition: %s", buf.Bytes())
	}
	if len(doc.HeadToHead) != 6 {
		t.Fatalf("want 3 rows per metric, got %d: %s", len(doc.HeadToHead), buf.Bytes())
	}
	want := map[string]string{
		"slow ttft_ms": "slower", "twin ttft_ms": "not distinguishable yet", "new ttft_ms": "not distinguishable yet",
		"slow decode_tps": "slower", "twin decode_tps": "not distinguishable yet", "new decode_tps": "not distinguishable yet",
	}
	for _, h := range doc.HeadToHead {
		if h.Versus != "fast" {
			t.Errorf("%s %s compared with %s, want fast", h.Endpoint, h.Metric, h.Versus)
		}
		if got := want[h.Endpoint+" "+h.Metric]; h.Verdict != got {
			t.Errorf("%s %s: verdict %q, want %q", h.Endpoint, h.Metric, h.Verdict, got)
		}
		if h.Diff == nil || h.CI95 == nil || h.CI95[0] > *h.Diff || *h.Diff > h.CI95[1] {
			t.Errorf("%s %s: diff %v ci %v", h.Endpoint, h.Metric, h.Diff, h.CI95)
		}
		if h.Verdict == "slower" && h.CI95[0] <= 0 && h.CI95[1] >= 0 {
			t.Errorf("%s %s: slower with a CI that includes 0: %v", h.Endpoint, h.Metric, h.CI95)
		}
	}
	// The endpoints keep exactly their contract keys.
	var first map[string]json.RawMessage
	json.Unmarshal(doc.Endpoints[0], &first)
	if len(first) != len(endpointKeys) {
		t.Errorf("endpoint has %d keys, want %d", len(first), len(endpointKeys))
	}

	// Reproducible output.
	var again bytes.Buffer
	WriteJSON(&again, h2hSnapshot())
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Errorf("two runs differ:\n%s\n%s", buf.Bytes(), again.Bytes())
	}

	// One endpoint: no key. Two without data: an empty list. Another TTFT definition: named.
	for _, c := range []struct {
		snap stats.Snapshot
		has  string
		not  string
	}{
		{stats.Snapshot{Endpoints: []stats.EndpointStats{{Name: "a"}}}, "", "head_to_head"},
		{stats.Snapshot{Endpoints: []stats.EndpointStats{{Name: "a"}, {Name: "b"}}}, `"head_to_head":[]`, "ttft_from"},
		{stats.Snapshot{TTFTFrom: "first-event", Endpoints: []stats.EndpointStats{{Name: "a"}}}, `"ttft_from":"first-event"`, ""},
	} {
		buf.Reset()
		WriteJSON(&buf, c.snap)
		if c.has != "" && !strings.Contains(buf.String(), c.has) || c.not != "" && strings.Contains(buf.String(), c.not) {
			t.Errorf("want %q and not %q in %s", c.has, c.not, buf.String())
		}
	}
}

func TestHeadToHeadTable(t *testing.T) {
	snap := h2hSnapshot()
	snap.TTFTFrom = "first-event"
	snap.Endpoints[0].RateLimitRemainingRequests, snap.Endpoints[0].RateLimitRemainingTokens = 12, -1
	snap.Endpoints[0].RateLimitAt = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	snap.Endpoints[0].BackoffTotal = 3500 * time.Millisecond
	snap.Endpoints[2].BackoffTotal = time.Second // backed off without rate-limit headers
	var buf bytes.Buffer
	if err := WriteTable(&buf, snap); err != nil {
		t.Fatal(err)
	}
	golden(t, "headtohead.txt", buf.Bytes())
	out := buf.String()
	for _, want := range []string{"rate limit remaining 12 requests, — tokens  backed off 3.5s (not latency)", "  backed off 1s (not latency)", "TTFT measured to the first SSE event",
		"head-to-head vs the best", "slower", "not distinguishable yet  ", "not distinguishable yet (n<5)   2/40"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if strings.Count(out, "rate limit") != 1 || strings.Count(out, "backed off") != 2 {
		t.Errorf("a rate-limit line for endpoints without headers:\n%s", out)
	}
}

// An endpoint without a single ok request has nothing compared: its row says so, not "not
// distinguishable yet (n<5)", which promises a verdict from more of the same; an endpoint
// with some values keeps the "yet".
func TestHeadToHeadTableNoData(t *testing.T) {
	snap := h2hSnapshot()
	snap.Endpoints = append(snap.Endpoints, stats.EndpointStats{Name: "down"})
	var buf bytes.Buffer
	if err := WriteTable(&buf, snap); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.Contains(line, " down     fast ") {
			rows++
			if !strings.HasSuffix(line, "—                 no ok requests   0/40") {
				t.Errorf("row of an endpoint without data: %q", line)
			}
		}
	}
	if rows != 2 || !strings.Contains(buf.String(), "not distinguishable yet (n<5)   2/40") {
		t.Errorf("%d rows for the endpoint without data, want 2 (TTFT, decode):\n%s", rows, buf.String())
	}
}
