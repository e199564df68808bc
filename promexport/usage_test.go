package promexport

import (
	"testing"
	"time"

	"tokscope/sample"
	"tokscope/sample/sampletest"
)

// TestRequestTokensHistogram: ok requests add one output observation each, and one input
// observation only when the server reported prompt tokens; failed requests add none.
func TestRequestTokensHistogram(t *testing.T) {
	e := New(testEndpoints())
	url := serve(t, e)
	a := sampletest.OK("local", "m1", 1, time.Time{}).Times(0, 10*ms).Role(11*ms).ChunksAt(3, 20*ms, 30*ms).
		Tokens(5, sample.SourceUsage).EndAt(40 * ms).Ptr()
	a.PromptTokens = 100
	b := sampletest.OK("local", "m1", 2, time.Time{}).Times(0, 10*ms).Role(11*ms).ChunksAt(3, 20*ms).
		Tokens(300, sample.SourceUsage).EndAt(40 * ms).Ptr() // no usage prompt count
	failed := &sample.Sample{Endpoint: "local", Model: "m1", Seq: 3, Outcome: sample.OutcomeError,
		ErrorKind: "http_500", Tokens: 7, PromptTokens: 9}
	for _, s := range []*sample.Sample{a, b, failed} {
		e.Observe(s)
	}
	fams := scrape(t, url)
	checkHistogram(t, fams, nameRequestTokens, map[string]string{"endpoint": "local", "model": "m1", "token_type": "output"},
		histWant{count: 2, sum: 305, buckets: map[float64]uint64{4: 0, 16: 1, 256: 1, 1024: 2}})
	checkHistogram(t, fams, nameRequestTokens, map[string]string{"endpoint": "local", "model": "m1", "token_type": "input"},
		histWant{count: 1, sum: 100, buckets: map[float64]uint64{64: 0, 256: 1}})
}
