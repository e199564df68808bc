package report

import (
	"fmt"
	"strconv"

	"tokscope/stats"
)

// GPUSection is the report's part on the endpoints' GPUs (--gpu-metrics): power and
// utilisation over the run, and a table with tokens per joule and the energy it rests on.
// It has no data, and is left out, when no endpoint had a GPU exporter.
func GPUSection(snap *stats.Snapshot) Section {
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
	return sec.with(series, table)
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
