package servermetrics

import (
	"bytes"
	"context"
	"math"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// GPU telemetry: an NVIDIA dcgm-exporter (or compatible) /metrics scraped beside the server's
// own (--gpu-metrics, config gpu_metrics:). Its Updates travel on the same channel as the
// server's, with Source SourceGPU and the figures in GPU.

// Source says what an Update reports on.
type Source int

const (
	// SourceServer: the inference server's own /metrics (Reading).
	SourceServer Source = iota
	// SourceGPU: a dcgm-exporter's /metrics (GPU).
	SourceGPU
)

// The dcgm-exporter families read (etc/default-counters.csv of NVIDIA/dcgm-exporter).
const (
	dcgmPower  = "DCGM_FI_DEV_POWER_USAGE"              // gauge, W
	dcgmEnergy = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" // counter, mJ since boot
	dcgmUtil   = "DCGM_FI_DEV_GPU_UTIL"                 // gauge, %
	dcgmFBUsed = "DCGM_FI_DEV_FB_USED"                  // gauge, MiB
)

// dcgmBlank is where DCGM's "blank" sentinels begin (DCGM_INT64_BLANK = 0x7ffffffffffffff0 and
// above: a field the GPU does not support, e.g. 9223372036854775794): never a figure.
const dcgmBlank = 9.2e18

// GPUReading is the GPUs behind one exporter at one scrape. Several GPUs add up (power,
// energy, memory); utilisation is their mean, so 100 % means every GPU busy. Its JSON is the
// figures of a --record file's GPU line (package record, which writes At and Span itself).
type GPUReading struct {
	At    time.Time `json:"-"`                   // when the scrape's response arrived
	GPUs  int       `json:"gpus,omitempty"`      // devices seen (by UUID, else by the gpu label)
	Model string    `json:"gpu_model,omitempty"` // modelName, "" when absent; "mixed" when the GPUs differ
	Host  string    `json:"host,omitempty"`      // Hostname, likewise

	PowerW        Value `json:"power_w"`         // W, summed over the GPUs
	Util          Value `json:"util"`            // %, the GPUs' mean
	MemoryUsedMiB Value `json:"memory_used_mib"` // MiB, summed
	EnergyMJ      Value `json:"energy_mj"`       // the energy counter summed over the GPUs (mJ since each GPU's boot)

	// Since the previous reading: the energy used, in joules, over Span — the counter's
	// increase where the exporter has it (FromCounter), else the power integrated over the
	// span (trapezoid of the two readings). Not OK on the first reading and after a reset.
	EnergyJ     Value         `json:"energy_j"`
	Span        time.Duration `json:"-"`
	FromCounter bool          `json:"from_counter"`
}

// gpuInstant is what one exposition says about the GPUs, before the energy becomes a delta.
type gpuInstant struct {
	gpus                  int
	model, host           string
	power, util, fb, mj   Value
	energyGPUs, powerGPUs int
}

// extractGPU reads the dcgm families of an exposition; ok is false when it holds none.
func extractGPU(fams map[string]*dto.MetricFamily) (in gpuInstant, ok bool) {
	devices := map[string]bool{}
	in.power, in.powerGPUs = gpuFamily(fams[dcgmPower], false, devices)
	in.mj, in.energyGPUs = gpuFamily(fams[dcgmEnergy], false, devices)
	in.util, _ = gpuFamily(fams[dcgmUtil], true, devices)
	in.fb, _ = gpuFamily(fams[dcgmFBUsed], false, devices)
	if !in.power.OK && !in.mj.OK && !in.util.OK && !in.fb.OK {
		return in, false
	}
	in.gpus = len(devices)
	for _, name := range []string{dcgmPower, dcgmEnergy, dcgmUtil, dcgmFBUsed} {
		for _, m := range fams[name].GetMetric() {
			in.model = agree(in.model, m, "modelName")
			in.host = agree(in.host, m, "Hostname")
		}
	}
	// A counter missing on some GPUs would undercount the energy: integrate the power instead.
	if in.energyGPUs != in.powerGPUs && in.power.OK {
		in.mj = Value{}
	}
	return in, true
}

// agree keeps a label value while every series agrees on it; "mixed" once they differ.
func agree(cur string, m *dto.Metric, label string) string {
	v, ok := labelValue(m, label)
	switch {
	case !ok || v == "" || v == cur:
		return cur
	case cur == "":
		return v
	}
	return "mixed"
}

// deviceKey names the GPU a series is of: its UUID, else its gpu index.
func deviceKey(m *dto.Metric) string {
	if u, ok := labelValue(m, "UUID"); ok && u != "" {
		return "uuid:" + u
	}
	g, _ := labelValue(m, "gpu")
	return "gpu:" + g
}

// gpuFamily adds up (or averages, mean) one family over the GPUs; each device found is put in
// devices. Under MIG, dcgm-exporter writes a series per GPU instance (label GPU_I_ID) beside the
// whole GPU's: a GPU's whole series is taken when it has one, else its instances are summed.
// It returns the figure and how many GPUs gave it.
func gpuFamily(f *dto.MetricFamily, mean bool, devices map[string]bool) (Value, int) {
	whole := map[string]float64{}
	parts := map[string]float64{}
	for _, m := range f.GetMetric() {
		x, ok := Scalar(m)
		if !ok || x < 0 || x >= dcgmBlank {
			continue
		}
		key := deviceKey(m)
		if id, _ := labelValue(m, "GPU_I_ID"); id != "" {
			parts[key] += x
			continue
		}
		whole[key] += x
	}
	for k, v := range parts {
		if _, ok := whole[k]; !ok {
			whole[k] = v
		}
	}
	if len(whole) == 0 {
		return Value{}, 0
	}
	var sum float64
	for k, v := range whole {
		sum += v
		devices[k] = true
	}
	if mean {
		sum /= float64(len(whole))
	}
	return some(sum), len(whole)
}

// gpuTracker turns one exporter's successive instants into GPUReadings.
type gpuTracker struct {
	lastAt    time.Time
	lastPower Value
	lastMJ    Value
}

func (t *gpuTracker) reading(at time.Time, in gpuInstant) GPUReading {
	r := GPUReading{At: at, GPUs: in.gpus, Model: in.model, Host: in.host,
		PowerW: in.power, Util: in.util, MemoryUsedMiB: in.fb, EnergyMJ: in.mj}
	if !t.lastAt.IsZero() && at.After(t.lastAt) {
		span := at.Sub(t.lastAt)
		switch {
		case in.mj.OK && t.lastMJ.OK:
			// A counter that went down is a reset (a GPU or the exporter restarted, a GPU
			// left): the span has no energy, and the next one starts again.
			if d := in.mj.V - t.lastMJ.V; d >= 0 {
				r.EnergyJ, r.Span, r.FromCounter = some(d/1000), span, true
			}
		case !in.mj.OK && in.power.OK && t.lastPower.OK:
			r.EnergyJ, r.Span = some((in.power.V+t.lastPower.V)/2*span.Seconds()), span
		}
	}
	if math.IsNaN(r.EnergyJ.V) || math.IsInf(r.EnergyJ.V, 0) {
		r.EnergyJ = Value{}
	}
	t.lastAt, t.lastPower, t.lastMJ = at, in.power, in.mj
	return r
}

// scrapeGPU fetches and reads one GPU exporter once, and returns the same reading for each of
// its endpoints. A failure is a quiet note, as for the server's metrics.
func (s *Scraper) scrapeGPU(ctx context.Context, t *target, st *targetState) []Update {
	body, err := s.get(ctx, t, t.url, st)
	at := time.Now()
	ups := make([]Update, len(t.eps))
	note, state := "", StateOK
	var r GPUReading
	if err != nil {
		note, state = err.Error(), StateUnavailable
	} else if fams, err := parse(bytes.NewReader(body)); err != nil {
		note, state = "unreadable exposition", StateUnrecognised
	} else if in, ok := extractGPU(fams); !ok {
		note, state = "not recognised (no DCGM_FI_DEV_ power, energy, utilisation or memory families)", StateUnrecognised
	} else {
		r = st.gpu.reading(at, in)
	}
	if state == StateOK {
		st.failures = 0
	} else {
		st.failures++
	}
	for k, i := range t.eps {
		ups[k] = Update{Endpoint: i, Source: SourceGPU, State: state, GPU: r, Note: note}
	}
	return ups
}

// lastGPUTimeout bounds the scrape at the end of a run.
const lastGPUTimeout = time.Second

// lastGPUScrape reads a GPU exporter once more when the run ends, so that the energy window
// reaches the run's last tokens (a run shorter than the interval has a window at all). Its
// Updates go out only where the channel has room: nobody may be reading any more.
func (s *Scraper) lastGPUScrape(ctx context.Context, t *target, st *targetState) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(s.opts.Timeout, lastGPUTimeout))
	defer cancel()
	for _, u := range s.scrapeGPU(ctx, t, st) {
		select {
		case s.out <- u:
		default:
		}
	}
}
