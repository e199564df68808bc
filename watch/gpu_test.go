package watch

import (
	"path/filepath"
	"testing"
	"time"
)

// TestGPUFigures: watts summed over the GPUs of a dcgm-exporter (a MIG instance's series left
// to its GPU's), and tokens per joule over the window: from the energy counter where it is
// exported, else from the power integrated over the scrapes.
func TestGPUFigures(t *testing.T) {
	body := mustRead(t, filepath.Join("..", "servermetrics", "testdata", "dcgm-2xh100-mig.txt"))
	fams, err := parseExposition(body, "")
	if err != nil {
		t.Fatal(err)
	}
	g, ok := gpuOf(fams)
	if !ok || g.GPUs != 2 {
		t.Fatalf("gpuOf: %+v %v", g, ok)
	}
	near(t, "power", g.PowerW, 612.433+598.849)
	near(t, "energy", g.EnergyMJ, 31035686671+30998123456)

	mj := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name         string
		first, last  *GPUInstant
		wantPerJoule float64
	}{
		// 100 J by the counter over the span: 3456 tokens / 100 J.
		{"energy counter", &GPUInstant{GPUs: 1, PowerW: mj(500), EnergyMJ: mj(1e6)}, &GPUInstant{GPUs: 1, PowerW: mj(700), EnergyMJ: mj(1.1e6)}, 34.56},
		// No counter: (500 + 700) / 2 W over 10 s = 6000 J.
		{"power only", &GPUInstant{GPUs: 1, PowerW: mj(500)}, &GPUInstant{GPUs: 1, PowerW: mj(700)}, 3456.0 / 6000},
	} {
		f, tg := oneTargetFleet(t, 10*time.Second)
		a := instantOf(t, tg.Key(), "testdata/vllm-hist-1.txt", t0)
		b := instantOf(t, tg.Key(), "testdata/vllm-hist-2.txt", t0.Add(10*time.Second))
		a.GPU, b.GPU = c.first, c.last
		f.Observe(a)
		f.Observe(b)
		r := f.Rows(b.At)[0]
		near(t, c.name+": watts", r.GPUPowerW, 700)
		near(t, c.name+": tokens per joule", r.TokensPerJoule, c.wantPerJoule)
	}
}
