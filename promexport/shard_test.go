package promexport

import (
	"testing"
	"time"

	"tokscope/sample"
	"tokscope/sample/sampletest"
)

// A sharded run labels every series shard="I", the runtime's and the process's too, so that
// shards scraped by one Prometheus stay apart; the unsharded exporter has no shard label.
func TestShardLabelOnEverySeries(t *testing.T) {
	for _, shard := range []string{"", "2"} {
		e := New(testEndpoints(), WithShard(shard))
		s := sampletest.OK("local", "m1", 1, time.Time{}).Times(0, 50*ms).Role(51*ms).
			ChunksAt(3, 100*ms, 120*ms).Tokens(2, sample.SourceUsage).EndAt(130 * ms).Ptr()
		e.Started("local", 1)
		e.Observe(s)
		families := scrape(t, serve(t, e))
		series := 0
		for name, f := range families {
			for _, m := range f.GetMetric() {
				series++
				got, has := "", false
				for _, l := range m.GetLabel() {
					if l.GetName() == labelShard {
						got, has = l.GetValue(), true
					}
				}
				if has != (shard != "") || got != shard {
					t.Errorf("shard %q: %s%v has shard label %q (present %v)", shard, name, m.GetLabel(), got, has)
				}
			}
		}
		if _, ok := families[nameTTFT]; !ok || series < 20 {
			t.Fatalf("shard %q: %d series, %s among them %v: the exposition is not the exporter's", shard, series, nameTTFT, ok)
		}
	}
}
