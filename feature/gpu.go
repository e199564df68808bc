package feature

import (
	"fmt"
	"strconv"

	"tokscope/stats"
)

// GPU telemetry (--gpu-metrics) in the summaries: JSON "gpu" per endpoint (absent without a
// GPU exporter, as "slo" and "cost" are without objectives or a price), the gpu_ CSV columns
// when an endpoint has one, a line and three rows in the table.

// jsonGPU is docs/outputs.md's "gpu" object; beyond the contract's four keys it says what the
// figure of tokens per joule rests on. Before a scrape answered, every figure is null (a
// count of 0 GPUs or a window of 0 s would read as measured): only "scrapes" and "note" say.
// gpuFeature: "gpu" and its columns with a GPU exporter, the table's GPU line, and its rows in
// a run where a GPU was scraped.
func gpuFeature() Feature {
	return Feature{
		Name:   "gpu",
		JSONAt: JSONMiddle,
		JSON: func(e *stats.EndpointStats) []Member {
			if j := gpuJSON(e); j != nil {
				return []Member{{"gpu", j}}
			}
			return nil
		},
		CSVHeader: func(snap *stats.Snapshot) []string {
			if !AnyEndpoint(snap, hasGPU) {
				return nil
			}
			return gpuCSVHeader()
		},
		CSV: func(snap *stats.Snapshot, e *stats.EndpointStats) []string {
			if !AnyEndpoint(snap, hasGPU) {
				return nil
			}
			return gpuCSV(e)
		},
		LinesAt: LinesMid,
		Lines:   func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return Line(GPULine(e)) },
		RowsAt:  RowsEnd,
		Rows: func(snap *stats.Snapshot, e *stats.EndpointStats) []TableRow {
			if !AnyEndpoint(snap, func(e *stats.EndpointStats) bool { return e.GPU != nil && e.GPU.Scrapes > 0 }) {
				return nil
			}
			return gpuRows(e)
		},
		Section: gpuSection,
		Card:    &Card{Has: func(e *stats.EndpointStats) bool { return e.GPU != nil }, Forms: gpuForms},
	}
}

func hasGPU(e *stats.EndpointStats) bool { return e.GPU != nil }

type jsonGPU struct {
	PowerW         *Dist   `json:"power_w"`
	Util           *Dist   `json:"util"`
	MemoryUsedMiB  *Dist   `json:"memory_used_mib"`
	TokensPerJoule *Number `json:"tokens_per_joule"`
	GPUs           *int    `json:"gpus"`
	GPUModel       *string `json:"gpu_model"`
	Scrapes        int     `json:"scrapes"`
	EnergyJ        *Number `json:"energy_j"`       // the window's energy
	Tokens         *Number `json:"tokens"`         // output tokens that arrived in the window; null without one
	WindowS        *Number `json:"window_s"`       // the window's length; null without one
	EnergyFrom     *string `json:"energy_from"`    // "counter" or "power" (integrated); null without energy
	Note           string  `json:"note,omitempty"` // the latest scrape's, when it failed
}

func gpuJSON(e *stats.EndpointStats) *jsonGPU {
	g := e.GPU
	if g == nil {
		return nil
	}
	j := &jsonGPU{Scrapes: g.Scrapes, Note: g.Note}
	if g.Scrapes == 0 {
		return j
	}
	j.PowerW, j.Util, j.MemoryUsedMiB = ToDist(g.PowerW), ToDist(g.Util), ToDist(g.MemoryUsedMiB)
	j.TokensPerJoule = NumberPtr(g.TokensPerJoule.V, g.TokensPerJoule.OK)
	gpus := g.Latest.GPUs
	j.GPUs = &gpus
	if g.Latest.Model != "" {
		m := g.Latest.Model
		j.GPUModel = &m
	}
	j.EnergyJ = NumberPtr(g.EnergyJ, g.Window > 0)
	j.Tokens, j.WindowS = NumberPtr(g.Tokens, g.Window > 0), NumberPtr(g.Window.Seconds(), g.Window > 0)
	if g.Window > 0 {
		from := energyFrom(g)
		j.EnergyFrom = &from
	}
	return j
}

func energyFrom(g *stats.GPUStats) string {
	if g.FromCounter {
		return "counter"
	}
	return "power"
}

func gpuCSVHeader() []string {
	var h []string
	for _, k := range []string{"gpu_power_w", "gpu_util", "gpu_memory_used_mib"} {
		for _, s := range TableColumns {
			h = append(h, k+"_"+s)
		}
	}
	return append(h, "gpu_tokens_per_joule", "gpu_energy_j", "gpu_count")
}

func gpuCSV(e *stats.EndpointStats) []string {
	g := e.GPU
	if g == nil || g.Scrapes == 0 {
		return make([]string, len(gpuCSVHeader()))
	}
	var row []string
	for _, d := range []stats.Dist{g.PowerW, g.Util, g.MemoryUsedMiB} {
		for _, v := range []float64{d.P50, d.P90, d.P99, d.Mean, d.Min, d.Max} {
			row = append(row, Cell(v, d.Count > 0))
		}
	}
	return append(row, Cell(g.TokensPerJoule.V, g.TokensPerJoule.OK), Cell(g.EnergyJ, g.Window > 0), strconv.Itoa(g.Latest.GPUs))
}

// GPULine is the table's GPU line: the GPUs, tokens per joule and the energy it rests on; the
// note when nothing was read. "" without a GPU exporter.
func GPULine(e *stats.EndpointStats) string {
	g := e.GPU
	switch {
	case g == nil:
		return ""
	case g.Scrapes == 0 && g.Note == "":
		return "gpu metrics: no scrape answered"
	case g.Scrapes == 0:
		return "gpu metrics: " + g.Note
	}
	line := fmt.Sprintf("gpu %d×", g.Latest.GPUs)
	if g.Latest.Model != "" {
		line += " " + g.Latest.Model
	}
	line += fmt.Sprintf("  %d scrapes", g.Scrapes)
	if g.TokensPerJoule.OK {
		line += fmt.Sprintf("  %s tok/J (%.0f tokens over %.0f J, %s)", TableNumber(g.TokensPerJoule.V),
			g.Tokens, g.EnergyJ, energyFrom(g))
	}
	if g.State != 0 && g.Note != "" {
		line += "  (last scrape: " + g.Note + ")"
	}
	return line
}

// gpuRows are the table's rows of GPU distributions over scrapes; — without a GPU scrape.
func gpuRows(e *stats.EndpointStats) []TableRow {
	g := e.GPU
	if g == nil || g.Scrapes == 0 {
		g = &stats.GPUStats{}
	}
	return []TableRow{
		Row("gpu power W", g.PowerW),
		Row("gpu util %", g.Util),
		Row("gpu memory MiB", g.MemoryUsedMiB),
	}
}

// gpuSection is the report's part on the endpoints' GPUs (--gpu-metrics): power and
// utilisation over the run, and a table with tokens per joule and the energy it rests on.
// It has no data, and is left out, when no endpoint had a GPU exporter.
func gpuSection(r *Report) Section {
	snap := r.Snap
	sec := Section{
		ID: "gpu", Title: "GPUs and energy",
		Intro: "What each endpoint's NVIDIA dcgm-exporter reported, scraped once a second: power and utilisation of its GPUs " +
			"(several GPUs add up; utilisation is their mean), and tokens per joule — the output tokens that arrived between " +
			"the first and the last scrape over the energy the GPUs used meanwhile (their energy counter, else power integrated).",
	}
	series := []TimeSeries{
		{ID: "gpu-power", Title: "GPU power", YLabel: "W (all GPUs)"},
		{ID: "gpu-util", Title: "GPU utilisation", YLabel: "% (mean of the GPUs)"},
	}
	for i := range series {
		series[i].Points = map[string][]TimePoint{}
	}
	table := &SectionTable{Header: []string{"endpoint", "GPUs", "scrapes", "power W p50 / max", "util % p50 / max",
		"memory MiB p50", "energy J", "tokens", "tokens per joule"}}
	eps := byName(snap)
	for _, e := range eps {
		g := e.GPU
		if g == nil || g.Scrapes == 0 {
			continue
		}
		for _, p := range g.History {
			if p.PowerW.OK {
				series[0].Points[e.Name] = append(series[0].Points[e.Name], TimePoint{At: p.At, Value: p.PowerW.V})
			}
			if p.Util.OK {
				series[1].Points[e.Name] = append(series[1].Points[e.Name], TimePoint{At: p.At, Value: p.Util.V})
			}
		}
		table.Rows = append(table.Rows, gpuRow(e.Name, g))
	}
	return sec.With(series, table)
}

func gpuRow(name string, g *stats.GPUStats) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	pair := func(d stats.Dist) string {
		if d.Count == 0 {
			return "—"
		}
		return f(d.P50) + " / " + f(d.Max)
	}
	gpus := strconv.Itoa(g.Latest.GPUs)
	if g.Latest.Model != "" {
		gpus += " × " + g.Latest.Model
	}
	mem, energy, tpj := "—", "—", "—"
	if g.MemoryUsedMiB.Count > 0 {
		mem = f(g.MemoryUsedMiB.P50)
	}
	if g.Window > 0 {
		from := "counter"
		if !g.FromCounter {
			from = "power integrated"
		}
		energy = fmt.Sprintf("%s (%s, over %.0f s)", f(g.EnergyJ), from, g.Window.Seconds())
	}
	if g.TokensPerJoule.OK {
		tpj = strconv.FormatFloat(g.TokensPerJoule.V, 'f', 3, 64)
	}
	return []string{name, gpus, strconv.Itoa(g.Scrapes), pair(g.PowerW), pair(g.Util), mem, energy, f(g.Tokens), tpj}
}

// gpuForms are the card's line of its GPUs (--gpu-metrics): watts and utilisation of the
// latest scrape and tokens per joule over the run, "gpu 612 W · util 97% · 1.52 tok/J",
// shortened until it fits, or its quiet note when there is no reading.
func gpuForms(e *stats.EndpointStats) []Form {
	g := e.GPU
	if g.Scrapes == 0 || g.State != 0 && g.Note != "" {
		note := g.Note
		if note == "" {
			note = "waiting for the first scrape"
		}
		return []Form{{{Role: Faint, Text: "gpu metrics: " + OneLine(note)}}}
	}
	L, V, U, F := In(Label), In(Value), In(Unit), In(Faint)
	watts, util, tpj := Dash, Dash, Dash
	if r := g.Latest; r.PowerW.OK {
		watts = strconv.FormatFloat(r.PowerW.V, 'f', 0, 64)
	}
	if r := g.Latest; r.Util.OK {
		util = strconv.FormatFloat(r.Util.V, 'f', 0, 64) + "%"
	}
	if g.TokensPerJoule.OK {
		tpj = perJoule(g.TokensPerJoule.V)
	}
	return []Form{
		Join(L("gpu "), V(watts), U(" W"), F(" · "), L("util "), V(util), F(" · "), V(tpj), U(" tok/J")),
		Join(L("gpu "), V(watts), U(" W "), V(util), L(" "), V(tpj), U(" tok/J")),
		Join(L("gpu "), V(watts), U(" W "), V(tpj), U(" tok/J")),
	}
}

// perJoule is tokens per joule with three significant figures down to 0.01.
func perJoule(v float64) string {
	switch {
	case !finite(v):
		return Dash
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 0.01:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}
