package stats

import (
	"testing"
	"time"

	"tokscope/metric"
	"tokscope/sample"
	"tokscope/sample/sampletest"
)

// A counted request that paid for loading the model is marked and kept out of the TTFT
// figures; one a warm-up paid for is counted as absorbed.
func TestModelLoadKeptOutOfTTFT(t *testing.T) {
	a := newAgg()
	load := func(s *sample.Sample, loadMs sample.Figure) {
		st := sample.NoServerTiming("ollama")
		st.LoadMs, st.TTFTms, st.DecodeMs, st.DecodeTokens = loadMs, loadMs+5, 100, 21
		s.Server = &st
	}
	wu := sampletest.OK("a", "m", 0, t0).Stream(400*msD, 3, 10*msD, 3).Ptr()
	wu.Warmup = true
	load(wu, 300)
	a.Add(wu)
	for i := range 4 {
		s := sampletest.OK("a", "m", 0, t0.Add(time.Duration(i+1)*time.Second)).Stream(100*msD, 21, 10*msD, 21).Ptr()
		s.Seq = uint64(i + 2)
		load(s, 1)
		if i == 0 {
			s.FirstToken, s.Chunks[0].At = 400*msD, 400*msD
			load(s, 320)
		}
		a.Add(s)
	}
	e := a.Snapshot(t0.Add(10 * time.Second)).Endpoints[0]
	st := e.ServerTiming
	if st.Source != "ollama" || st.ModelLoads != 1 || st.FirstLoadSeq != 2 || st.FirstLoadMs != 320 || st.WarmupLoads != 1 {
		t.Errorf("server timing %+v", st)
	}
	if d := e.Whole.Of(metric.TTFT); d.Count != 3 || d.Max > 101 {
		t.Errorf("TTFT %+v: the model-load request is in it", d)
	}
	if d := e.Whole.Of(metric.ServerTTFT); d.Count != 3 || d.Max != 6 {
		t.Errorf("server TTFT %+v", d)
	}
}
