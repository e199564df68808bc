package servermetrics

import (
	"encoding/json"
	"testing"
)

// A figure not exposed is JSON null and reads back as not exposed; an exposed zero stays an
// exposed zero (a record must not turn "idle" into "unknown").
func TestValueJSON(t *testing.T) {
	t.Parallel()
	in := Reading{Kind: KindVLLM, Running: some(0), Waiting: Value{}, KVCacheUsage: some(0.125), GenLive: true}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"kind":"vllm","running":0,"waiting":null,"kv_cache_usage":0.125,"prefix_cache_hit_rate":null,"gen_tps":null,"gen_live":true,"gen_tokens":null,"prefix_from_counters":false}` // no prefix counters: no 0 standing for them
	if string(b) != want {
		t.Fatalf("JSON\n %s\nwant\n %s", b, want)
	}
	back := Reading{Waiting: some(7)} // null must clear it
	if err := json.Unmarshal(b, &back); err != nil || back != in {
		t.Errorf("read back %+v (%v), want %+v", back, err, in)
	}
	var v Value
	if err := json.Unmarshal([]byte(`"3"`), &v); err == nil {
		t.Error("a string figure read without an error")
	}
}
