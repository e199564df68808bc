package record

import (
	"encoding/json"

	"tokscope/servermetrics"
)

// gpuType is the "type" of a GPU line: one scrape of an endpoint's GPU exporter
// (--gpu-metrics).
const gpuType = "gpu"

// GPULine is one scrape of an endpoint's GPUs (a servermetrics.Update of SourceGPU) as one
// line of a --record file, so that a replay shows the live run's "gpu" figures, tokens per
// joule included: the energy since the previous scrape is kept as the live run read it.
type GPULine struct {
	scrape
	*servermetrics.GPUReading // only for a scrape that worked
	// Since the previous scrape: energy_j was used over span_ms (GPUReading.Span); absent on
	// the first scrape.
	SpanMS *float64 `json:"span_ms,omitempty"`
}

// GPULineOf is the line of one GPU scrape of the endpoint named name.
func GPULineOf(name, model string, u servermetrics.Update) GPULine {
	l := GPULine{scrape: scrapeOf(gpuType, name, model, u.GPU.At, u)}
	if u.State == servermetrics.StateOK {
		g := u.GPU
		l.GPUReading, l.SpanMS = &g, spanMS(u.GPU.Span)
	}
	return l
}

// Update is the GPU scrape the line recorded, for endpoint index ep.
func (l *GPULine) Update(ep int) servermetrics.Update {
	u := l.update(ep)
	u.Source = servermetrics.SourceGPU
	if l.GPUReading != nil {
		u.GPU = *l.GPUReading
	}
	u.GPU.At, u.GPU.Span = l.scrape.At, fromSpanMS(l.SpanMS)
	return u
}

func (f *File) addGPU(line []byte) error {
	var l GPULine
	if err := json.Unmarshal(line, &l); err != nil {
		return err
	}
	if l.State != stateNames[servermetrics.StateOK] { // as ServerLine.normalise
		l.GPUReading = nil
	}
	if l.SpanMS != nil && *l.SpanMS <= 0 {
		l.SpanMS = nil
	}
	f.GPU = append(f.GPU, l)
	return nil
}

// RecordedGPU is the GPUMetrics a replayed endpoint gets when its record holds GPU scrapes:
// not a URL (none is recorded, nothing is scraped), only the mark that the endpoint had a GPU
// exporter, so that its statistics place the tokens of its requests in the energy window.
const RecordedGPU = "recorded"
