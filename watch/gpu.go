package watch

import (
	"tokscope/servermetrics"

	dto "github.com/prometheus/client_model/go"
)

// GPUInstant is what a dcgm-exporter said at one scrape, summed over its GPUs.
type GPUInstant struct {
	GPUs     int      `json:"gpus"`
	PowerW   *float64 `json:"power_w"`   // DCGM_FI_DEV_POWER_USAGE, W
	EnergyMJ *float64 `json:"energy_mj"` // DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, mJ since boot
}

// dcgmBlank is where DCGM's blank sentinels begin (a field the GPU does not support).
const dcgmBlank = 9.2e18

// gpuOf sums power and energy over the GPUs of a dcgm-exporter exposition. MIG instance
// series (GPU_I_ID) are left out: their GPU's own series already counts them.
func gpuOf(fams map[string]*dto.MetricFamily) (*GPUInstant, bool) {
	devices := map[string]bool{}
	sum := func(name string) *float64 {
		var total float64
		n := 0
		for _, m := range fams[name].GetMetric() {
			if _, mig := labelOf(m, "GPU_I_ID"); mig {
				if id, _ := labelOf(m, "GPU_I_ID"); id != "" {
					continue
				}
			}
			v, ok := servermetrics.Scalar(m)
			if !ok || m.Histogram != nil || v >= dcgmBlank || v < 0 { // DCGM fields are gauges and counters
				continue
			}
			dev, ok := labelOf(m, "UUID")
			if !ok {
				dev, _ = labelOf(m, "gpu")
			}
			devices[dev] = true
			total += v
			n++
		}
		if n == 0 {
			return nil
		}
		return &total
	}
	g := &GPUInstant{PowerW: sum("DCGM_FI_DEV_POWER_USAGE"), EnergyMJ: sum("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")}
	g.GPUs = len(devices)
	return g, g.PowerW != nil || g.EnergyMJ != nil
}
