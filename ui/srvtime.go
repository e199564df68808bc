package ui

import (
	"strconv"

	"tokscope/sample"
)

// serverBreakdown is the server's part of the newest request's TTFT that carried the server's
// own clock: "server: queue 1.2 · prefill 31.3 · outside 14.2 ms (llamacpp)"; queue where the
// server reports it (vLLM), its model load where it paid one (Ollama); "" when none did.
// Prefill is the server's TTFT less its queue and model load.
func serverBreakdown(samples []*sample.Sample) string {
	for i := len(samples) - 1; i >= 0; i-- {
		sm := samples[i]
		t := sm.Server
		if t == nil || t.TTFTms < 0 {
			continue
		}
		f := func(v sample.Figure) string { return strconv.FormatFloat(float64(v), 'f', 1, 64) }
		l, prefill := "server:", t.TTFTms
		if t.QueueMs >= 0 {
			l += " queue " + f(t.QueueMs) + " ·"
			prefill -= t.QueueMs
		}
		if t.ModelLoad() {
			l += " model load " + f(t.LoadMs) + " ·"
			prefill -= t.LoadMs
		}
		l += " prefill " + f(max(prefill, 0))
		if out, ok := sm.OutsideMs(); ok {
			l += " · outside " + f(sample.Figure(out))
		}
		return l + " ms (" + t.Source + ")"
	}
	return ""
}
