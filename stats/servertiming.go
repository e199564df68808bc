package stats

import "tokscope/config"

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

func (t *ServerTiming) configure(*config.Endpoint)        {}
func (t *ServerTiming) reset()                            { *t = ServerTiming{} }
func (t *ServerTiming) fill(st *EndpointStats, _ readout) { st.ServerTiming = *t }

// take notes the server's clock of a finished background request: warm-ups only for the model
// load they absorbed, counted requests for their source and their model load.
func (t *ServerTiming) take(f *figures) {
	s := f.s
	if s.Server == nil || !f.background {
		return
	}
	switch {
	case s.Warmup:
		if f.ModelLoad {
			t.WarmupLoads++
		}
		return
	case !s.Counted(): // an ok request, cut or not
		return
	}
	t.Source = s.Server.Source
	if f.ModelLoad {
		if t.ModelLoads == 0 {
			t.FirstLoadSeq, t.FirstLoadMs = s.Seq, float64(s.Server.LoadMs)
		}
		t.ModelLoads++
	}
}
