package stats

import "tokscope/sample"

// ServerTiming is what an endpoint's server said of its own clock over the run (docs/server-side.md,
// "The server's own clock"); its distributions are the registered metrics of Group
// metric.Server (Window.Of).
type ServerTiming struct {
	// Source is "llamacpp", "vllm" or "ollama" when counted requests carried the server's
	// clock; "" when none did (the JSON's "server_timing": null).
	Source string
	// ModelLoads counts the counted requests that paid for loading the model
	// (sample.ServerTiming.ModelLoad): kept out of the TTFT figures, and shown, since the
	// warm-up did not absorb them. FirstLoadSeq and FirstLoadMs are the first such request's.
	ModelLoads   int
	FirstLoadSeq uint64
	FirstLoadMs  float64
	// WarmupLoads counts warm-up requests that paid for loading the model (absorbed).
	WarmupLoads int
}

// observe notes the server's clock of a finished request: warm-ups only for the model load
// they absorbed, counted requests for their source and their model load.
func (t *ServerTiming) observe(s *sample.Sample) {
	if s.Server == nil || s.Stream != 0 {
		return
	}
	load := s.Server.ModelLoad()
	switch {
	case s.Warmup:
		if load {
			t.WarmupLoads++
		}
		return
	case !s.Counted():
		return
	}
	t.Source = s.Server.Source
	if load {
		if t.ModelLoads == 0 {
			t.FirstLoadSeq, t.FirstLoadMs = s.Seq, float64(s.Server.LoadMs)
		}
		t.ModelLoads++
	}
}
