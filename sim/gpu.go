package sim

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// GPU describes the GPUs behind a profile, served as NVIDIA's dcgm-exporter serves them at
// GET /<profile>/gpu/metrics (families of its etc/default-counters.csv, labels gpu, UUID,
// pci_bus_id, device, modelName, Hostname). Their energy follows the profile's own work: the
// GPUs together draw IdleWatts, plus SlotWatts for every running request (from admission until
// its response ends, as /metrics counts running), shared equally between the GPUs. So the
// energy of a run is known exactly (Server.GPUEnergy). The zero value has no GPU: a 404.
type GPU struct {
	Count     int     // GPUs (0: none)
	IdleWatts float64 // the GPUs together, with no request running
	SlotWatts float64 // added per running request
	MemoryMiB float64 // framebuffer used per GPU with an empty KV cache; 0 means 20480
	Model     string  // modelName; "" means "NVIDIA H100 80GB HBM3"
	// NoEnergy leaves DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION out (power only), as an exporter
	// whose counters file does not list it.
	NoEnergy bool
}

// busyMeter integrates the running requests over time: slot·seconds, the GPUs' work. Its
// methods are called with backend.mu held.
type busyMeter struct {
	start, last time.Time
	slotSeconds float64 // ∫ running dt up to last
}

// advance accounts for running requests from the last change until now.
func (m *busyMeter) advance(now time.Time, running int64) {
	if m.start.IsZero() {
		m.start, m.last = now, now
	}
	if now.After(m.last) {
		m.slotSeconds += float64(running) * now.Sub(m.last).Seconds()
		m.last = now
	}
}

// gpuState is what the GPU exposition reports at one instant.
type gpuState struct {
	energyJ, watts, util, kvUsage float64
}

func (e *backend) gpuAt(now time.Time, g GPU, slots int) gpuState {
	e.mu.Lock()
	running := e.running.Load()
	e.busy.advance(now, running)
	busy, elapsed := e.busy.slotSeconds, now.Sub(e.busy.start).Seconds()
	kv := e.kvTokens.Load()
	e.mu.Unlock()
	st := gpuState{
		energyJ: g.IdleWatts*elapsed + g.SlotWatts*busy,
		watts:   g.IdleWatts + g.SlotWatts*float64(running),
		kvUsage: min(1, float64(max(0, kv))/float64(e.kvCapacity)),
	}
	if slots <= 0 {
		slots = 1
	}
	st.util = 100 * min(1, float64(running)/float64(slots))
	return st
}

// GPUEnergy returns the energy the profile's GPUs have used since the server started, in
// joules: what its energy counters add up to now.
func (s *Server) GPUEnergy(profile string) (float64, bool) {
	ep, ok := s.endpoint(profile)
	if !ok || ep.profile.GPU.Count == 0 {
		return 0, false
	}
	return ep.backend.gpuAt(time.Now(), ep.profile.GPU, ep.profile.MaxRunning).energyJ, true
}

// GPUMetricsURL returns the profile's dcgm-style exposition (--gpu-metrics).
func (s *Server) GPUMetricsURL(profile string) string { return s.url + "/" + profile + "/gpu/metrics" }

var dcgmLabels = []string{"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"}

var dcgmFamilies = []struct {
	desc   *prometheus.Desc
	typ    prometheus.ValueType
	energy bool
	value  func(st gpuState, g GPU) float64 // per GPU
}{
	{prometheus.NewDesc("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", dcgmLabels, nil), prometheus.GaugeValue, false,
		func(st gpuState, g GPU) float64 { return st.watts / float64(g.Count) }},
	{prometheus.NewDesc("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).", dcgmLabels, nil), prometheus.CounterValue, true,
		func(st gpuState, g GPU) float64 { return st.energyJ * 1000 / float64(g.Count) }},
	{prometheus.NewDesc("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", dcgmLabels, nil), prometheus.GaugeValue, false,
		func(st gpuState, g GPU) float64 { return st.util }},
	{prometheus.NewDesc("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", dcgmLabels, nil), prometheus.GaugeValue, false,
		func(st gpuState, g GPU) float64 { return g.MemoryMiB + st.kvUsage*40960 }},
}

// gpuCollector reports one profile's GPUs at each scrape.
type gpuCollector struct{ ep *endpoint }

func (c gpuCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range dcgmFamilies {
		ch <- f.desc
	}
}

func (c gpuCollector) Collect(ch chan<- prometheus.Metric) {
	g := c.ep.profile.GPU
	st := c.ep.backend.gpuAt(time.Now(), g, c.ep.profile.MaxRunning)
	for _, f := range dcgmFamilies {
		if f.energy && g.NoEnergy {
			continue
		}
		for i := range g.Count {
			ch <- prometheus.MustNewConstMetric(f.desc, f.typ, f.value(st, g),
				fmt.Sprint(i), fmt.Sprintf("GPU-5157a000-0000-4000-8000-%012d", i), fmt.Sprintf("00000000:%02X:00.0", 0x18+i),
				fmt.Sprintf("nvidia%d", i), g.Model, "tokscope-sim")
		}
	}
}

// serveGPU answers /<profile>/gpu/metrics: 404 for a profile without GPUs.
func (ep *endpoint) serveGPU(w http.ResponseWriter, r *http.Request) {
	if ep.profile.GPU.Count == 0 || ep.gpuMetrics == nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("profile %q has no GPU", ep.profile.Name), "invalid_request_error", "not_found")
		return
	}
	ep.gpuMetrics.ServeHTTP(w, r)
}

func newGPUHandler(ep *endpoint) (*metricsHandler, error) {
	if ep.profile.GPU.MemoryMiB == 0 {
		ep.profile.GPU.MemoryMiB = 20480
	}
	if ep.profile.GPU.Model == "" {
		ep.profile.GPU.Model = "NVIDIA H100 80GB HBM3"
	}
	now := time.Now() // the GPUs idle from the server's start
	ep.backend.busy.start, ep.backend.busy.last = now, now
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(gpuCollector{ep}); err != nil {
		return nil, err
	}
	return &metricsHandler{registry: reg}, nil
}
