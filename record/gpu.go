package record

import (
	"encoding/json"
	"fmt"

	"tokscope/servermetrics"
)

// gpuType is the "type" of a GPU line: one scrape of an endpoint's GPU exporter
// (--gpu-metrics). Like a server line, its "stream" makes an older reader skip it.
const gpuType = "gpu"

// GPULine is one scrape of an endpoint's GPUs (a servermetrics.Update of SourceGPU) as one
// line of a --record file, so that a replay shows the live run's "gpu" figures, tokens per
// joule included: the energy since the previous scrape is kept as the live run read it.
type GPULine struct {
	scrape
	// Shard: the run's shard (--shard), written by a sharded run only (merge.go).
	Shard

	GPUs          int      `json:"gpus,omitempty"`
	GPUModel      string   `json:"gpu_model,omitempty"`
	Host          string   `json:"host,omitempty"`
	PowerW        *float64 `json:"power_w"`
	Util          *float64 `json:"util"`
	MemoryUsedMiB *float64 `json:"memory_used_mib"`
	EnergyMJ      *float64 `json:"energy_mj"`
	// Since the previous scrape: the energy used (J) over span_ms, and whether it came from the
	// exporter's counter (else power integrated).
	EnergyJ     *float64 `json:"energy_j"`
	SpanMS      float64  `json:"span_ms"`
	FromCounter bool     `json:"from_counter"`
}

// GPULineOf is the line of one GPU scrape of the endpoint named name.
func GPULineOf(name, model string, u servermetrics.Update) GPULine {
	r := &u.GPU
	l := GPULine{scrape: scrapeOf(gpuType, name, model, r.At, u)}
	if u.State != servermetrics.StateOK {
		return l
	}
	l.GPUs, l.GPUModel, l.Host = r.GPUs, r.Model, r.Host
	l.PowerW, l.Util, l.MemoryUsedMiB, l.EnergyMJ = optValue(r.PowerW), optValue(r.Util), optValue(r.MemoryUsedMiB), optValue(r.EnergyMJ)
	l.EnergyJ, l.SpanMS, l.FromCounter = optValue(r.EnergyJ), durMS(r.Span), r.FromCounter
	return l
}

// Update is the GPU scrape the line recorded, for endpoint index ep.
func (l *GPULine) Update(ep int) servermetrics.Update {
	u := l.update(ep)
	u.Source = servermetrics.SourceGPU
	u.GPU.At = l.At
	if u.State != servermetrics.StateOK {
		return u
	}
	u.GPU = servermetrics.GPUReading{
		At: l.At, GPUs: l.GPUs, Model: l.GPUModel, Host: l.Host,
		PowerW: fromValue(l.PowerW), Util: fromValue(l.Util), MemoryUsedMiB: fromValue(l.MemoryUsedMiB),
		EnergyMJ: fromValue(l.EnergyMJ), EnergyJ: fromValue(l.EnergyJ), Span: msDur(l.SpanMS), FromCounter: l.FromCounter,
	}
	return u
}

// writeGPU appends one GPU scrape as one line.
func (r *Recorder) writeGPU(name, model string, u servermetrics.Update) error {
	l := GPULineOf(name, model, u)
	l.Shard = r.shard
	line, err := marshalLine(&l)
	if err != nil {
		return fmt.Errorf("record gpu %s: %w", name, err)
	}
	return r.writeLine(line)
}

func (f *File) addGPU(line []byte) error {
	var l GPULine
	if err := json.Unmarshal(line, &l); err != nil {
		return err
	}
	f.GPU = append(f.GPU, l)
	return nil
}

// RecordedGPU is the GPUMetrics a replayed endpoint gets when its record holds GPU scrapes:
// not a URL (none is recorded, nothing is scraped), only the mark that the endpoint had a GPU
// exporter, so that its statistics place the tokens of its requests in the energy window.
const RecordedGPU = "recorded"
