package ui

import (
	"testing"

	"github.com/charmbracelet/x/ansi"

	"tokscope/servermetrics"
	"tokscope/stats"
)

// The GPU line says watts, utilisation and tokens per joule at a card's widths, keeps its
// units when it shortens, and is a quiet note when the exporter does not answer; a card shows
// it only with a GPU exporter.
func TestGPULine(t *testing.T) {
	s := DefaultStyles()
	g := &stats.GPUStats{Scrapes: 4, Latest: servermetrics.GPUReading{
		PowerW: servermetrics.Value{V: 612.4, OK: true}, Util: servermetrics.Value{V: 96.5, OK: true}},
		TokensPerJoule: servermetrics.Value{V: 1.523, OK: true}}
	for w, want := range map[int]string{
		60: "gpu 612 W · util 96% · 1.52 tok/J",
		30: "gpu 612 W 96% 1.52 tok/J",
		20: "gpu 612 W 1.52 tok/J",
	} {
		if got := ansi.Strip(featureLine(&s, "gpu", &stats.EndpointStats{GPU: g}, w)); got != want {
			t.Errorf("width %d: %q, want %q", w, got, want)
		}
	}
	down := &stats.GPUStats{State: servermetrics.StateUnavailable, Note: "connection refused"}
	if got := ansi.Strip(featureLine(&s, "gpu", &stats.EndpointStats{GPU: down}, 60)); got != "gpu metrics: connection refused" {
		t.Errorf("note: %q", got)
	}
	if containsLine(cardPriority(cardFacts{}), lineGPU) || !containsLine(cardPriority(cardFacts{gpu: true, server: true}), lineGPU) {
		t.Error("the GPU line is offered without a GPU exporter, or not with one")
	}
}

func containsLine(ls []int, l int) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}
